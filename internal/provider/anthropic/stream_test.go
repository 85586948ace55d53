package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"pgregory.net/rapid"
)

// genParts draws a message's parts from everything Encode meets: whitespace and empty text,
// signed and unsigned thinking, redacted thinking, images, tool calls with any arguments (not
// JSON too), results, and now and then a part no message can carry.
func genParts(t *rapid.T, role record.Role) []record.Part {
	parts := make([]record.Part, rapid.IntRange(0, 4).Draw(t, "parts"))
	for i := range parts {
		switch rapid.IntRange(0, 8).Draw(t, "kind") {
		case 0, 1, 2:
			parts[i] = text(rapid.SampledFrom(texts).Draw(t, "text"))
		case 3:
			parts[i] = record.Part{Type: record.PartThinking, Text: "hmm", Signature: rapid.SampledFrom([]string{"", "sig"}).Draw(t, "sig")}
		case 4:
			parts[i] = record.Part{Type: record.PartRedacted, Data: "opaque"}
		case 5:
			parts[i] = record.Part{Type: record.PartImage, MediaType: "image/png", Data: "aGk="}
		case 6:
			parts[i] = call(fmt.Sprintf("toolu_%d", i), "ls", rapid.SampledFrom([]string{"", "{}", ` { "a" : [1, "x"] } `, "{bad", "null"}).Draw(t, "args"))
		case 7:
			parts[i] = result(fmt.Sprintf("toolu_%d", i), rapid.SampledFrom(texts).Draw(t, "out"), rapid.Bool().Draw(t, "err"))
		default:
			if rapid.IntRange(0, 9).Draw(t, "odd") == 0 {
				parts[i] = record.Part{Type: "nonsense"}
			} else {
				parts[i] = text("plain")
			}
		}
	}
	return parts
}

// TestEncodeStreamingIsWhole checks that Encode, which writes all but the last messages straight
// to the body, gives exactly the bytes (or the error) of building the whole request's wire shapes
// first, for requests of any shape and length.
func TestEncodeStreamingIsWhole(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		req := provider.Request{
			Model:     "m",
			System:    rapid.SampledFrom([]string{"", "be brief"}).Draw(t, "system"),
			MaxTokens: rapid.SampledFrom([]int{0, 4096}).Draw(t, "max_tokens"),
			Thinking:  rapid.SampledFrom([]int{0, 2048, 9000}).Draw(t, "thinking"),
		}
		if rapid.Bool().Draw(t, "tools") {
			req.Tools = []provider.Tool{{Name: "ls", Schema: json.RawMessage(rapid.SampledFrom([]string{"", `{"type":"object"}`, "{bad"}).Draw(t, "schema"))}}
		}
		for i, n := 0, rapid.IntRange(0, 12).Draw(t, "messages"); i < n; i++ {
			role := rapid.SampledFrom([]record.Role{record.User, record.Assistant}).Draw(t, "role")
			req.Messages = append(req.Messages, record.Message{Role: role, Parts: genParts(t, role)})
		}
		got, gotErr := Encode(req)
		want, wantErr := encodeWhole(req)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
			t.Fatalf("Encode:\n%s (%v)\nthe whole request's wire shapes:\n%s (%v)", got, gotErr, want, wantErr)
		}
	})
}

func TestEncodeStreamingBigRequest(t *testing.T) {
	req := bigRequest(1000)
	got, err := Encode(req)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := encodeWhole(req)
	if !bytes.Equal(got, want) {
		t.Fatal("a 1,000-message request encodes differently streamed")
	}
}
