package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

func user(parts ...record.Part) record.Message {
	return record.Message{Role: record.User, Parts: parts}
}

func assistant(parts ...record.Part) record.Message {
	return record.Message{Role: record.Assistant, Parts: parts}
}

func result(id, content string, isErr bool) record.Part {
	return record.Part{Type: record.PartToolResult, CallID: id, Text: content, IsError: isErr}
}

// TestEncodeBytes pins the exact bytes of a request using every part type.
func TestEncodeBytes(t *testing.T) {
	req := provider.Request{
		Model:     "claude-test-1",
		System:    "You are <rein> & terse.",
		MaxTokens: 4096,
		Thinking:  2048,
		Tools: []provider.Tool{
			{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type": "object", "properties": {"path": {"type": "string"}}}`)},
			{Name: "now"},
		},
		Messages: []record.Message{
			user(text("Look at this"), record.Part{Type: record.PartImage, MediaType: "image/png", Data: "iVBORw0KGgo="}),
			assistant(
				record.Part{Type: record.PartThinking, Text: "hmm", Signature: "sig1"},
				record.Part{Type: record.PartRedacted, Data: "opaque"},
				text(""),
				text("Reading."),
				call("toolu_1", "read_file", `{ "path" : "a.go" }`),
				call("toolu_2", "now", ""),
			),
			user(result("toolu_1", "package a\n", false), result("toolu_2", "", true), text("TURN: 3")),
			assistant(record.Part{Type: record.PartThinking, Text: "unsigned, from another provider"}, text("Done.  \n")),
		},
	}
	got, err := Encode(req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"claude-test-1","max_tokens":4096,` +
		`"system":[{"type":"text","text":"You are <rein> & terse.","cache_control":{"type":"ephemeral"}}],` +
		`"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"Look at this"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig1"},{"type":"redacted_thinking","data":"opaque"},` +
		`{"type":"text","text":"Reading."},{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a.go"}},` +
		`{"type":"tool_use","id":"toolu_2","name":"now","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"package a\n"},` +
		`{"type":"tool_result","tool_use_id":"toolu_2","is_error":true},{"type":"text","text":"TURN: 3","cache_control":{"type":"ephemeral"}}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"Done.","cache_control":{"type":"ephemeral"}}]}],` +
		`"tools":[{"name":"read_file","description":"Read a file.","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}},` +
		`{"name":"now","input_schema":{"type":"object"}}],` +
		`"thinking":{"type":"enabled","budget_tokens":2048},"stream":true}`
	if string(got) != want {
		t.Fatalf("Encode:\n got %s\nwant %s", got, want)
	}
	if v := Validate(got); v != nil {
		t.Fatalf("Encode's output refused: %v", v)
	}
	again, _ := Encode(req)
	if !bytes.Equal(got, again) {
		t.Fatal("Encode is not deterministic")
	}
}

func TestEncodeRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  provider.Request
		want string // a fragment the body must contain
		not  string // a fragment it must not
	}{
		{name: "default max_tokens", req: provider.Request{Messages: []record.Message{user(text("hi"))}},
			want: `"max_tokens":8192`},
		{name: "max_tokens above a large thinking budget", req: provider.Request{Thinking: 10000, Messages: []record.Message{user(text("hi"))}},
			want: `"max_tokens":18192`},
		{name: "no system, no tools, no thinking", req: provider.Request{Messages: []record.Message{user(text("hi"))}},
			not: `"system"`},
		{name: "consecutive same-role messages sent as written",
			req:  provider.Request{Messages: []record.Message{user(text("a")), user(text("b")), assistant(text("c")), assistant(text("d"))}},
			want: `{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"user","content":[{"type":"text","text":"b"}]},{"role":"assistant"`},
		{name: "an assistant message left empty is dropped",
			req: provider.Request{Messages: []record.Message{user(text("a")), assistant(record.Part{Type: record.PartThinking, Text: "x"}), user(text("b"))}},
			not: `"assistant"`},
		{name: "whitespace-only text dropped beside a tool call",
			req: provider.Request{Messages: []record.Message{user(text("a")), assistant(text("\n\n"), call("t1", "x", `{}`)), user(result("t1", "ok", false))}},
			not: `"\n\n"`},
		{name: "whitespace text kept beside real text",
			req:  provider.Request{Messages: []record.Message{user(text("a")), assistant(text(" "), text("b")), user(text("c"))}},
			want: `{"type":"text","text":" "},{"type":"text","text":"b"`},
		{name: "final assistant whitespace-only block removed, trim continues",
			req:  provider.Request{Messages: []record.Message{user(text("a")), assistant(text("b \n"), text("  "))}},
			want: `{"role":"assistant","content":[{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}]}]`},
		{name: "only the final assistant message is trimmed",
			req:  provider.Request{Messages: []record.Message{user(text("a")), assistant(text("b \n")), user(text("c"))}},
			want: `"text":"b \n"`},
		{name: "a final assistant message ending in a tool call is not trimmed",
			req:  provider.Request{Messages: []record.Message{user(text("a")), assistant(text("b "), call("t1", "x", `{}`))}},
			want: `"text":"b "`},
		{name: "cache breakpoint skips a trailing thinking block",
			req:  provider.Request{Messages: []record.Message{user(text("a")), assistant(text("b"), record.Part{Type: record.PartThinking, Text: "t", Signature: "s"})}},
			want: `{"type":"text","text":"b","cache_control":{"type":"ephemeral"}},{"type":"thinking"`},
		{name: "only the last two messages carry breakpoints",
			req:  provider.Request{Messages: []record.Message{user(text("a")), assistant(text("b")), user(text("c"))}},
			want: `{"role":"user","content":[{"type":"text","text":"a"}]}`},
		{name: "no HTML escaping", req: provider.Request{Messages: []record.Message{user(text("<a&b>"))}},
			want: `"text":"<a&b>"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Encode(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && !strings.Contains(string(got), tc.want) {
				t.Errorf("body lacks %s:\n%s", tc.want, got)
			}
			if tc.not != "" && strings.Contains(string(got), tc.not) {
				t.Errorf("body has %s:\n%s", tc.not, got)
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	for _, req := range []provider.Request{
		{Messages: []record.Message{user(text("a")), assistant(call("t1", "x", `{"a":`))}},
		{Messages: []record.Message{user(record.Part{Type: "video"})}},
		{Tools: []provider.Tool{{Name: "x", Schema: json.RawMessage(`{`)}}, Messages: []record.Message{user(text("a"))}},
	} {
		if body, err := Encode(req); err == nil {
			t.Errorf("Encode(%+v) = %s, want an error", req, body)
		}
	}
}

// TestEncodeUserLeftEmpty shows that a user message is never dropped: what the API would refuse
// is left for Validate to name.
func TestEncodeUserLeftEmpty(t *testing.T) {
	body, err := Encode(provider.Request{Messages: []record.Message{user(text("  "))}})
	if err != nil {
		t.Fatal(err)
	}
	v := Validate(body)
	if v == nil || v.Rule != "text_whitespace" {
		t.Fatalf("Validate = %v, want text_whitespace", v)
	}
}

// bigRequest is a 1,000-message conversation of tool turns, the shape of a long agent session.
func bigRequest(n int) provider.Request {
	req := provider.Request{Model: "claude-test-1", System: strings.Repeat("You are rein. ", 200)}
	for i := 0; i < 20; i++ {
		req.Tools = append(req.Tools, provider.Tool{Name: fmt.Sprintf("tool_%d", i), Description: "Does a thing to a file.",
			Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"}},"required":["path"]}`)})
	}
	req.Messages = append(req.Messages, user(text("Fix the parser, please.")))
	for i := 1; len(req.Messages) < n; i++ {
		id := fmt.Sprintf("toolu_%06d", i)
		req.Messages = append(req.Messages,
			assistant(text("Looking at the next file to see where the retry loop goes wrong."),
				call(id, "tool_3", fmt.Sprintf(`{"path":"internal/parser/file_%d.go","n":%d}`, i, i))),
			user(result(id, strings.Repeat("func parse(b []byte) error { return nil }\n", 12)+fmt.Sprintf("TURN: %d", i), false)))
	}
	return req
}

func TestEncodeBigRequestValid(t *testing.T) {
	body, err := Encode(bigRequest(1000))
	if err != nil {
		t.Fatal(err)
	}
	if v := Validate(body); v != nil {
		t.Fatal(v)
	}
}

func BenchmarkEncode1000(b *testing.B) {
	req := bigRequest(1000)
	body, _ := Encode(req)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate1000(b *testing.B) {
	body, _ := Encode(bigRequest(1000))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if v := Validate(body); v != nil {
			b.Fatal(v)
		}
	}
}
