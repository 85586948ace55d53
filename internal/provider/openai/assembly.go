package openai

import (
	"encoding/json"
	"strconv"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// assembly builds a Reply from stream pieces and publishes each as a live event. Text and
// arguments are kept as byte slices while they grow and become strings once, at the end.
type assembly struct {
	reply provider.Reply
	on    func(provider.Event)
	began bool // output began: anything was said, thought or called

	bufs [][]byte // per part: the growing text of a text or thinking part, or arguments of a tool call
	done []bool   // per part: a tool call the stream confirmed complete
	// custom marks the tool calls that are free-form (a custom tool's): their text is their
	// input, recorded as the arguments {"input": text}.
	custom map[int]bool
	open   int // the text part that text is appended to, or -1
	think  int // the thinking part that reasoning is appended to, or -1
}

func newAssembly(on func(provider.Event)) assembly {
	return assembly{on: on, open: -1, think: -1}
}

func (a *assembly) emit(ev provider.Event) {
	if a.on != nil {
		a.on(ev)
	}
}

func (a *assembly) addPart(p record.Part) int {
	a.reply.Parts = append(a.reply.Parts, p)
	a.bufs = append(a.bufs, nil)
	a.done = append(a.done, false)
	return len(a.reply.Parts) - 1
}

// text appends s to the open text part, opening one after the last part if none is open.
func (a *assembly) text(s string) {
	if s == "" {
		return
	}
	a.began = true
	if a.open < 0 {
		a.think = -1
		a.open = a.addPart(record.Part{Type: record.PartText})
	}
	a.bufs[a.open] = append(a.bufs[a.open], s...)
	a.emit(provider.Event{Type: provider.TextDelta, Index: a.open, Text: s})
}

// closeText ends the open text part: the next text starts a new one.
func (a *assembly) closeText() { a.open = -1 }

// thinking appends reasoning to the open thinking part, opening one after the last part if none
// is open: reasoning that follows text or a call is a part of its own.
func (a *assembly) thinking(s string) {
	if s == "" {
		return
	}
	if a.think < 0 {
		a.startThinking()
	}
	a.thinkingAt(a.think, s)
}

// startThinking adds a thinking part, which later reasoning is appended to, and returns its index.
func (a *assembly) startThinking() int {
	a.closeText()
	a.think = a.addPart(record.Part{Type: record.PartThinking})
	return a.think
}

// thinkingAt appends s to thinking part i.
func (a *assembly) thinkingAt(i int, s string) {
	if s == "" {
		return
	}
	a.began = true
	a.bufs[i] = append(a.bufs[i], s...)
	a.emit(provider.Event{Type: provider.ThinkingDelta, Index: i, Text: s})
}

// startCall adds a tool-call part and returns its index.
func (a *assembly) startCall(id, name string) int {
	a.began = true
	a.closeText()
	a.think = -1
	i := a.addPart(record.Part{Type: record.PartToolCall, CallID: id, Name: name})
	a.emit(provider.Event{Type: provider.ToolCallStart, Index: i, CallID: id, Name: name})
	return i
}

// callArgs appends a piece of part i's arguments.
func (a *assembly) callArgs(i int, s string) {
	if s == "" {
		return
	}
	a.bufs[i] = append(a.bufs[i], s...)
	a.emit(provider.Event{Type: provider.ToolArgsDelta, Index: i, CallID: a.reply.Parts[i].CallID, Text: s})
}

// setArgs replaces part i's arguments with the stream's final word on them.
func (a *assembly) setArgs(i int, s string) {
	a.bufs[i] = append(a.bufs[i][:0], s...)
}

// hasCalls reports whether any tool call arrived.
func (a *assembly) hasCalls() bool {
	for _, p := range a.reply.Parts {
		if p.Type == record.PartToolCall {
			return true
		}
	}
	return false
}

// confirmCalls marks every tool call complete: the stream said the calls were finished.
func (a *assembly) confirmCalls() {
	for i := range a.done {
		a.done[i] = true
	}
}

// seal moves the grown text and arguments into the reply's parts.
func (a *assembly) seal() {
	for i := range a.reply.Parts {
		p := &a.reply.Parts[i]
		switch p.Type {
		case record.PartText, record.PartThinking:
			p.Text = string(a.bufs[i])
		case record.PartToolCall:
			if a.custom[i] {
				p.Args = provider.FreeformArgs(string(a.bufs[i]))
				continue
			}
			p.Args = json.RawMessage(append([]byte(nil), a.bufs[i]...))
		}
	}
}

// cutCalls lists in Incomplete every tool call the stream did not confirm whose arguments are not
// a whole JSON value: the ones a max-tokens stop or a cut stream broke off. (A prefix of a JSON
// object is never valid JSON, so valid unconfirmed arguments were received whole.) A free-form
// call's text has no such tell: unconfirmed, it is incomplete.
func (a *assembly) cutCalls() {
	for i, p := range a.reply.Parts {
		if p.Type == record.PartToolCall && !a.done[i] && (a.custom[i] || !json.Valid(a.bufs[i])) {
			a.reply.Incomplete = append(a.reply.Incomplete, i)
		}
	}
}

// usage converts OpenAI's token counts to rein's, where Input excludes cache reads.
func usage(input, output, cached int64) record.Usage {
	if cached > input {
		cached = input
	}
	return record.Usage{Input: input - cached, Output: output, CacheRead: cached}
}

// wireError is an error object as OpenAI-compatible servers send it, nested under "error" or
// flat. Code is a string (OpenAI) or a number (OpenRouter, vLLM).
type wireError struct {
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
}

// classify turns the error object into a classified stream failure. A numeric code is the HTTP
// status the server would have answered with had it not already begun streaming, so the object is
// classified as a body with that status; the failure still happened inside a stream, so Status
// stays 0. A string code (OpenAI's context_length_exceeded, rate_limit_exceeded) says more than the
// type beside it (invalid_request_error, tokens), so it is what the class is read from.
func (w wireError) classify() *provider.Error {
	if n, err := strconv.Atoi(string(w.Code)); err == nil && n >= 400 && n <= 599 {
		body, _ := json.Marshal(struct {
			Error wireError `json:"error"`
		}{w})
		e := provider.Classify(n, nil, body)
		e.Status = 0
		if e.Type == "" {
			e.Type = strconv.Itoa(n)
		}
		return e
	}
	var code string
	if json.Unmarshal(w.Code, &code) != nil || code == "" {
		code = w.Type
	}
	return provider.StreamError(code, w.Message)
}
