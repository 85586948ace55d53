package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/openai"
	"github.com/reinhq/rein/internal/provider/recorded"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"

	"pgregory.net/rapid"
)

// The tool sets as package toolset builds them, written out here (a provider test links no tool).
var (
	editorSpec = provider.Tool{Name: anthropic.TextEditorName, Type: anthropic.TextEditorType, Description: "View, create and edit files.",
		Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"path":{"type":"string"}},"required":["command","path"]}`)}
	bashTypeSpec = provider.Tool{Name: anthropic.BashName, Type: anthropic.BashType, Description: "Run a command.",
		Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"restart":{"type":"boolean"}}}`)}
	bashSpec  = provider.Tool{Name: "bash", Description: "Run a command.", Schema: json.RawMessage(bashSchema)}
	patchSpec = provider.Tool{Name: "apply_patch", Description: "Apply a patch.", Schema: provider.FreeformSchema,
		Grammar: "start: begin_patch hunk+ end_patch\nbegin_patch: \"*** Begin Patch\" LF\nend_patch: \"*** End Patch\" LF?\nhunk: /(.+)/ LF\n%import common.LF\n"}
	editSpec = provider.Tool{Name: "edit_file", Description: "Edit a file.",
		Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"old":{"type":"string"},"new":{"type":"string"}},"required":["path","old","new"]}`)}

	claudeTools   = []provider.Tool{bashTypeSpec, editorSpec}
	codexTools    = []provider.Tool{bashSpec, patchSpec}
	codexFunction = []provider.Tool{bashSpec, func() provider.Tool { t := patchSpec; t.Grammar = ""; return t }()}
	reinTools     = []provider.Tool{bashSpec, editSpec}
)

const testPatch = "*** Begin Patch\n*** Update File: main.go\n@@ func main() {\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n*** End Patch\n"

func call(id, name, args string) record.Part {
	return record.Part{Type: record.PartToolCall, CallID: id, Name: name, Args: json.RawMessage(args)}
}

func result(id, text string, o record.Outcome) record.Part {
	return record.Part{Type: record.PartToolResult, CallID: id, Text: text, Outcome: o, IsError: o != record.OK}
}

// history is a session's context made with one tool set: a prompt, calls and their results, a
// reply.
func history(set string) []record.Message {
	var calls, results []record.Part
	switch set {
	case "claude":
		calls = []record.Part{
			call("toolu_1", anthropic.TextEditorName, `{"command":"str_replace","path":"/w/main.go","old_str":"hi","new_str":"hello"}`),
			call("toolu_2", "bash", `{"command":"go test ./..."}`),
			call("toolu_3", "bash", `{"restart":true}`),
		}
	case "codex":
		calls = []record.Part{
			call("call_1", "apply_patch", string(provider.FreeformArgs(testPatch))),
			call("call_2", "bash", `{"command":"go test ./..."}`),
		}
	case "rein":
		calls = []record.Part{call("call_9", "edit_file", `{"path":"main.go","old":"hi","new":"hello"}`)}
	}
	for i, c := range calls {
		o := record.OK
		if i == 1 {
			o = record.Interrupted // a Stop mid-call
		}
		results = append(results, result(c.CallID, "done", o))
	}
	return []record.Message{
		user("say hello, not hi"),
		{Role: record.Assistant, Parts: append([]record.Part{text("Editing.")}, calls...)},
		{Role: record.User, Parts: results},
		{Role: record.Assistant, Parts: []record.Part{text("Done.")}},
		user("thanks"),
	}
}

type wireCodec struct {
	name     string
	encode   func(provider.Request) ([]byte, error)
	validate func([]byte) *provider.Violation
}

var codecs = []wireCodec{
	{"anthropic", anthropic.Encode, anthropic.Validate},
	{"chat", openai.EncodeChat, openai.ValidateChat},
	{"responses", openai.EncodeResponses, openai.ValidateResponses},
}

// TestToolSetsOnEveryWire: a history made with any tool set, sent on any wire with any tool set
// offered (a fork onto another provider offers that provider's), is valid by all three
// validators. This is the promise a fork keeps.
func TestToolSetsOnEveryWire(t *testing.T) {
	sets := map[string][]provider.Tool{"claude": claudeTools, "codex": codexTools, "codex-function": codexFunction, "rein": reinTools}
	for _, made := range []string{"claude", "codex", "rein"} {
		for offered, tools := range sets {
			for _, c := range codecs {
				req := provider.Request{Model: "gpt-5", System: "test", Messages: history(made), Tools: tools, MaxTokens: 1024}
				body, err := c.encode(req)
				if err != nil {
					t.Fatalf("%s history, %s offered, %s: encode: %v", made, offered, c.name, err)
				}
				if v := c.validate(body); v != nil {
					t.Errorf("%s history, %s offered, %s: %v\n%s", made, offered, c.name, v, body)
				}
			}
		}
	}
}

// The definitions each wire is sent, in the shapes the providers document.
func TestToolSetDefinitions(t *testing.T) {
	req := provider.Request{Model: "m", Messages: []record.Message{user("hi")}, MaxTokens: 100}

	req.Tools = claudeTools
	body, err := anthropic.Encode(req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, []byte(`"tools":[{"type":"bash_20250124","name":"bash"},{"type":"text_editor_20250728","name":"str_replace_based_edit_tool"}]`)) {
		t.Errorf("anthropic tool types:\n%s", body)
	}
	if v := anthropic.Validate(body); v != nil {
		t.Error(v)
	}
	// The hand-written encoder and encoding/json agree on the new shape.
	bad := bytes.Replace(body, []byte(`"name":"str_replace_based_edit_tool"`), []byte(`"name":"editor"`), 1)
	if v := anthropic.Validate(bad); v == nil || v.Rule != "tool_type_name" || !strings.Contains(v.Message, "Input should be 'str_replace_based_edit_tool'") {
		t.Errorf("a tool type under another name: %v", v)
	}

	req.Tools = codexTools
	body, err = openai.EncodeResponses(req)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct{ Tools []json.RawMessage }
	json.Unmarshal(body, &sent)
	var custom struct {
		Type, Name, Description string
		Format                  struct{ Type, Syntax, Definition string }
	}
	if len(sent.Tools) != 2 || json.Unmarshal(sent.Tools[1], &custom) != nil || custom.Type != "custom" || custom.Name != "apply_patch" ||
		custom.Format.Type != "grammar" || custom.Format.Syntax != "lark" || custom.Format.Definition != patchSpec.Grammar {
		t.Errorf("responses custom tool: %s", body)
	}
	if v := openai.ValidateResponses(body); v != nil {
		t.Error(v)
	}
	for _, bad := range []struct{ from, to, rule string }{
		{`"syntax":"lark"`, `"syntax":"ebnf"`, "Supported values are: 'lark' and 'regex'"},
		{`"type":"grammar"`, `"type":"json"`, "Supported values are: 'text' and 'grammar'"},
	} {
		if v := openai.ValidateResponses(bytes.Replace(body, []byte(bad.from), []byte(bad.to), 1)); v == nil || !strings.Contains(v.Message, bad.rule) {
			t.Errorf("%s: %v", bad.to, v)
		}
	}

	body, err = openai.EncodeChat(req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, []byte(`{"type":"function","function":{"name":"apply_patch","description":"Apply a patch.","parameters":{"type":"object","properties":{"input":{"type":"string"`)) {
		t.Errorf("chat apply_patch function:\n%s", body)
	}
}

// A custom tool call and its output on the Responses wire, and the same call elsewhere.
func TestCustomCallShapes(t *testing.T) {
	req := provider.Request{Model: "gpt-5", Messages: history("codex"), Tools: codexTools, MaxTokens: 100}
	body, err := openai.EncodeResponses(req)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct{ Input []map[string]any }
	json.Unmarshal(body, &sent)
	var kinds []string
	for _, it := range sent.Input {
		kinds = append(kinds, it["type"].(string))
		if it["type"] == "custom_tool_call" && (it["input"] != testPatch || it["call_id"] != "call_1" || it["name"] != "apply_patch" || it["arguments"] != nil) {
			t.Errorf("custom call item %v", it)
		}
	}
	want := "message,message,custom_tool_call,function_call,custom_tool_call_output,function_call_output,message,message"
	if got := strings.Join(kinds, ","); got != want {
		t.Errorf("items %s, want %s\n%s", got, want, body)
	}
	// An output of the wrong kind is refused, in the words of the pairing rule.
	swapped := bytes.Replace(body, []byte(`"type":"custom_tool_call_output"`), []byte(`"type":"function_call_output"`), 1)
	if v := openai.ValidateResponses(swapped); v == nil || !strings.Contains(v.Message, "answered by a custom_tool_call_output") {
		t.Errorf("a function output for a custom call: %v", v)
	}
	// Offered as a function (Chat, or a model without custom tools), the call is a function call
	// whose arguments carry the patch.
	req.Tools = codexFunction
	body, _ = openai.EncodeResponses(req)
	if bytes.Contains(body, []byte("custom_tool_call")) || !bytes.Contains(body, []byte(`"arguments":"{\"input\":\"*** Begin Patch`)) {
		t.Errorf("function form:\n%s", body)
	}
	body, _ = anthropic.Encode(req)
	if !bytes.Contains(body, []byte(`{"type":"tool_use","id":"call_1","name":"apply_patch","input":{"input":"*** Begin Patch`)) {
		t.Errorf("anthropic:\n%s", body)
	}
}

// Through the simulator and the real clients: the Responses wire streams a custom tool call, the
// client records it as {"input": text} exactly, and the next request (the call answered) passes
// the validator and the simulator; the Anthropic wire streams the text editor's call.
func TestFreeformCallThroughSimulator(t *testing.T) {
	input := "*** Begin Patch\n*** Add File: ünïcode.txt\n+\"quoted\" \\ back\\slash\ttab\n*** End Patch"
	steps := []sim.Step{
		{Text: "Patching.", ToolCalls: []sim.ToolCall{{Name: "apply_patch", Input: &input}}},
		{Text: "Patched."},
		{ToolCalls: []sim.ToolCall{{Name: anthropic.TextEditorName, Arguments: json.RawMessage(`{"command":"view","path":"a.txt"}`)}}},
		{Text: "Viewed."},
		{ToolCalls: []sim.ToolCall{{Name: "apply_patch", Input: &input}}, MaxTokens: true},
	}
	srv := httptest.NewServer(sim.New(sim.Options{Script: &sim.Script{Steps: steps, Strict: true}}).Handler())
	defer srv.Close()
	ctx := context.Background()
	turn := func(m provider.Model, tools []provider.Tool, msgs []record.Message) provider.Reply {
		t.Helper()
		req := provider.Request{Model: "gpt-5", Messages: msgs, Tools: tools, MaxTokens: 1000}
		body := encode(t, m, req)
		reply, err := m.Send(ctx, body, nil)
		if err != nil {
			t.Fatalf("send: %v", err)
		}
		return reply
	}
	resp := openai.NewResponses(openai.Config{BaseURL: srv.URL + "/v1", APIKey: "k"})
	msgs := []record.Message{user("patch it")}
	reply := turn(resp, codexTools, msgs)
	c := reply.Parts[len(reply.Parts)-1]
	if got, ok := provider.FreeformInput(c.Args); c.Type != record.PartToolCall || c.Name != "apply_patch" || !ok || got != input || reply.StopReason != provider.StopToolUse {
		t.Fatalf("reply %+v", reply)
	}
	msgs = append(msgs, record.Message{Role: record.Assistant, Parts: reply.Parts},
		record.Message{Role: record.User, Parts: []record.Part{result(c.CallID, "Applied the patch:\nA ünïcode.txt", record.OK)}})
	if reply = turn(resp, codexTools, msgs); reply.StopReason != provider.StopEnd {
		t.Fatalf("after the result: %+v", reply)
	}

	// The same history goes on, on the Anthropic wire with Claude's tools (a fork).
	msgs = append(msgs, record.Message{Role: record.Assistant, Parts: reply.Parts}, user("now look"))
	ant := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: "k"})
	reply = turn(ant, claudeTools, msgs)
	ed := reply.Parts[len(reply.Parts)-1]
	if ed.Name != anthropic.TextEditorName || string(ed.Args) != `{"command":"view","path":"a.txt"}` {
		t.Fatalf("editor call %+v", ed)
	}
	msgs = append(msgs, record.Message{Role: record.Assistant, Parts: reply.Parts},
		record.Message{Role: record.User, Parts: []record.Part{result(ed.CallID, "     1\ta", record.OK)}})
	reply = turn(ant, claudeTools, msgs)
	msgs = append(msgs, record.Message{Role: record.Assistant, Parts: reply.Parts}, user("patch again"))

	// And back on Responses: a custom call cut off by max tokens is incomplete.
	reply = turn(resp, codexTools, msgs)
	if len(reply.Incomplete) != 1 || reply.StopReason != provider.StopMaxTokens {
		t.Fatalf("a cut custom call: %+v", reply)
	}
}

// TestRecordedCustomToolCall replays the custom tool call OpenAI answered in a recorded exchange
// (non-streamed there; streamed here as its output items, done) through rein's Responses client:
// the call is recorded as {"input": text} with the text exactly, and the next request, built with
// the recorded request's custom tool, sends it back as the custom_tool_call it was, answered by a
// custom_tool_call_output, and passes the validator.
func TestRecordedCustomToolCall(t *testing.T) {
	var x recorded.Exchange
	for _, e := range recorded.Load(t, "openai-responses") {
		if e.Name == "ddtrace-custom-tool-call" {
			x = e
		}
	}
	if x.Name == "" {
		t.Fatal("the recorded custom tool call is missing")
	}
	var resp struct {
		Output []json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(x.Body, &resp); err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	frame := func(typ string, fields string) {
		var line bytes.Buffer
		if err := json.Compact(&line, []byte(fmt.Sprintf(`{"type":%q,%s}`, typ, fields))); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&stream, "event: %s\ndata: %s\n\n", typ, line.Bytes())
	}
	var want struct{ CallID, Name, Input string }
	for i, item := range resp.Output {
		var it struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Name   string `json:"name"`
			Input  string `json:"input"`
		}
		json.Unmarshal(item, &it)
		if it.Type == "custom_tool_call" {
			want.CallID, want.Name, want.Input = it.CallID, it.Name, it.Input
		}
		frame("response.output_item.done", fmt.Sprintf(`"output_index":%d,"item":%s`, i, item))
	}
	frame("response.completed", `"response":`+string(x.Body))
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/event-stream")
		rw.Write(stream.Bytes())
	}))
	defer srv.Close()
	reply, err := openai.NewResponses(openai.Config{BaseURL: srv.URL, APIKey: "k"}).Send(context.Background(), x.Request, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := reply.Parts[len(reply.Parts)-1]
	if got, ok := provider.FreeformInput(c.Args); c.Type != record.PartToolCall || c.CallID != want.CallID || c.Name != want.Name || !ok || got != want.Input || want.Input == "" {
		t.Fatalf("the call %+v, want %+v", c, want)
	}
	if reply.StopReason != provider.StopToolUse || len(reply.Incomplete) != 0 {
		t.Fatalf("stop %q, incomplete %v", reply.StopReason, reply.Incomplete)
	}
	var sent struct {
		Model string
		Tools []struct {
			Name, Description string
			Format            struct{ Definition string }
		}
	}
	json.Unmarshal(x.Request, &sent)
	tools := []provider.Tool{{Name: sent.Tools[0].Name, Description: sent.Tools[0].Description, Schema: provider.FreeformSchema, Grammar: sent.Tools[0].Format.Definition}}
	req := provider.Request{Model: sent.Model, Tools: tools, Messages: []record.Message{
		user("Use the math_exp tool to add four plus four."),
		{Role: record.Assistant, Parts: reply.Parts},
		{Role: record.User, Parts: []record.Part{result(c.CallID, "8", record.OK)}},
	}}
	body, err := openai.EncodeResponses(req)
	if err != nil {
		t.Fatal(err)
	}
	if v := openai.ValidateResponses(body); v != nil {
		t.Fatalf("the next request is refused: %v\n%s", v, body)
	}
	for _, s := range []string{
		fmt.Sprintf(`{"type":"custom_tool_call","call_id":%q,"name":%q,"input":%q}`, want.CallID, want.Name, want.Input),
		fmt.Sprintf(`{"type":"custom_tool_call_output","call_id":%q,"output":"8"}`, want.CallID),
		`"format":{"type":"grammar","syntax":"lark","definition":`,
	} {
		if !bytes.Contains(body, []byte(s)) {
			t.Errorf("the next request lacks %s:\n%s", s, body)
		}
	}
	// The same history on the other wires.
	for _, c := range codecs[:2] {
		b, err := c.encode(req)
		if err != nil {
			t.Fatal(err)
		}
		if v := c.validate(b); v != nil {
			t.Errorf("%s: %v\n%s", c.name, v, b)
		}
	}
}

// TestToolSetsProperty: random exchanges of calls from every tool set (free-form inputs of any
// text among them, outcomes of every kind), sent on every wire with any set offered, pass all
// three validators; and a free-form input comes back from its arguments exactly.
func TestToolSetsProperty(t *testing.T) {
	sets := [][]provider.Tool{claudeTools, codexTools, codexFunction, reinTools}
	outcomes := []record.Outcome{record.OK, record.Failed, record.Denied, record.NotExecuted, record.Interrupted, record.TimedOut}
	rapid.Check(t, func(t *rapid.T) {
		msgs := []record.Message{user("start")}
		n := 0
		for range rapid.IntRange(1, 4).Draw(t, "exchanges") {
			var calls, results []record.Part
			for range rapid.IntRange(1, 3).Draw(t, "calls") {
				n++
				id := fmt.Sprintf("call_%d", n)
				var c record.Part
				switch rapid.IntRange(0, 3).Draw(t, "kind") {
				case 0:
					input := rapid.String().Draw(t, "input")
					c = call(id, "apply_patch", string(provider.FreeformArgs(input)))
					if got, ok := provider.FreeformInput(c.Args); !ok || (got != input && strings.ToValidUTF8(input, "\uFFFD") != got) {
						t.Fatalf("free-form input %q came back as %q", input, got)
					}
				case 1:
					c = call(id, anthropic.TextEditorName, `{"command":"view","path":"a"}`)
				case 2:
					c = call(id, "bash", `{"restart":true}`)
				default:
					c = call(id, "edit_file", `{"path":"a","old":"x","new":"y"}`)
				}
				calls = append(calls, c)
				results = append(results, result(id, rapid.String().Draw(t, "output"), rapid.SampledFrom(outcomes).Draw(t, "outcome")))
			}
			msgs = append(msgs, record.Message{Role: record.Assistant, Parts: calls}, record.Message{Role: record.User, Parts: results})
		}
		msgs = append(msgs, record.Message{Role: record.Assistant, Parts: []record.Part{text("ok")}}, user("next"))
		tools := rapid.SampledFrom(sets).Draw(t, "offered")
		for _, c := range codecs {
			body, err := c.encode(provider.Request{Model: "gpt-5", Messages: msgs, Tools: tools, MaxTokens: 100})
			if err != nil {
				t.Fatalf("%s: encode: %v", c.name, err)
			}
			if v := c.validate(body); v != nil {
				t.Fatalf("%s: %v\n%s", c.name, v, body)
			}
		}
	})
}
