package openai

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// sampleRequest has every kind of part in every place rein puts it.
func sampleRequest() provider.Request {
	return provider.Request{
		Model:     "gpt-4.1",
		System:    "You are rein's test. Use <tools> & be brief.",
		MaxTokens: 1024,
		Tools: []provider.Tool{
			{Name: "read_file", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "pwd", Description: "Print the working directory."},
		},
		Messages: []record.Message{
			{Role: record.User, Parts: []record.Part{text("What is in a.go?")}},
			{Role: record.Assistant, Parts: []record.Part{
				{Type: record.PartThinking, Text: "They want a.go.", Signature: "sig"},
				text("Let me look."),
				call("call_1", "read_file", `{"path":"a.go"}`),
				call("call_2", "pwd", `{}`),
			}},
			{Role: record.User, Parts: []record.Part{
				{Type: record.PartToolResult, CallID: "call_1", Text: "package a\nTURN: 2"},
				{Type: record.PartToolResult, CallID: "call_2", Text: "/src\nTURN: 2", IsError: true, Outcome: record.Failed},
				text("Also, this picture:"),
				{Type: record.PartImage, MediaType: "image/png", Data: "iVBORw0KGgo="},
			}},
			{Role: record.Assistant, Parts: []record.Part{{Type: record.PartRedacted, Data: "opaque"}}},
			{Role: record.User, Parts: []record.Part{text("Well?")}},
			{Role: record.Assistant, Parts: []record.Part{text("It declares"), text("package a.")}},
			{Role: record.User, Parts: []record.Part{text("Thanks.")}},
		},
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatalf("encoded body is not JSON: %v\n%s", err, got)
	}
	pretty.WriteByte('\n')
	if *update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Errorf("%s differs from the golden file (run go test -update and read the diff):\n%s", name, pretty.Bytes())
	}
}

func TestEncodeChatGolden(t *testing.T) {
	body, err := EncodeChat(sampleRequest())
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "chat_request.json", body)
	if v := ValidateChat(body); v != nil {
		t.Errorf("ValidateChat refused EncodeChat's output: %v", v)
	}
	if bytes.Contains(body, []byte(`\u003c`)) {
		t.Error("the body escapes HTML; it should not")
	}
}

func TestEncodeResponsesGolden(t *testing.T) {
	body, err := EncodeResponses(sampleRequest())
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "responses_request.json", body)
	if v := ValidateResponses(body); v != nil {
		t.Errorf("ValidateResponses refused EncodeResponses's output: %v", v)
	}
}

func TestEncodeDeterministic(t *testing.T) {
	req := sampleRequest()
	for name, enc := range map[string]func(provider.Request) ([]byte, error){"chat": EncodeChat, "responses": EncodeResponses} {
		a, _ := enc(req)
		b, _ := enc(req)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two encodings of one request differ", name)
		}
	}
}

func TestEncodeChatShapes(t *testing.T) {
	req := provider.Request{Model: "m", MaxTokens: 10, Messages: []record.Message{
		{Role: record.User, Parts: []record.Part{text("hi")}},
	}}
	body, _ := EncodeChat(req)
	want := `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":10,"stream":true,"stream_options":{"include_usage":true}}`
	if string(body) != want {
		t.Errorf("EncodeChat =\n%s\nwant\n%s", body, want)
	}
	body, _ = Compat{MaxTokens: true}.EncodeChat(req)
	want = `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":10,"stream":true,"stream_options":{"include_usage":true}}`
	if string(body) != want {
		t.Errorf("Compat{MaxTokens}.EncodeChat =\n%s\nwant\n%s", body, want)
	}
	req.Thinking = 8000
	body, _ = EncodeChat(req)
	if !strings.Contains(string(body), `"reasoning_effort":"medium"`) {
		t.Errorf("a thinking budget sends no reasoning effort: %s", body)
	}
	// Tool results alone make no user message; an assistant message of only thinking is omitted.
	req = provider.Request{Model: "m", Messages: []record.Message{
		{Role: record.User, Parts: []record.Part{text("go")}},
		{Role: record.Assistant, Parts: []record.Part{call("c1", "ls", `{}`)}},
		{Role: record.User, Parts: []record.Part{{Type: record.PartToolResult, CallID: "c1", Text: "x"}}},
		{Role: record.Assistant, Parts: []record.Part{{Type: record.PartThinking, Text: "hm", Signature: "s"}}},
		{Role: record.User, Parts: []record.Part{text("and?")}},
	}}
	body, _ = EncodeChat(req)
	want = `[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]},{"role":"tool","content":"x","tool_call_id":"c1"},{"role":"user","content":"and?"}]`
	var got struct{ Messages json.RawMessage }
	json.Unmarshal(body, &got)
	if string(got.Messages) != want {
		t.Errorf("messages =\n%s\nwant\n%s", got.Messages, want)
	}
}

func TestEncodeRefusesMisplacedParts(t *testing.T) {
	bad := []record.Message{
		{Role: record.User, Parts: []record.Part{call("c", "ls", `{}`)}},
		{Role: record.Assistant, Parts: []record.Part{{Type: record.PartToolResult, CallID: "c"}}},
		{Role: "system", Parts: []record.Part{text("x")}},
	}
	for i, m := range bad {
		req := provider.Request{Model: "m", Messages: []record.Message{m}}
		if _, err := EncodeChat(req); err == nil {
			t.Errorf("case %d: EncodeChat accepted a %s message with a %s part", i, m.Role, m.Parts[0].Type)
		}
		if _, err := EncodeResponses(req); err == nil {
			t.Errorf("case %d: EncodeResponses accepted a %s message with a %s part", i, m.Role, m.Parts[0].Type)
		}
	}
}

// TestEncodedConversationsValidate renders conversations of many shapes and requires both
// validators to accept every one: what the encoders write from a well-formed history is sendable.
func TestEncodedConversationsValidate(t *testing.T) {
	for n := 1; n <= 40; n++ {
		req := conversation(n)
		chat, err := EncodeChat(req)
		if err != nil {
			t.Fatal(err)
		}
		if v := ValidateChat(chat); v != nil {
			t.Fatalf("conversation(%d): ValidateChat: %v", n, v)
		}
		resp, err := EncodeResponses(req)
		if err != nil {
			t.Fatal(err)
		}
		if v := ValidateResponses(resp); v != nil {
			t.Fatalf("conversation(%d): ValidateResponses: %v", n, v)
		}
	}
}

// conversation returns a well-formed history of about n messages: prompts, replies with and
// without text and with up to three tool calls, their results, and steering beside results.
func conversation(n int) provider.Request {
	req := provider.Request{Model: "gpt-4.1", System: "sys", Tools: []provider.Tool{{Name: "shell", Schema: json.RawMessage(`{"type":"object"}`)}}}
	req.Messages = append(req.Messages, record.Message{Role: record.User, Parts: []record.Part{text("start")}})
	call := 0
	for i := 1; len(req.Messages) < n; i++ {
		var parts []record.Part
		if i%2 == 0 {
			parts = append(parts, text(fmt.Sprintf("step %d", i)))
		}
		if i%4 == 1 {
			parts = append(parts, record.Part{Type: record.PartThinking, Text: "t", Signature: "s"})
		}
		calls := i % 4
		if calls == 0 && len(parts) == 0 {
			parts = append(parts, text("done"))
		}
		var results []record.Part
		for k := 0; k < calls; k++ {
			call++
			id := fmt.Sprintf("call_%d", call)
			parts = append(parts, record.Part{Type: record.PartToolCall, CallID: id, Name: "shell", Args: json.RawMessage(`{"cmd":"ls"}`)})
			results = append(results, record.Part{Type: record.PartToolResult, CallID: id, Text: "ok"})
		}
		req.Messages = append(req.Messages, record.Message{Role: record.Assistant, Parts: parts})
		if i%3 == 0 {
			results = append(results, text("steer"))
		}
		if len(results) == 0 {
			results = []record.Part{text("next")}
		}
		req.Messages = append(req.Messages, record.Message{Role: record.User, Parts: results})
	}
	return req
}
