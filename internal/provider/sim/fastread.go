package sim

import (
	"bytes"
	"encoding/json"
	"slices"
)

// The simulator reads every request it serves (view), after its validator accepted it. Decoding
// a whole long conversation for each request costs what the conversation costs, so readAnthropic
// splits the body into its raw parts with a plain scan, decodes the small top-level fields, and
// folds into the view only the messages the conversation's last request did not have: the view's
// reading of the messages is a fold, message by message, so the same messages in the same order
// (byte for byte) leave the same reading. It agrees with readAnthropicWhole, which decodes
// everything (a property test holds them equal), and falls back to it for a body it cannot split
// plainly.

// readCache is what the reading of a conversation's last request leaves for the next: its
// messages, raw, and the view's reading of them after each of the last few prefixes of them
// (marks): a client that marks its last messages for caching sends those again changed, the
// marks moved on, so the next reading resumes from before them. fields and items, when set, are
// the split of the body about to be read (by Server.recall, which splits it to find its
// conversation).
type readCache struct {
	msgs  [][]byte
	marks []readMark // ascending n, the last at len(msgs)

	fields map[string][]byte
	items  [][]byte
}

// readMark is the view's reading of a conversation's first n messages.
type readMark struct {
	n int
	v view
}

// keptMarks is how many readings a readCache keeps: after all the messages and after each of the
// last three prefixes (rein marks its last two messages for caching).
const keptMarks = 4

// readAnthropic reads an Anthropic request, c being what its conversation's last reading left
// (nil keeps nothing): see above.
func readAnthropic(body []byte, c *readCache) view {
	var f map[string][]byte
	var msgs [][]byte
	if c != nil && c.fields != nil {
		f, msgs = c.fields, c.items
		c.fields, c.items = nil, nil
	} else {
		cb, ok := splitBody(body, "messages")
		if !ok {
			return readAnthropicWhole(body)
		}
		f, msgs = cb.parts()
	}
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Thinking *struct {
			Type string `json:"type"`
		} `json:"thinking"`
	}
	_ = json.Unmarshal(f["model"], &req.Model)
	_ = json.Unmarshal(f["stream"], &req.Stream)
	_ = json.Unmarshal(f["thinking"], &req.Thinking)
	var v view
	from := 0
	if c != nil {
		same := 0
		for same < len(c.msgs) && same < len(msgs) && bytes.Equal(c.msgs[same], msgs[same]) {
			same++
		}
		for i := len(c.marks) - 1; i >= 0; i-- {
			if c.marks[i].n <= same {
				v, from = c.marks[i].v, c.marks[i].n
				v.results = slices.Clip(v.results) // appends must not reach a kept reading's array
				break
			}
		}
	}
	var marks []readMark
	keepFrom := len(msgs) - keptMarks + 1
	if c != nil {
		for _, m := range c.marks {
			if m.n <= from && m.n >= keepFrom {
				marks = append(marks, m)
			}
		}
	}
	for i, raw := range msgs[from:] {
		if n := from + i; c != nil && n >= keepFrom && (len(marks) == 0 || marks[len(marks)-1].n < n) {
			marks = append(marks, readMark{n, v})
		}
		var m anthropicMessage
		_ = json.Unmarshal(raw, &m)
		v.anthropic(m)
	}
	if c != nil {
		if len(marks) == 0 || marks[len(marks)-1].n < len(msgs) {
			marks = append(marks, readMark{len(msgs), v})
		}
		c.msgs, c.marks = msgs, marks
	}
	v.model, v.stream, v.estimate = req.Model, req.Stream, estimate(f["system"], f["messages"], f["tools"])
	v.thinking = req.Thinking != nil && req.Thinking.Type != "" && req.Thinking.Type != "disabled"
	v.signs = true
	v.tools = functionNames(f["tools"])
	return v
}
