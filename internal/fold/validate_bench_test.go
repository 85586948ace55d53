package fold

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/openai"
	"github.com/reinhq/rein/internal/record"
)

// BenchmarkValidateTurn measures validating the request of each tool turn of a long session, as
// the agent does before every send: the whole-body validator against a conversation's
// incremental one (provider.Incremental), at 100 and 10,000 turns (with residues in place).
// Successive requests are rendered by the fold and encoded with the real encoders ahead of the
// timer, a ring of eight tool turns in a row; each iteration validates the next, so an iteration
// is one turn's validation (the ring's wrap-around, once in eight, shortens the request by seven
// turns, which the incremental validator undoes).
//
//	go test -run '^$' -bench ValidateTurn -benchmem ./internal/fold
func BenchmarkValidateTurn(b *testing.B) {
	tools := make([]provider.Tool, 10)
	for i := range tools {
		tools[i] = provider.Tool{Name: fmt.Sprintf("tool_%d", i), Description: strings.Repeat("what the tool does. ", 20),
			Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"}},"required":["path"]}`)}
	}
	wires := []struct {
		name  string
		enc   func(provider.Request) ([]byte, error)
		whole func([]byte) *provider.Violation
		inc   func() provider.Validator
	}{
		{"anthropic", anthropic.Encode, anthropic.Validate, anthropic.NewValidator},
		{"chat", openai.EncodeChat, openai.ValidateChat, openai.NewChatValidator},
		{"responses", openai.EncodeResponses, openai.ValidateResponses, openai.NewResponsesValidator},
	}
	for _, turns := range []int{100, 10000} {
		for _, w := range wires {
			const ring = 8
			var bodies [][]byte
			prepare := func(b *testing.B) {
				if bodies != nil {
					return
				}
				l := sessionOf(b, turns, turns/100)
				l.prompt("keep going")
				out := strings.Repeat("output line\n", 20)
				for i := range ring {
					id := l.s.Next()
					callID := fmt.Sprintf("b%d", i)
					l.add(&record.AssistantMessage{Turn: id, Parts: []record.Part{text("running it"), call(callID, "bash", `{"command":"make test"}`)}})
					l.add(&record.ToolResults{Results: []record.ToolResult{{CallID: callID, Content: out + Trailer(id), Outcome: record.OK}}})
					body, err := w.enc(provider.Request{Model: "m", System: l.s.System(), Messages: l.s.Context(), Tools: tools, MaxTokens: 8192})
					if err != nil {
						b.Fatal(err)
					}
					bodies = append(bodies, body)
				}
			}
			for _, how := range []string{"whole", "incremental"} {
				b.Run(fmt.Sprintf("%s/turns=%d/%s", w.name, turns, how), func(b *testing.B) {
					prepare(b)
					validate := w.whole
					if how == "incremental" {
						validate = w.inc().Validate
						validate(bodies[ring-1]) // the conversation so far, judged once
					}
					b.SetBytes(int64(len(bodies[0])))
					b.ReportAllocs()
					i := 0
					for b.Loop() {
						if v := validate(bodies[i%ring]); v != nil {
							b.Fatal(v)
						}
						i++
					}
				})
			}
		}
	}
}
