package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/openai"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
)

// client is one provider client under test and the wire format it speaks.
type client struct {
	name   string
	format sim.Format
	new    func(base string) provider.Model
}

var clients = []client{
	{"anthropic", sim.Anthropic, func(base string) provider.Model {
		return anthropic.New(anthropic.Config{BaseURL: base, APIKey: "sim-key"})
	}},
	{"chat", sim.Chat, func(base string) provider.Model {
		return openai.NewChat(openai.Config{BaseURL: base + "/v1", APIKey: "sim-key"})
	}},
	{"chat-compat", sim.Chat, func(base string) provider.Model {
		return openai.NewChat(openai.Config{BaseURL: base + "/v1", Compat: openai.Compat{MaxTokens: true}})
	}},
	{"responses", sim.Responses, func(base string) provider.Model {
		return openai.NewResponses(openai.Config{BaseURL: base + "/v1", APIKey: "sim-key"})
	}},
}

const bashSchema = `{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`

func request(msgs ...record.Message) provider.Request {
	return provider.Request{
		Model:     "sim-1",
		System:    "You are being tested against the rein simulator.",
		Messages:  msgs,
		Tools:     []provider.Tool{{Name: "bash", Description: "Run a shell command.", Schema: json.RawMessage(bashSchema)}},
		MaxTokens: 1024,
	}
}

// encode is the first two steps of provider.Model: the request's bytes, which the client's own
// validator must pass.
func encode(t *testing.T, m provider.Model, req provider.Request) []byte {
	t.Helper()
	body, err := m.Encode(req)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if v := m.Validate(body); v != nil {
		t.Fatalf("the client's validator refuses what its encoder made: %v\n%s", v, body)
	}
	return body
}

func user(text string) record.Message {
	return record.Message{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: text}}}
}

func text(s string) record.Part { return record.Part{Type: record.PartText, Text: s} }

func toolCall(name, args string) record.Part {
	return record.Part{Type: record.PartToolCall, Name: name, Args: json.RawMessage(args)}
}

// expect is what every client must make of one request.
type expect struct {
	parts      []record.Part // thinking parts are expected signed only where the format signs them
	stop       string
	incomplete []int
	thinking   string // the live thinking text published

	class   provider.Class // "" for success
	classBy map[sim.Format]provider.Class
	status  int
	partial bool
}

// tcase is one scripted conversation: each expectation is one request. After a reply with tool
// calls the next request carries the reply and a result for each call; after any other reply, the
// reply and a new prompt; after a failure, the same request again.
type tcase struct {
	name   string
	steps  []sim.Step
	opts   sim.Options
	expect []expect
}

func ptr[T any](v T) *T { return &v }

var cases = []tcase{
	{name: "text",
		steps:  []sim.Step{{Text: "Hello from the script."}},
		expect: []expect{{parts: []record.Part{text("Hello from the script.")}, stop: provider.StopEnd}}},
	{name: "tool call and result",
		steps: []sim.Step{
			{Text: "Looking.", ToolCalls: []sim.ToolCall{{Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}}},
			{Text: "Two files."}},
		expect: []expect{
			{parts: []record.Part{text("Looking."), toolCall("bash", `{"command":"ls"}`)}, stop: provider.StopToolUse},
			{parts: []record.Part{text("Two files.")}, stop: provider.StopEnd}}},
	{name: "parallel tool calls",
		steps: []sim.Step{{ToolCalls: []sim.ToolCall{
			{Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)},
			{Name: "bash", Arguments: json.RawMessage(`{"command":"pwd"}`)}}},
			{Text: "Both ran."}},
		expect: []expect{
			{parts: []record.Part{toolCall("bash", `{"command":"ls"}`), toolCall("bash", `{"command":"pwd"}`)}, stop: provider.StopToolUse},
			{parts: []record.Part{text("Both ran.")}, stop: provider.StopEnd}}},
	{name: "thinking",
		steps: []sim.Step{{Thinking: &sim.Thinking{Text: "Pondering the question.", Signature: "c2ltLXNpZw=="}, Text: "Answer."}},
		expect: []expect{{
			parts:    []record.Part{{Type: record.PartThinking, Text: "Pondering the question.", Signature: "c2ltLXNpZw=="}, text("Answer.")},
			stop:     provider.StopEnd,
			thinking: "Pondering the question."}}},
	{name: "rate limited then success",
		steps: []sim.Step{{Status: 429, RetryAfter: "2", ShouldRetry: ptr(true)}, {Text: "Now it works."}},
		expect: []expect{
			{class: provider.RateLimited, status: 429},
			{parts: []record.Part{text("Now it works.")}, stop: provider.StopEnd}}},
	{name: "overloaded",
		steps:  []sim.Step{{Status: 529}, {Status: 503}, {Status: 500}},
		expect: []expect{{class: provider.Overloaded, status: 529}, {class: provider.Overloaded, status: 503}, {class: provider.Server, status: 500}}},
	{name: "mid-stream error",
		steps: []sim.Step{{Text: "Partial answer here", ErrorEvent: &sim.ErrorEvent{AfterDeltas: 1}}},
		expect: []expect{{parts: []record.Part{text("Partial ")}, partial: true,
			// The providers' own words: Anthropic's stream errors are overloaded_error, OpenAI's server_error.
			classBy: map[sim.Format]provider.Class{sim.Anthropic: provider.Overloaded, sim.Chat: provider.Server, sim.Responses: provider.Server}}}},
	{name: "cut connection",
		steps:  []sim.Step{{Text: "one two three", Cut: &sim.Cut{AfterDeltas: 2}}},
		expect: []expect{{parts: []record.Part{text("one two ")}, class: provider.Network, partial: true}}},
	{name: "cut mid-call",
		steps:  []sim.Step{{ToolCalls: []sim.ToolCall{{Name: "bash", Arguments: json.RawMessage(`{"command":"ls -la /tmp"}`)}}, Cut: &sim.Cut{AfterDeltas: 2}}},
		expect: []expect{{parts: []record.Part{toolCall("bash", `{"command":"ls -`)}, incomplete: []int{0}, class: provider.Network, partial: true}}},
	{name: "cut cleanly",
		steps:  []sim.Step{{Text: "one two three", Cut: &sim.Cut{AfterDeltas: 3, Clean: true}}},
		expect: []expect{{parts: []record.Part{text("one two three")}, class: provider.Network, partial: true}}},
	{name: "max tokens inside a tool call",
		steps: []sim.Step{{Text: "Writing.", ToolCalls: []sim.ToolCall{
			{Name: "bash", Arguments: json.RawMessage(`{"command":"true"}`)},
			{Name: "bash", Arguments: json.RawMessage(`{"command":"echo 0123456789"}`)}}, MaxTokens: true}},
		expect: []expect{{parts: []record.Part{text("Writing."), toolCall("bash", `{"command":"true"}`), toolCall("bash", `{"command":"ec`)},
			stop: provider.StopMaxTokens, incomplete: []int{2}}}},
	{name: "max tokens in text",
		steps:  []sim.Step{{Text: "A long answer that", MaxTokens: true}},
		expect: []expect{{parts: []record.Part{text("A long answer that")}, stop: provider.StopMaxTokens}}},
	{name: "empty reply",
		steps:  []sim.Step{{Empty: true}},
		expect: []expect{{stop: provider.StopEnd}}},
	{name: "non-object arguments",
		steps: []sim.Step{{ToolCalls: []sim.ToolCall{
			{Name: "bash", Arguments: json.RawMessage(`"ls -la"`)},
			{Name: "bash", Arguments: json.RawMessage(`["ls"]`)}}}},
		expect: []expect{{parts: []record.Part{toolCall("bash", "ls -la"), toolCall("bash", `["ls"]`)}, stop: provider.StopToolUse}}},
	{name: "context limit",
		steps:  []sim.Step{{ContextLimit: 10, Text: "never said"}, {Text: "fits now"}},
		expect: []expect{{class: provider.ContextLength, status: 400}, {parts: []record.Part{text("fits now")}, stop: provider.StopEnd}}},
	{name: "global context limit",
		opts:   sim.Options{ContextLimit: 10}, // refused before any step is taken
		steps:  nil,
		expect: []expect{{class: provider.ContextLength, status: 400}}},
}

func TestConformance(t *testing.T) {
	for _, c := range cases {
		for _, cl := range clients {
			t.Run(c.name+"/"+cl.name, func(t *testing.T) {
				opts := c.opts
				opts.Script = &sim.Script{Steps: c.steps, Strict: true}
				s := sim.New(opts)
				ts := httptest.NewServer(s)
				defer ts.Close()
				m := cl.new(ts.URL)
				// The conversation's validator (incremental where the client has one) says
				// exactly what the client's Validate says.
				conv := provider.ValidatorFor(m)
				msgs := []record.Message{user("Please answer.")}
				for i, want := range c.expect {
					var thinking strings.Builder
					// The client's own validator passes what its encoder makes, and Send posts it.
					body := encode(t, m, request(msgs...))
					if v := conv.Validate(body); v != nil {
						t.Fatalf("request %d: the conversation's validator refuses what the client's passes: %v", i, v)
					}
					reply, err := m.Send(context.Background(), body, func(ev provider.Event) {
						if ev.Type == provider.ThinkingDelta {
							thinking.WriteString(ev.Text)
						}
					})
					log := s.Requests()
					last := log[len(log)-1]
					if last.Violation != nil {
						t.Fatalf("request %d refused by the validator: %v\n%s", i, last.Violation, last.Body)
					}
					check(t, i, cl.format, want, reply, err, last)
					if got := thinking.String(); got != want.thinking {
						t.Errorf("request %d: live thinking %q, want %q", i, got, want.thinking)
					}
					if err == nil {
						msgs = next(msgs, reply)
					}
				}
				if n := s.Pending(); n != 0 {
					t.Errorf("%d script steps were not played", n)
				}
			})
		}
	}
}

// next extends a conversation after a successful reply.
func next(msgs []record.Message, reply provider.Reply) []record.Message {
	msgs = append(msgs, record.Message{Role: record.Assistant, Parts: reply.Parts})
	var results []record.Part
	for _, p := range reply.Parts {
		if p.Type == record.PartToolCall {
			results = append(results, record.Part{Type: record.PartToolResult, CallID: p.CallID, Text: "a.txt\nb.txt", Outcome: record.OK})
		}
	}
	if results == nil {
		return append(msgs, user("Go on."))
	}
	return append(msgs, record.Message{Role: record.User, Parts: results})
}

func check(t *testing.T, i int, f sim.Format, want expect, reply provider.Reply, err error, req sim.Request) {
	t.Helper()
	class := want.class
	if c, ok := want.classBy[f]; ok {
		class = c
	}
	if class == "" {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if !strings.HasPrefix(reply.ID, "sim_") || reply.Model != sim.DefaultModel {
			t.Errorf("request %d: id %q model %q, want the simulator's", i, reply.ID, reply.Model)
		}
		if reply.Usage.Input != int64(req.Estimate) || (len(want.parts) > 0 && reply.Usage.Output == 0) {
			t.Errorf("request %d: usage %+v, want input %d", i, reply.Usage, req.Estimate)
		}
		if reply.StopReason != want.stop {
			t.Errorf("request %d: stop %q, want %q", i, reply.StopReason, want.stop)
		}
	} else {
		var pe *provider.Error
		if !errors.As(err, &pe) {
			t.Fatalf("request %d: error %v, want a %s *provider.Error", i, err, class)
		}
		if pe.Class != class || pe.Status != want.status || pe.Partial != want.partial {
			t.Errorf("request %d: %s status %d partial %v (%v), want %s status %d partial %v",
				i, pe.Class, pe.Status, pe.Partial, pe, class, want.status, want.partial)
		}
		if pe.Status != 0 && (pe.Message == "" || pe.Type == "") {
			t.Errorf("request %d: the provider's type and message were lost: %+v", i, pe)
		}
	}
	parts := want.parts
	if f != sim.Anthropic {
		// OpenAI's wires keep reasoning unsigned: a Responses reasoning item is kept whole only
		// when the request asked for its encrypted content, which these requests do not.
		parts = slices.Clone(parts)
		for j := range parts {
			parts[j].Signature = ""
		}
	}
	if len(reply.Parts) != len(parts) {
		t.Fatalf("request %d: parts %+v, want %+v", i, reply.Parts, parts)
	}
	for j, p := range parts {
		got := reply.Parts[j]
		if got.Type != p.Type || got.Text != p.Text || got.Signature != p.Signature || got.Name != p.Name || string(got.Args) != string(p.Args) {
			t.Errorf("request %d part %d: %+v (args %s), want %+v (args %s)", i, j, got, got.Args, p, p.Args)
		}
		if got.Type == record.PartToolCall && got.CallID == "" {
			t.Errorf("request %d part %d: no call id", i, j)
		}
	}
	if !slices.Equal(reply.Incomplete, want.incomplete) {
		t.Errorf("request %d: incomplete %v, want %v", i, reply.Incomplete, want.incomplete)
	}
}

// TestRetryAfter runs 429 and 529 answers through provider.Policy: each client reports the
// provider's retry-after (retry-after-ms first) and the policy retries to a success.
func TestRetryAfter(t *testing.T) {
	for _, cl := range clients {
		t.Run(cl.name, func(t *testing.T) {
			s := sim.New(sim.Options{Script: &sim.Script{Strict: true, Steps: []sim.Step{
				{Status: 429, RetryAfter: "2"},
				{Status: 529, RetryAfter: "9", RetryAfterMs: 1500},
				{Text: "Third time lucky."}}}})
			ts := httptest.NewServer(s)
			defer ts.Close()
			var waits []provider.Wait
			policy := provider.Policy{Cap: time.Millisecond} // the waits are reported, not slept
			m := cl.new(ts.URL)
			reply, err := policy.Send(context.Background(), m, encode(t, m, request(user("hi"))), nil,
				func(w provider.Wait) { waits = append(waits, w) })
			if err != nil || len(reply.Parts) != 1 || reply.Parts[0].Text != "Third time lucky." {
				t.Fatalf("reply %+v err %v", reply, err)
			}
			if len(waits) != 2 ||
				waits[0].Err.Class != provider.RateLimited || waits[0].Err.RetryAfter != 2*time.Second ||
				waits[1].Err.Class != provider.Overloaded || waits[1].Err.RetryAfter != 1500*time.Millisecond {
				for _, w := range waits {
					t.Logf("wait %+v: %+v", w, w.Err)
				}
				t.Fatal("the waits do not report the provider's retry-after")
			}
		})
	}
}

// TestShouldRetryFalse: x-should-retry: false vetoes a retry of a retryable class.
func TestShouldRetryFalse(t *testing.T) {
	for _, cl := range clients {
		t.Run(cl.name, func(t *testing.T) {
			s := sim.New(sim.Options{Script: &sim.Script{Steps: []sim.Step{{Status: 500, ShouldRetry: ptr(false)}, {Text: "unused"}}}})
			ts := httptest.NewServer(s)
			defer ts.Close()
			m := cl.new(ts.URL)
			_, err := provider.Policy{Cap: time.Millisecond}.Send(context.Background(), m, encode(t, m, request(user("hi"))), nil, nil)
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Class != provider.Server || pe.ShouldRetry == nil || *pe.ShouldRetry || s.Pending() != 1 {
				t.Errorf("err %v, pending %d", err, s.Pending())
			}
		})
	}
}

// TestCancelSlowStream: cancelling a slow stream ends the client's call and the simulator's
// handler promptly, with the cancelled class. The call's start arrives before the first slow
// delta and is the signal to cancel.
func TestCancelSlowStream(t *testing.T) {
	for _, cl := range clients {
		t.Run(cl.name, func(t *testing.T) {
			s := sim.New(sim.Options{Script: &sim.Script{Steps: []sim.Step{{
				ToolCalls: []sim.ToolCall{{Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}},
				DelayMs:   int(time.Hour / time.Millisecond)}}}})
			ts := httptest.NewServer(s)
			defer ts.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var start time.Time
			reply, err := provider.Stream(ctx, cl.new(ts.URL), request(user("hi")), func(ev provider.Event) {
				if ev.Type == provider.ToolCallStart {
					start = time.Now()
					cancel()
				}
			})
			if start.IsZero() {
				t.Fatalf("the call never started: %+v %v", reply, err)
			}
			select {
			case <-s.Requests()[0].Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the simulator's handler is still running")
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("cancel took %v", d)
			}
			var pe *provider.Error
			if !errors.As(err, &pe) || pe.Class != provider.Cancelled || reply.StopReason != provider.StopCancelled {
				t.Errorf("err %v stop %q, want cancelled", err, reply.StopReason)
			}
			if len(reply.Parts) != 1 || !slices.Equal(reply.Incomplete, []int{0}) {
				t.Errorf("reply %+v, want the started call, incomplete", reply)
			}
		})
	}
}

// TestPolicy plays the simulator's unscripted policy through every client: a request for files
// draws a bash call, its result draws a summary.
func TestPolicy(t *testing.T) {
	for _, cl := range clients {
		t.Run(cl.name, func(t *testing.T) {
			s := sim.New(sim.Options{})
			ts := httptest.NewServer(s)
			defer ts.Close()
			m := cl.new(ts.URL)
			msgs := []record.Message{user("list the files here")}
			reply, err := provider.Stream(context.Background(), m, request(msgs...), nil)
			if err != nil || reply.StopReason != provider.StopToolUse || len(reply.Parts) != 2 ||
				reply.Parts[1].Name != "bash" || string(reply.Parts[1].Args) != `{"command":"ls -la"}` {
				t.Fatalf("reply %+v err %v", reply, err)
			}
			msgs = next(msgs, reply)
			reply, err = provider.Stream(context.Background(), m, request(msgs...), nil)
			if err != nil || reply.StopReason != provider.StopEnd || len(reply.Parts) != 1 || !strings.Contains(reply.Parts[0].Text, "a.txt\nb.txt") {
				t.Fatalf("reply %+v err %v", reply, err)
			}
			for _, r := range s.Requests() {
				if r.Violation != nil {
					t.Errorf("refused: %v", r.Violation)
				}
			}
		})
	}
}
