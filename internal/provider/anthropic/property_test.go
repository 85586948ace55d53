package anthropic

import (
	"fmt"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"pgregory.net/rapid"
)

// texts are the strings a model or a person may produce, the awkward ones included.
var texts = []string{"fix it", "", " ", "\n\n", "done. ", "line\n", "é 🙂", "a\tb\n  "}

// TestEncodeAdmissibleIsValid checks that every conversation admission can commit (DESIGN §6)
// encodes to a body Validate accepts: any assistant parts, whitespace and empty text anywhere,
// unsigned thinking from another provider, consecutive same-role messages, tool results followed
// by steering, and a final assistant message ending in whitespace.
func TestEncodeAdmissibleIsValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		req := provider.Request{Model: "claude-test-1", System: rapid.SampledFrom([]string{"", "be brief"}).Draw(t, "system")}
		req.Messages = append(req.Messages, user(text("start")))
		ids := 0
		for turn, n := 0, rapid.IntRange(0, 8).Draw(t, "turns"); turn < n; turn++ {
			var parts []record.Part
			var calls []string
			for k, m := 0, rapid.IntRange(0, 4).Draw(t, "parts"); k < m; k++ {
				switch rapid.IntRange(0, 4).Draw(t, "kind") {
				case 0:
					parts = append(parts, text(rapid.SampledFrom(texts).Draw(t, "text")))
				case 1:
					sig := rapid.SampledFrom([]string{"", "sig"}).Draw(t, "signature")
					parts = append(parts, record.Part{Type: record.PartThinking, Text: rapid.SampledFrom(texts).Draw(t, "thinking"), Signature: sig})
				case 2:
					parts = append(parts, record.Part{Type: record.PartRedacted, Data: "opaque"})
				default:
					ids++
					id := fmt.Sprintf("toolu_%d", ids)
					calls = append(calls, id)
					parts = append(parts, call(id, "ls", rapid.SampledFrom([]string{"", "{}", `{"a": [1, "x"]}`}).Draw(t, "args")))
				}
			}
			if !admissible(parts) {
				parts = append(parts, text("(no reply)")) // admission's stub, DESIGN §6.2
			}
			req.Messages = append(req.Messages, assistant(parts...))
			if len(calls) > 0 {
				var results []record.Part
				for _, id := range calls {
					results = append(results, result(id, rapid.SampledFrom(texts).Draw(t, "result"), rapid.Bool().Draw(t, "is_error")))
				}
				if rapid.Bool().Draw(t, "steering") {
					results = append(results, text("TURN: 7"))
				}
				req.Messages = append(req.Messages, user(results...))
				continue
			}
			switch rapid.IntRange(0, 2).Draw(t, "next") {
			case 0:
				req.Messages = append(req.Messages, user(text("go on")))
			case 1:
				req.Messages = append(req.Messages, user(text("go on")), user(text("and this")))
			}
		}
		body, err := Encode(req)
		if err != nil {
			t.Fatal(err)
		}
		if v := Validate(body); v != nil {
			t.Fatalf("%s: %v\n%s", v.Rule, v, body)
		}
	})
}

// admissible says whether an assistant message would be committed as it is: it has a tool call,
// non-empty text or thinking.
func admissible(parts []record.Part) bool {
	for _, p := range parts {
		if p.Type == record.PartToolCall || p.Type == record.PartThinking || p.Type == record.PartRedacted || p.Type == record.PartText && p.Text != "" {
			return true
		}
	}
	return false
}
