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
				{Type: record.PartThinking, Text: "**Reading**", Data: `{"id":"rs_1","type":"reasoning","encrypted_content":"gAAAA<&>","summary":[{"type":"summary_text","text":"**Reading**"}]}`},
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
		if i%5 != 0 {
			// OpenAI reasoning before what follows it (or, with nothing after it, alone).
			item := fmt.Sprintf(`{"id":"rs_%d","type":"reasoning","encrypted_content":"gAAAA","summary":[]}`, i)
			parts = append([]record.Part{{Type: record.PartThinking, Data: item}}, parts...)
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

// TestEncodeResponsesReasoning: reasoning items come back where they stood, byte for byte, each
// right before the item it preceded; one with nothing after it, and thinking that is not a
// reasoning item, are not sent. An effort asks for the encrypted content.
func TestEncodeResponsesReasoning(t *testing.T) {
	item1 := `{"id":"rs_1","type":"reasoning","content":[],"encrypted_content":"gAAAA\u002b/=","summary":[{"type":"summary_text","text":"**Plan**"},{"type":"summary_text","text":"<two>"}]}`
	item2 := `{"id":"rs_2","type":"reasoning","encrypted_content":"gAAAB","summary":[]}`
	item3 := `{"id":"rs_3","type":"reasoning","encrypted_content":"gAAAC","summary":[]}`
	req := provider.Request{Model: "gpt-5", Effort: "high", Messages: []record.Message{
		{Role: record.User, Parts: []record.Part{text("go")}},
		{Role: record.Assistant, Parts: []record.Part{
			{Type: record.PartThinking, Text: "**Plan**\n\n<two>", Data: item1},
			text("Looking."),
			call("c1", "ls", `{}`),
			{Type: record.PartThinking, Text: "anthropic's", Signature: "sig"},
			{Type: record.PartThinking, Data: item2},
			call("c2", "pwd", `{}`),
		}},
		{Role: record.User, Parts: []record.Part{{Type: record.PartToolResult, CallID: "c1", Text: "a"}, {Type: record.PartToolResult, CallID: "c2", Text: "/"}}},
		{Role: record.Assistant, Parts: []record.Part{text("Done."), {Type: record.PartThinking, Data: item3}}},
		{Role: record.User, Parts: []record.Part{text("and?")}},
	}}
	body, err := EncodeResponses(req)
	if err != nil {
		t.Fatal(err)
	}
	if v := ValidateResponses(body); v != nil {
		t.Fatalf("ValidateResponses: %v\n%s", v, body)
	}
	var got struct {
		Input     []json.RawMessage
		Reasoning json.RawMessage
		Include   []string
		Store     *bool
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}`,
		item1,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Looking."}]}`,
		`{"type":"function_call","call_id":"c1","name":"ls","arguments":"{}"}`,
		item2,
		`{"type":"function_call","call_id":"c2","name":"pwd","arguments":"{}"}`,
		`{"type":"function_call_output","call_id":"c1","output":"a"}`,
		`{"type":"function_call_output","call_id":"c2","output":"/"}`,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"and?"}]}`,
	}
	if len(got.Input) != len(want) {
		t.Fatalf("%d input items, want %d:\n%s", len(got.Input), len(want), body)
	}
	for i := range want {
		if string(got.Input[i]) != want[i] {
			t.Errorf("input[%d] =\n%s\nwant\n%s", i, got.Input[i], want[i])
		}
	}
	if string(got.Reasoning) != `{"effort":"high","summary":"auto"}` || len(got.Include) != 1 || got.Include[0] != "reasoning.encrypted_content" || got.Store == nil || *got.Store {
		t.Errorf("reasoning %s, include %v, store %v", got.Reasoning, got.Include, got.Store)
	}

	// Without an effort: a reasoning model still asks for its reasoning back, others do not.
	for model, include := range map[string]bool{"gpt-5": true, "o4-mini": true, "openai/gpt-5.1-codex": true, "gpt-5-chat-latest": false, "gpt-4.1": false, "sim-1": false} {
		body, _ := EncodeResponses(provider.Request{Model: model, Messages: req.Messages[:1]})
		if got := strings.Contains(string(body), `"include":["reasoning.encrypted_content"]`); got != include {
			t.Errorf("%s: include %v, want %v: %s", model, got, include, body)
		}
		if strings.Contains(string(body), `"reasoning"`) {
			t.Errorf("%s: reasoning settings with no effort asked: %s", model, body)
		}
	}
	// A thinking budget stands for an effort.
	body, _ = EncodeResponses(provider.Request{Model: "m", Thinking: 20000, Messages: req.Messages[:1]})
	if !strings.Contains(string(body), `"reasoning":{"effort":"high","summary":"auto"},"include":["reasoning.encrypted_content"]`) {
		t.Errorf("a thinking budget: %s", body)
	}
	// A kept item that is not JSON is refused, not sent.
	bad := provider.Request{Model: "m", Messages: []record.Message{req.Messages[0],
		{Role: record.Assistant, Parts: []record.Part{{Type: record.PartThinking, Data: "not json"}, text("x")}}}}
	if _, err := EncodeResponses(bad); err == nil {
		t.Error("a reasoning item that is not JSON was encoded")
	}
}

// TestEncodeChatReasoning: an effort is OpenAI's reasoning_effort, or OpenRouter's reasoning
// object, which also takes a budget; no reasoning is ever sent back on Chat.
func TestEncodeChatReasoning(t *testing.T) {
	msgs := []record.Message{
		{Role: record.User, Parts: []record.Part{text("go")}},
		{Role: record.Assistant, Parts: []record.Part{{Type: record.PartThinking, Text: "deepseek's"}, {Type: record.PartThinking, Text: "x", Data: `{"id":"rs_1","type":"reasoning","encrypted_content":"e","summary":[]}`}, text("ok")}},
		{Role: record.User, Parts: []record.Part{text("more")}},
	}
	for _, c := range []struct {
		compat Compat
		req    provider.Request
		want   string
	}{
		{Compat{}, provider.Request{Effort: "low"}, `"reasoning_effort":"low"`},
		{Compat{}, provider.Request{Effort: "high", Thinking: 2000}, `"reasoning_effort":"high"`},
		{Compat{Reasoning: true}, provider.Request{Effort: "medium"}, `"reasoning":{"effort":"medium"}`},
		{Compat{Reasoning: true}, provider.Request{Thinking: 4000}, `"reasoning":{"max_tokens":4000}`},
	} {
		c.req.Model, c.req.Messages = "m", msgs
		body, err := c.compat.EncodeChat(c.req)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(body), c.want) {
			t.Errorf("%+v %s/%d: %s, want %s", c.compat, c.req.Effort, c.req.Thinking, body, c.want)
		}
		if strings.Contains(string(body), "deepseek") || strings.Contains(string(body), "rs_1") {
			t.Errorf("reasoning sent back on Chat: %s", body)
		}
		if v := ValidateChat(body); v != nil {
			t.Errorf("ValidateChat: %v", v)
		}
	}
}
