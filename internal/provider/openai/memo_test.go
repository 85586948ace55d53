package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/providertest"
	"github.com/reinhq/rein/internal/record"
)

// The encoders under test, each beside the request marshalled whole as it was before (whole_test.go).
var listEncoders = []struct {
	name         string
	encode, want func(provider.Request) ([]byte, error)
}{
	{"chat", EncodeChat, func(r provider.Request) ([]byte, error) { return encodeChatWhole(Compat{}, r) }},
	{"chat-compat", Compat{MaxTokens: true, Reasoning: true}.EncodeChat, func(r provider.Request) ([]byte, error) {
		return encodeChatWhole(Compat{MaxTokens: true, Reasoning: true}, r)
	}},
	{"responses", EncodeResponses, encodeResponsesWhole},
}

// genTools draws the tools offered: none, a function tool, and a tool offered free-form (whose
// calls and results the Responses API takes as custom ones), with schemas good and bad.
func genTools(t *rapid.T) []provider.Tool {
	var tools []provider.Tool
	if rapid.Bool().Draw(t, "shell") {
		tools = append(tools, provider.Tool{Name: "shell", Schema: json.RawMessage(rapid.SampledFrom([]string{"", `{"type":"object"}`, `{"type":"object"}`, "", "", "{bad"}).Draw(t, "schema"))})
	}
	if rapid.Bool().Draw(t, "patch") {
		tools = append(tools, provider.Tool{Name: "apply_patch", Grammar: "start: /.+/", Schema: json.RawMessage(`{"type":"object","properties":{"input":{"type":"string"}}}`)})
	}
	return tools
}

// genOpenAIParts draws a message's parts, of every kind either API is given in a message of
// role's, and now and then one no message of that role may carry.
func genOpenAIParts(t *rapid.T, role record.Role) []record.Part {
	parts := make([]record.Part, rapid.IntRange(0, 4).Draw(t, "parts"))
	id := func() string { return fmt.Sprintf("call_%d", rapid.IntRange(0, 2).Draw(t, "id")) }
	for i := range parts {
		kind := rapid.IntRange(0, 5).Draw(t, "kind")
		if rapid.IntRange(0, 59).Draw(t, "odd") == 0 {
			parts[i] = record.Part{Type: rapid.SampledFrom([]record.PartType{"nonsense", record.PartImage, record.PartThinking}).Draw(t, "odd part"), Data: "x"}
			continue
		}
		switch {
		case kind <= 1:
			parts[i] = text(rapid.SampledFrom([]string{"", "hi", "<b>&</b>", "é\n"}).Draw(t, "text"))
		case role == record.User && kind <= 3:
			p := record.Part{Type: record.PartToolResult, CallID: id(), Text: rapid.SampledFrom([]string{"ok", "", "<x>"}).Draw(t, "out"), IsError: rapid.Bool().Draw(t, "err")}
			if rapid.IntRange(0, 3).Draw(t, "images") == 0 {
				p.Images = []record.Part{{Type: record.PartImage, MediaType: "image/png", Data: "aGk=", Name: "shot.png"}}
			}
			parts[i] = p
		case role == record.User:
			parts[i] = record.Part{Type: record.PartImage, MediaType: "image/png", Data: "aGk="}
		case kind == 2:
			parts[i] = record.Part{Type: record.PartToolCall, CallID: id(), Name: rapid.SampledFrom([]string{"shell", "apply_patch"}).Draw(t, "name"),
				Args: json.RawMessage(rapid.SampledFrom([]string{`{}`, `{"input":"*** Begin Patch"}`, `{"cmd":"ls"}`, `{bad`}).Draw(t, "args"))}
		case kind == 3:
			parts[i] = record.Part{Type: record.PartThinking, Text: "t", Signature: rapid.SampledFrom([]string{"", "s"}).Draw(t, "signature"),
				Data: rapid.SampledFrom([]string{"", `{"id":"rs_1","type":"reasoning","encrypted_content":"gA<&>","summary":[]}`, `{ "id" : "rs_2" }`, "", `{"id":"rs_3"}`, `["no"]`}).Draw(t, "reasoning")}
		case kind == 4:
			parts[i] = record.Part{Type: record.PartServerTool, Wire: rapid.SampledFrom([]string{record.WireResponses, "anthropic"}).Draw(t, "wire"),
				Data: `{"type":"web_search_call","id":"ws_1","status":"completed"}`}
		default:
			parts[i] = record.Part{Type: record.PartRedacted, Data: "opaque"}
		}
	}
	return parts
}

func genRequest(t *rapid.T) provider.Request {
	req := provider.Request{
		Model:     rapid.SampledFrom([]string{"gpt-4.1", "gpt-5"}).Draw(t, "model"),
		System:    rapid.SampledFrom([]string{"", "be brief <&>"}).Draw(t, "system"),
		MaxTokens: rapid.SampledFrom([]int{0, 4096}).Draw(t, "max_tokens"),
		Thinking:  rapid.SampledFrom([]int{0, 2048, 9000}).Draw(t, "thinking"),
		Effort:    rapid.SampledFrom([]string{"", "low"}).Draw(t, "effort"),
		WebSearch: rapid.Bool().Draw(t, "web_search"),
		Tools:     genTools(t),
	}
	for range rapid.IntRange(0, 8).Draw(t, "messages") {
		role := rapid.SampledFrom([]record.Role{record.User, record.Assistant}).Draw(t, "role")
		if rapid.IntRange(0, 19).Draw(t, "odd role") == 0 {
			role = "system" // no message has it: refused
		}
		req.Messages = append(req.Messages, record.Message{Role: role, Parts: genOpenAIParts(t, role)})
	}
	return req
}

// TestEncodeIsWhole: EncodeChat and EncodeResponses, which write the list of messages item by
// item, give exactly the bytes (or the error) of marshalling the whole request as one value, for
// requests of any shape.
func TestEncodeIsWhole(t *testing.T) {
	for _, e := range listEncoders {
		t.Run(e.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				req := genRequest(t)
				want, wantErr := e.want(req)
				got, gotErr := e.encode(req)
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
					t.Fatalf("item by item:\n%s (%v)\nwhole:\n%s (%v)", got, gotErr, want, wantErr)
				}
			})
		})
	}
}

// TestMemoIsWhole: a conversation's requests encoded through one Memo are, byte for byte, what
// they are whole — as the conversation grows, as its messages are changed in place (the same
// backing arrays, other contents), dropped, repeated and reordered, as its system prompt and the
// tools offered (free-form or not) change, and as requests that fail to encode come between;
// with each body given back to the memo as the agent gives it (providertest.HeldBody).
func TestMemoIsWhole(t *testing.T) {
	for _, e := range listEncoders {
		t.Run(e.name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				memo := &provider.Memo{}
				var held providertest.HeldBody
				req := genRequest(t)
				for step := range rapid.IntRange(1, 8).Draw(t, "requests") {
					msgs := req.Messages
					switch rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("other%d", step)) {
					case 0: // the system prompt changes
						req.System = rapid.SampledFrom([]string{"", "be brief <&>", "other"}).Draw(t, "new system")
					case 1: // the tools offered change
						req.Tools = genTools(t)
					default:
						msgs = providertest.Evolve(t, msgs, genOpenAIParts)
					}
					req.Messages, req.Memo = msgs, nil
					want, wantErr := e.want(req)
					req.Memo = memo
					got, gotErr := e.encode(req)
					if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
						t.Fatalf("request %d with the memo:\n%s (%v)\nwhole:\n%s (%v)", step, got, gotErr, want, wantErr)
					}
					if err := held.Next(memo, got, gotErr); err != nil {
						t.Fatalf("request %d: %v", step, err)
					}
				}
			})
		})
	}
}

// TestMemoIsUsed: after a request, the memo holds every one of its messages under the encoder's
// format, so the next request of the conversation takes them from it (else TestMemoIsWhole would
// hold of a memo never used).
func TestMemoIsUsed(t *testing.T) {
	req := conversation(40)
	for _, e := range []struct {
		name   string
		encode func(provider.Request) ([]byte, error)
		format string
	}{
		{"chat", EncodeChat, "chat after a system message"},
		{"responses", EncodeResponses, "responses, free-form: "},
	} {
		req.Memo = &provider.Memo{}
		if _, err := e.encode(req); err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		if same := req.Memo.Start(e.format, req.Messages).Same(); same != len(req.Messages) {
			t.Errorf("%s: the memo holds %d of the request's %d messages", e.name, same, len(req.Messages))
		}
	}
}

// TestMemoCustomCallResult: a result whose call was made free-form in a message the memo holds
// (and which is not rendered again) still goes as a custom tool call's output.
func TestMemoCustomCallResult(t *testing.T) {
	req := provider.Request{Model: "gpt-5", Tools: []provider.Tool{{Name: "apply_patch", Grammar: "start: /.+/"}},
		Messages: []record.Message{
			{Role: record.User, Parts: []record.Part{text("patch it")}},
			{Role: record.Assistant, Parts: []record.Part{call("call_1", "apply_patch", `{"input":"*** Begin Patch"}`)}},
		}, Memo: &provider.Memo{}}
	if _, err := EncodeResponses(req); err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, record.Message{Role: record.User, Parts: []record.Part{{Type: record.PartToolResult, CallID: "call_1", Text: "done"}}})
	got, err := EncodeResponses(req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, []byte(`{"type":"custom_tool_call_output","call_id":"call_1","output":"done"}`)) {
		t.Errorf("the result of a free-form call the memo held is not a custom tool call output:\n%s", got)
	}
}
