package fold

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/openai"
	"pgregory.net/rapid"
)

// incWire is one wire format with its whole-body validator and a conversation's incremental one.
type incWire struct {
	name  string
	enc   func(provider.Request) ([]byte, error)
	whole func([]byte) *provider.Violation
	inc   provider.Validator
}

func incWires() []*incWire {
	return []*incWire{
		{"anthropic", anthropic.Encode, anthropic.Validate, anthropic.NewValidator()},
		{"chat", openai.EncodeChat, openai.ValidateChat, openai.NewChatValidator()},
		{"responses", openai.EncodeResponses, openai.ValidateResponses, openai.NewResponsesValidator()},
	}
}

// swaps are replacements a mutation makes at one occurrence: each turns a valid request into one
// a validator may refuse for a rule about how messages relate, or back.
var swaps = [][2]string{
	{`"user"`, `"assistant"`}, {`"assistant"`, `"user"`}, {`"tool_use"`, `"tool_result"`},
	{`"tool_result"`, `"text"`}, {`"tool"`, `"user"`}, {`"function_call"`, `"function_call_output"`},
	{`"function_call_output"`, `"message"`}, {`"reasoning"`, `"function_call"`}, {`"text":"`, `"text":" `},
	{`"id":"`, `"id":"x`}, {`"call_id":"`, `"call_id":"x`}, {`"tool_use_id":"`, `"tool_use_id":"x`},
	{`"tool_call_id":"`, `"tool_call_id":"x`}, {`{"type":"ephemeral"}`, `null`}, {`"stream":true`, `"stream":true,"cache_control":{}`},
	{`"content":[`, `"content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}},`},
	{`},{`, `},null,{`}, {`},{`, `},`}, {`"messages":[`, `"messages":[{"role":"user","content":"hi"},`},
	{`"input":[`, `"input":[{"type":"reasoning","id":"rs","summary":[]},`}, {`"model":`, `"Messages":[],"model":`},
}

// mutate returns a copy of body changed at one place, chosen mostly near the end, where
// successive requests differ.
func mutate(t *rapid.T, body []byte) []byte {
	n := len(body)
	near := func(label string) int {
		if rapid.Bool().Draw(t, label+"-anywhere") {
			return rapid.IntRange(0, n).Draw(t, label)
		}
		return n - rapid.IntRange(0, min(n, 600)).Draw(t, label)
	}
	out := bytes.Clone(body)
	switch rapid.IntRange(0, 4).Draw(t, "mutation") {
	case 0: // one byte changed
		if i := near("at"); i < n {
			out[i] = rapid.SampledFrom([]byte(`{}[]",:\ a0n`)).Draw(t, "byte")
		}
	case 1: // a run cut out
		i := near("from")
		j := min(n, i+rapid.IntRange(1, 80).Draw(t, "length"))
		out = append(out[:i:i], body[j:]...)
	case 2: // a run repeated elsewhere
		i := near("from")
		j := min(n, i+rapid.IntRange(1, 200).Draw(t, "length"))
		k := near("to")
		out = append(append(append([]byte{}, body[:k]...), body[i:j]...), body[k:]...)
	case 3: // cut short
		out = out[:near("end")]
	default: // one token swapped
		s := rapid.SampledFrom(swaps).Draw(t, "swap")
		idx := allIndices(body, []byte(s[0]))
		if len(idx) == 0 {
			return out
		}
		i := idx[len(idx)-1-rapid.IntRange(0, len(idx)-1).Draw(t, "occurrence")]
		out = append(append(append([]byte{}, body[:i]...), s[1]...), body[i+len(s[0]):]...)
	}
	return out
}

func allIndices(b, sub []byte) []int {
	var out []int
	for i := 0; ; {
		k := bytes.Index(b[i:], sub)
		if k < 0 {
			return out
		}
		out = append(out, i+k)
		i += k + 1
	}
}

// TestIncrementalEqualsWhole checks that a conversation's incremental validator returns exactly
// what the whole-body validator returns, on every request the fold can render in every wire
// format along a live session of any shape (requests owed tool results included, which are
// refused), with the settings outside the messages changing now and then, and on those requests
// mutated: bytes changed, cut, repeated or swapped, mostly near the end.
func TestIncrementalEqualsWhole(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		a := &agent{t: rt, l: newLog(rt)}
		wires := incWires()
		tools := []provider.Tool{{Name: "bash", Description: "run", Schema: json.RawMessage(`{"type":"object"}`)}}
		settings := func() (int, int, string) {
			return rapid.SampledFrom([]int{0, 2048}).Draw(rt, "max_tokens"), rapid.SampledFrom([]int{0, 1024, 4096}).Draw(rt, "thinking"),
				rapid.SampledFrom([]string{"", "low"}).Draw(rt, "effort")
		}
		maxTokens, thinking, effort := settings()
		for i, n := 0, rapid.IntRange(1, 60).Draw(rt, "steps"); i < n; i++ {
			a.step()
			if rapid.IntRange(0, 9).Draw(rt, "resettle") == 0 {
				maxTokens, thinking, effort = settings()
			}
			req := provider.Request{Model: "m", System: a.l.s.System(), Messages: a.l.s.Context(), Tools: tools,
				MaxTokens: maxTokens, Thinking: thinking, Effort: effort}
			if len(req.Messages) == 0 {
				continue
			}
			for _, w := range wires {
				body, err := w.enc(req)
				if err != nil {
					continue
				}
				check := func(what string, body []byte) {
					want := w.whole(body)
					if got := w.inc.Validate(body); !reflect.DeepEqual(got, want) {
						rt.Fatalf("%s, step %d, %s: incremental verdict %v, whole %v\n%s", w.name, i, what, got, want, body)
					}
				}
				check("rendered", body)
				if rapid.IntRange(0, 3).Draw(rt, "mutate") == 0 {
					check("mutated", mutate(rt, body))
				}
			}
		}
	})
}
