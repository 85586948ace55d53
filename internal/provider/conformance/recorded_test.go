package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
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
				var deltas strings.Builder
				reply, err := w.send(srv.URL)(context.Background(), x.Request, func(ev provider.Event) {
					if ev.Type == provider.TextDelta {
						deltas.WriteString(ev.Text)
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

// refusedShape names the recorded requests a service refused for their shape (not for a model, a
// key or a length), which a validator must refuse too.
var refusedShape = map[string]bool{
	"anthropic-messages/ddtrace-error-400-invalid-shape": true, // messages[0] is a string
	"openai-chat/aigw-error-400-unsupported-param":       true, // content null (the service named max_tokens first)
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
			}
		}
	}
}
