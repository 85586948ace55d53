package sim

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// refJSON encodes v as the simulator encoded its replies before appendJSON: encoding/json with
// HTML escaping off, an obj key by key and an []any element by element in the same way.
func refJSON(t testing.TB, v any) []byte {
	t.Helper()
	switch v := v.(type) {
	case obj:
		var b bytes.Buffer
		b.WriteByte('{')
		for i := 0; i+1 < len(v); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := encode(v[i])
			b.Write(k)
			b.WriteByte(':')
			b.Write(refJSON(t, v[i+1]))
		}
		b.WriteByte('}')
		return b.Bytes()
	case []any:
		if v == nil {
			return []byte("null")
		}
		var b bytes.Buffer
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(refJSON(t, e))
		}
		b.WriteByte(']')
		return b.Bytes()
	}
	b, err := encode(v)
	if err != nil {
		t.Fatalf("encode %#v: %v", v, err)
	}
	return b
}

// anyString draws strings that exercise every escape: quotes, backslashes, control characters,
// HTML characters (left alone), U+2028 and U+2029, multi-byte runes and invalid UTF-8.
func anyString(t *rapid.T, label string) string {
	parts := rapid.SliceOfN(rapid.OneOf(
		rapid.SampledFrom([]string{`"`, `\`, "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f", "<", ">", "&",
			"\u2028", "\u2029", "é", "日本", "\U0001F600", "\xff", "\xe2\x80", "\xed\xa0\x80", "\ufffd"}),
		rapid.String(),
		rapid.StringMatching(`[a-z ]{0,12}`),
	), 0, 8).Draw(t, label)
	return strings.Join(parts, "")
}

func anyValue(t *rapid.T, depth int) any {
	kinds := 9
	if depth > 3 {
		kinds = 6 // leaves only
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
	case 0:
		return anyString(t, "s")
	case 1:
		return rapid.Int().Draw(t, "int")
	case 2:
		return rapid.Int64().Draw(t, "int64")
	case 3:
		return rapid.Bool().Draw(t, "bool")
	case 4:
		return nil
	case 5:
		return rapid.SampledFrom([]any{json.RawMessage(`{ "a" : [1, 2 ,"<x>"] }`), json.RawMessage(`"ls -la"`),
			json.RawMessage(nil), 1.5, []string{"a"}, map[string]any{"b": 1, "a": "<"}, ptrTo("p")}).Draw(t, "other")
	case 6:
		o := obj{}
		for range rapid.IntRange(0, 4).Draw(t, "keys") {
			o = append(o, anyString(t, "key"), anyValue(t, depth+1))
		}
		return o
	case 7:
		var a []any
		if rapid.Bool().Draw(t, "nonNil") {
			a = []any{}
		}
		for range rapid.IntRange(0, 3).Draw(t, "elems") {
			a = append(a, anyValue(t, depth+1))
		}
		return a
	default:
		return obj(nil)
	}
}

func ptrTo(s string) *string { return &s }

// The hand-written encoding gives exactly the bytes encoding/json gave, for every value a reply
// can hold and some it does not (which go to encoding/json).
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		v := anyValue(rt, 0)
		got := mustJSON(v)
		if want := refJSON(t, v); !bytes.Equal(got, want) {
			rt.Fatalf("appendJSON(%#v)\n got %q\nwant %q", v, got, want)
		}
	})
}

func TestAppendJSONRefusesAKeyThatIsNoString(t *testing.T) {
	if _, err := appendJSON(nil, obj{"a", 1, 2, 3}); err == nil {
		t.Fatal("an obj with the key 2 encoded")
	}
}

var update = flag.Bool("update", false, "rewrite testdata/frames.golden")

// TestFramesGolden pins the bytes of every wire's streams and error bodies for varied replies:
// the golden file was written by the encoding/json encoding the simulator used before.
func TestFramesGolden(t *testing.T) {
	odd := "quote \" backslash \\ tab\t nl\n ctl\x01 html <b>&amp; sep\u2028\u2029 bad\xff emoji \U0001F600 é"
	steps := map[string]Step{
		"text":      {Text: "Hello there, " + odd, Chunks: 3},
		"thinking":  {Thinking: &Thinking{Text: "Let me think " + odd, Signature: "c2ln"}, Text: "Done."},
		"calls":     {Text: "Looking.", ToolCalls: []ToolCall{{Name: "bash", Arguments: json.RawMessage(`{"command": "ls -la <x> && echo \"é\u2028\""}`)}, {Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`), ID: ptr("call_given")}}},
		"freeform":  {ToolCalls: []ToolCall{{Name: "apply_patch", Input: ptr("*** Begin Patch\n" + odd + "\n*** End Patch")}}},
		"maxtokens": {ToolCalls: []ToolCall{{Name: "write_file", Arguments: json.RawMessage(`{"path":"a","content":"0123456789"}`)}}, MaxTokens: true},
		"empty":     {Empty: true},
		"search":    {WebSearch: &WebSearch{Query: "go " + odd, Results: []WebResult{{URL: "https://example.com/?a=1&b=<2>", Title: odd}}}, Text: "Found."},
		"searcherr": {WebSearch: &WebSearch{Query: "q", Error: "max_uses_exceeded"}, Text: "No."},
	}
	wires := []wire{anthropicWire{}, chatWire{}, responsesWire{}}
	var out bytes.Buffer
	for _, name := range []string{"text", "thinking", "calls", "freeform", "maxtokens", "empty", "search", "searcherr"} {
		for _, w := range wires {
			n := 0
			p := fromStep(steps[name], func() string { n++; return fmt.Sprintf("id_%d", n) })
			p.n, p.id, p.model, p.created, p.input, p.output = 7, "msg_7", "sim-1", 1700000000, 123, 45
			p.includeUsage, p.encrypted = true, true
			fmt.Fprintf(&out, "## %s %s\n", w.format(), name)
			for _, f := range w.frames(p) {
				out.Write(f.bytes())
			}
			out.Write(w.streamError(p, ErrorEvent{Type: "overloaded_error", Message: odd}, 3).bytes())
			out.Write(w.errorBody(429, "rate_limit_error", "rate_limited", odd, "messages.0", "req_1"))
			out.WriteByte('\n')
			out.Write(w.contextError(300000, 200000, "req_2"))
			out.WriteString("\n\n")
		}
	}
	golden := filepath.Join("testdata", "frames.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run TestFramesGolden -update writes it)", err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		a, b := strings.Split(string(want), "\n"), strings.Split(out.String(), "\n")
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("line %d differs:\n got %q\nwant %q", i+1, b[i], a[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(b), len(a))
	}
}
