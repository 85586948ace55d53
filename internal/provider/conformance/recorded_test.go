package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/openai"
	"github.com/reinhq/rein/internal/provider/recorded"
	"github.com/reinhq/rein/internal/record"
)

// wire is one recorded wire format and the client rein speaks it with.
type wire struct {
	api      string
	send     func(base string) func(context.Context, []byte, func(provider.Event)) (provider.Reply, error)
	validate func([]byte) *provider.Violation
}

var wires = []wire{
	{"anthropic-messages", func(base string) func(context.Context, []byte, func(provider.Event)) (provider.Reply, error) {
		return anthropic.New(anthropic.Config{BaseURL: base, APIKey: "replay-key"}).Send
	}, anthropic.Validate},
	{"openai-chat", func(base string) func(context.Context, []byte, func(provider.Event)) (provider.Reply, error) {
		return openai.NewChat(openai.Config{BaseURL: base, APIKey: "replay-key"}).Send
	}, openai.ValidateChat},
	{"openrouter-chat", func(base string) func(context.Context, []byte, func(provider.Event)) (provider.Reply, error) {
		return openai.NewChat(openai.Config{BaseURL: base, APIKey: "replay-key"}).Send
	}, openai.ValidateChat},
	{"openai-responses", func(base string) func(context.Context, []byte, func(provider.Event)) (provider.Reply, error) {
		return openai.NewResponses(openai.Config{BaseURL: base, APIKey: "replay-key"}).Send
	}, openai.ValidateResponses},
}

// TestRecordedExchanges replays every recorded exchange through rein's real client over real
// HTTP: the recorded request body is sent, and a local server answers with the recorded status
// and body byte for byte. A recorded stream must decode into a complete reply (or end in an error
// the server itself sent), with tool calls that carry ids, names and the arguments streamed; a
// recorded error must be sorted into the class its status and body call for, with the provider's
// own message kept.
func TestRecordedExchanges(t *testing.T) {
	for _, w := range wires {
		for _, x := range recorded.Load(t, w.api) {
			if x.Status == http.StatusOK && !x.Stream {
				continue // a non-streamed answer: rein always streams (its request bodies are below)
			}
			t.Run(w.api+"/"+x.Name, func(t *testing.T) {
				var got []byte
				srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
					got, _ = readAll(r)
					if x.Stream {
						rw.Header().Set("Content-Type", "text/event-stream")
					} else {
						rw.Header().Set("Content-Type", "application/json")
					}
					rw.WriteHeader(x.Status)
					rw.Write(x.Body)
				}))
				defer srv.Close()
				var deltas, thought strings.Builder
				reply, err := w.send(srv.URL)(context.Background(), x.Request, func(ev provider.Event) {
					switch ev.Type {
					case provider.TextDelta:
						deltas.WriteString(ev.Text)
					case provider.ThinkingDelta:
						thought.WriteString(ev.Text)
					}
				})
				if !bytes.Equal(got, x.Request) {
					t.Fatalf("the client did not send the body it was given byte for byte")
				}
				if x.Status != http.StatusOK {
					checkRecordedError(t, x, err)
					return
				}
				checkRecordedStream(t, x, reply, err, deltas.String())
				checkRecordedThinking(t, x, reply, err, thought.String())
			})
		}
	}
}

func readAll(r *http.Request) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(r.Body)
	return b.Bytes(), err
}

// checkRecordedError holds a recorded error response to the class DESIGN §11.2 gives it.
func checkRecordedError(t *testing.T, x recorded.Exchange, err error) {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("status %d answered %v, not a classified *provider.Error", x.Status, err)
	}
	body := strings.ToLower(string(x.Body))
	want := provider.InvalidRequest
	switch {
	case x.Status == 401 || x.Status == 403:
		want = provider.Auth
	case x.Status == 429:
		want = provider.RateLimited
	case strings.Contains(body, "too long") || strings.Contains(body, "context_length"):
		want = provider.ContextLength
	}
	if pe.Class != want || pe.Status != x.Status {
		t.Fatalf("classified %s (status %d), want %s (status %d): %v", pe.Class, pe.Status, want, x.Status, pe)
	}
	if pe.Message == "" || !strings.Contains(string(x.Body), firstWords(pe.Message)) {
		t.Fatalf("message %q is not the provider's own (body %s)", pe.Message, x.Body)
	}
	if pe.Class.Retryable() != (want == provider.RateLimited) {
		t.Fatalf("class %s retryable=%v", pe.Class, pe.Class.Retryable())
	}
}

// firstWords is the start of a message, which a body holds verbatim even where the message
// continues with escaped characters.
func firstWords(s string) string {
	if len(s) > 20 {
		s = s[:20]
	}
	if i := strings.IndexAny(s, `"\<>&`); i >= 0 {
		s = s[:i]
	}
	return s
}

// checkRecordedStream holds a decoded recorded stream to what the stream itself says.
func checkRecordedStream(t *testing.T, x recorded.Exchange, reply provider.Reply, err error, deltas string) {
	t.Helper()
	if err != nil {
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Err != nil || pe.Class == provider.Network {
			t.Fatalf("a recorded stream failed in the client (not an error the server sent): %v", err)
		}
		t.Logf("the server ended the stream with an error: %v", pe)
		return
	}
	if reply.StopReason == "" {
		t.Fatalf("no stop reason in %+v", reply)
	}
	var text strings.Builder
	calls := 0
	for i, p := range reply.Parts {
		switch p.Type {
		case record.PartText:
			text.WriteString(p.Text)
		case record.PartToolCall:
			calls++
			if p.CallID == "" || p.Name == "" {
				t.Fatalf("part %d: a tool call without an id or a name: %+v", i, p)
			}
			incomplete := false
			for _, j := range reply.Incomplete {
				incomplete = incomplete || j == i
			}
			var obj map[string]any
			if !incomplete && json.Unmarshal(p.Args, &obj) != nil {
				t.Fatalf("part %d: complete tool call %s has arguments %q, not a JSON object", i, p.Name, p.Args)
			}
		}
	}
	if text.String() != deltas {
		t.Fatalf("the reply's text %q is not the text streamed live %q", text.String(), deltas)
	}
	if want := toolCallsIn(x); calls != want {
		t.Fatalf("%d tool calls decoded, the stream holds %d", calls, want)
	}
	if calls > 0 && reply.StopReason != provider.StopToolUse && reply.StopReason != provider.StopMaxTokens {
		t.Logf("tool calls with stop reason %q", reply.StopReason)
	}
	t.Logf("%d parts (%d tool calls), stop %q, usage %+v", len(reply.Parts), calls, reply.StopReason, reply.Usage)
}

// toolCallsIn counts the function tool calls a recorded stream opens, read from its own JSON
// frames, independently of the decoders under test.
func toolCallsIn(x recorded.Exchange) int {
	ids := map[string]bool{}
	for _, line := range strings.Split(string(x.Body), "\n") {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:")
		if !ok {
			continue
		}
		var v map[string]any
		if json.Unmarshal([]byte(strings.TrimSpace(data)), &v) != nil {
			continue
		}
		switch x.API {
		case "anthropic-messages":
			if cb, ok := v["content_block"].(map[string]any); ok && cb["type"] == "tool_use" {
				ids[cb["id"].(string)] = true
			}
		case "openai-responses":
			if it, ok := v["item"].(map[string]any); ok && it["type"] == "function_call" {
				ids[it["call_id"].(string)] = true
			}
		default:
			choices, _ := v["choices"].([]any)
			for _, c := range choices {
				delta, _ := c.(map[string]any)["delta"].(map[string]any)
				calls, _ := delta["tool_calls"].([]any)
				for _, tc := range calls {
					if id, _ := tc.(map[string]any)["id"].(string); id != "" {
						ids[id] = true
					}
				}
			}
		}
	}
	return len(ids)
}

// thought is the thinking a recorded stream holds, read from its own JSON frames independently
// of the decoders under test.
type thought struct {
	blocks int      // thinking blocks (Anthropic), reasoning items (Responses), 0 for Chat
	signed int      // of them, the signed ones (Anthropic)
	items  []string // Responses: each reasoning item carrying encrypted content, as sent
	text   string   // Chat: the reasoning text, in order
}

func thinkingIn(x recorded.Exchange) thought {
	var th thought
	for _, line := range strings.Split(string(x.Body), "\n") {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:")
		if !ok {
			continue
		}
		data = strings.TrimSpace(data)
		switch x.API {
		case "anthropic-messages":
			var e struct {
				ContentBlock *struct{ Type string } `json:"content_block"`
				Delta        *struct{ Type string } `json:"delta"`
			}
			if json.Unmarshal([]byte(data), &e) != nil {
				continue
			}
			if e.ContentBlock != nil && e.ContentBlock.Type == "thinking" {
				th.blocks++
			}
			if e.Delta != nil && e.Delta.Type == "signature_delta" {
				th.signed++
			}
		case "openai-responses":
			var e struct {
				Type string
				Item json.RawMessage
			}
			var it struct {
				Type             string
				EncryptedContent string `json:"encrypted_content"`
			}
			if json.Unmarshal([]byte(data), &e) != nil || e.Type != "response.output_item.done" || json.Unmarshal(e.Item, &it) != nil || it.Type != "reasoning" {
				continue
			}
			th.blocks++
			if it.EncryptedContent != "" {
				th.items = append(th.items, string(e.Item))
			}
		default:
			var e struct {
				Choices []struct {
					Delta struct {
						Reasoning        *string `json:"reasoning"`
						ReasoningContent *string `json:"reasoning_content"`
						ReasoningDetails []struct {
							Type, Text, Summary string
						} `json:"reasoning_details"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if json.Unmarshal([]byte(data), &e) != nil || len(e.Choices) == 0 {
				continue
			}
			d := e.Choices[0].Delta
			switch {
			case d.ReasoningContent != nil && *d.ReasoningContent != "":
				th.text += *d.ReasoningContent
			case d.Reasoning != nil && *d.Reasoning != "":
				th.text += *d.Reasoning
			default:
				for _, r := range d.ReasoningDetails {
					th.text += r.Text + r.Summary
				}
			}
		}
	}
	return th
}

// withThinking names the recorded streams that hold thinking or reasoning (and end well), so
// that the checks below cannot pass by reading none.
var withThinking = map[string]bool{
	"anthropic-messages/ddtracejs-claude-code-thinking-tool-stream": true,
	"anthropic-messages/fantasy-sonnet4-thinking-tool-stream":       true,
	"anthropic-messages/pydantic-code-exec-server-tool-stream":      true,
	"anthropic-messages/pydantic-thinking-text-stream":              true,
	"openrouter-chat/fantasy-anthropic-thinking-tool-stream":        true,
	"openrouter-chat/fantasy-glm-tool-stream":                       true,
	"openrouter-chat/fantasy-grok-reasoning-stream":                 true,
	"openrouter-chat/pydantic-reasoning-stream":                     true,
	"openrouter-chat/rubyllm-reasoning-details-tool-stream":         true,
	"openai-responses/fantasy-gpt5-reasoning-summary-tool-stream":   true,
}

// checkRecordedThinking holds a decoded recorded stream to the thinking the stream holds: every
// Anthropic thinking block kept with its signature; every Responses reasoning item kept, and
// one carrying its encrypted content kept whole, byte for byte as the stream sent it; every piece
// of Chat reasoning kept as unsigned thinking; and what was published live is what was kept.
func checkRecordedThinking(t *testing.T, x recorded.Exchange, reply provider.Reply, err error, live string) {
	t.Helper()
	if err != nil {
		return // a stream the server ended with an error: checkRecordedStream said so
	}
	want := thinkingIn(x)
	var kept []record.Part
	var text strings.Builder
	for _, p := range reply.Parts {
		if p.Type == record.PartThinking {
			kept = append(kept, p)
			text.WriteString(p.Text)
		}
	}
	switch x.API {
	case "anthropic-messages":
		signed := 0
		for _, p := range kept {
			if p.Signature != "" {
				signed++
			}
		}
		if len(kept) != want.blocks || signed != want.signed {
			t.Fatalf("%d thinking parts (%d signed), the stream holds %d blocks (%d signed)", len(kept), signed, want.blocks, want.signed)
		}
	case "openai-responses":
		var items []string
		for _, p := range kept {
			if p.Data != "" {
				items = append(items, p.Data)
			}
		}
		if len(kept) != want.blocks || !slices.Equal(items, want.items) {
			t.Fatalf("%d thinking parts keeping items %q; the stream holds %d reasoning items, these with encrypted content: %q", len(kept), items, want.blocks, want.items)
		}
	default:
		for _, p := range kept {
			if p.Signature != "" || p.Data != "" {
				t.Fatalf("Chat reasoning kept with something to send back: %+v", p)
			}
		}
		if text.String() != want.text {
			t.Fatalf("thinking kept %q, the stream's reasoning is %q", text.String(), want.text)
		}
	}
	if text.String() != live {
		t.Fatalf("thinking kept %q, published live %q", text.String(), live)
	}
	if thinks := withThinking[x.API+"/"+x.Name]; thinks != (len(kept) > 0) {
		t.Fatalf("%d thinking parts decoded; the stream is listed with thinking: %v", len(kept), thinks)
	}
	if len(kept) > 0 {
		t.Logf("%d thinking parts, %d bytes of thinking", len(kept), text.Len())
	}
}

// refusedShape names the recorded requests a service refused for their shape (not for a model, a
// key or a length), which a validator must refuse too.
var refusedShape = map[string]bool{
	"anthropic-messages/ddtrace-error-400-invalid-shape": true, // messages[0] is a string
	"openai-chat/aigw-error-400-unsupported-param":       true, // content null (the service named max_tokens first)
	// A reasoning item (stored: store left at true) followed by an assistant message without
	// the id the API pairs them by: "... was provided without its required following item."
	"openai-responses/pydantic-error-400-orphan-reasoning": true,
}

// sameWords names the refusals the validator gives in exactly the service's words.
var sameWords = map[string]bool{
	"openai-responses/pydantic-error-400-orphan-reasoning": true,
}

// TestRecordedRequests runs each wire's validator over the request bodies the real services
// answered: one they accepted (status 200) must pass, unless it uses what rein never sends; one
// refused for its shape must be refused.
func TestRecordedRequests(t *testing.T) {
	for _, w := range wires {
		for _, x := range recorded.Load(t, w.api) {
			v := w.validate(x.Request)
			switch {
			case x.Status == http.StatusOK && v != nil:
				t.Errorf("%s/%s: the service accepted it, the validator refuses it: %v", w.api, x.Name, v)
			case refusedShape[w.api+"/"+x.Name] && v == nil:
				t.Errorf("%s/%s: the service refused its shape, the validator passes it", w.api, x.Name)
			case sameWords[w.api+"/"+x.Name]:
				var body struct{ Error struct{ Message string } }
				if err := json.Unmarshal(x.Body, &body); err != nil || v.Message != body.Error.Message {
					t.Errorf("%s/%s: the validator says %q, the service said %q", w.api, x.Name, v.Message, body.Error.Message)
				}
			}
		}
	}
}

// TestRecordedReasoningRoundTrip decodes OpenAI's recorded reasoning-then-tool-call stream and
// builds rein's next request from it: the reasoning item goes back byte for byte, right before
// the function call it preceded, and the request passes the validator.
func TestRecordedReasoningRoundTrip(t *testing.T) {
	var x recorded.Exchange
	for _, e := range recorded.Load(t, "openai-responses") {
		if e.Name == "fantasy-gpt5-reasoning-summary-tool-stream" {
			x = e
		}
	}
	if x.Name == "" {
		t.Fatal("the recorded reasoning stream is missing")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/event-stream")
		rw.Write(x.Body)
	}))
	defer srv.Close()
	reply, err := openai.NewResponses(openai.Config{BaseURL: srv.URL}).Send(context.Background(), x.Request, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := thinkingIn(x).items
	if len(want) != 1 || len(reply.Parts) != 2 || reply.Parts[0].Data != want[0] || reply.Parts[1].Type != record.PartToolCall {
		t.Fatalf("reply %+v", reply.Parts)
	}
	call := reply.Parts[1]
	req := provider.Request{Model: "gpt-5", Effort: "high", MaxTokens: 4096, Messages: []record.Message{
		{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: "What's the weather in Florence, Italy?"}}},
		{Role: record.Assistant, Parts: reply.Parts},
		{Role: record.User, Parts: []record.Part{{Type: record.PartToolResult, CallID: call.CallID, Text: "40 C"}}},
	}}
	body, err := openai.EncodeResponses(req)
	if err != nil {
		t.Fatal(err)
	}
	if v := openai.ValidateResponses(body); v != nil {
		t.Fatalf("the next request is refused: %v", v)
	}
	var sent struct{ Input []json.RawMessage }
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	var fc struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
	}
	if len(sent.Input) != 4 || string(sent.Input[1]) != want[0] || json.Unmarshal(sent.Input[2], &fc) != nil || fc.Type != "function_call" || fc.CallID != call.CallID {
		t.Fatalf("the reasoning item is not sent back in place:\n%s", body)
	}
}
