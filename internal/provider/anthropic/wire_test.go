package anthropic

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// stdEncode is what encoding/json writes for w with HTML escaping off: the oracle appendRequest is
// held to.
func stdEncode(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestAppendMatchesEncodingJSON(t *testing.T) {
	odd := "ctl \x00\x01\x1f \b\f\n\r\t \"q\" \\ <&> \u2028\u2029 é 🙂 bad\xff\xfe utf8"
	reqs := []provider.Request{
		bigRequest(50),
		{Model: odd, System: odd, Thinking: 1024, Tools: []provider.Tool{{Name: odd, Description: odd, Schema: json.RawMessage("{ \"a\" : [ 1 , 2 ] }")}},
			Messages: []record.Message{
				user(text(odd), record.Part{Type: record.PartImage, MediaType: odd, Data: odd}),
				assistant(record.Part{Type: record.PartThinking, Text: odd, Signature: odd}, record.Part{Type: record.PartRedacted, Data: odd},
					call(odd, odd, "{\n  \"k\": \"\\u00e9\"\n}")),
				user(result(odd, odd, true), result("x", "", false)),
				user(),
			}},
		{Model: "claude-sonnet-4-5", Messages: []record.Message{user(text("hi"))}, Tools: []provider.Tool{
			{Name: BashName, Type: BashType, Description: "run", Schema: json.RawMessage(`{"type":"object"}`)},
			{Name: "glob", Description: "find", Schema: json.RawMessage(`{"type":"object"}`)},
			{Name: TextEditorName, Type: TextEditorType, Schema: json.RawMessage(`{"type":"object"}`)},
		}},
	}
	for _, req := range reqs {
		w, err := build(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendRequest(nil, w)
		if err != nil {
			t.Fatal(err)
		}
		if want := stdEncode(t, w); !bytes.Equal(got, want) {
			t.Fatalf("appendRequest differs from encoding/json:\n got %s\nwant %s", got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\x00\u2028\xff", "<a href=\"x\">&amp;</a>", "\t\r\n\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := provider.AppendJSONString(nil, s), stdEncode(t, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSONString(%q) = %s, encoding/json writes %s", s, got, want)
		}
	})
}
