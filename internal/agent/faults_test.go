package agent_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// TestRetryableStatuses: 429, 529, 500 and 503 with retry-after, mid-session, each recorded as a
// provider_error and a retry_scheduled event, then the request succeeds.
func TestRetryableStatuses(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(
			bashStep("First.", "echo one"),
			`{"status":429,"retry_after":"1"}`,
			`{"status":529,"retry_after_ms":2}`,
			`{"status":500,"retry_after":"1","retry_after_ms":3}`,
			`{"status":503,"retry_after":"2"}`,
			textStep("Made it."),
		)})
		out := h.run(context.Background(), "go")
		expect(t, out, fold.Replied, false)
		rs := h.records()
		quiesced(t, rs, fold.Replied)
		var classes []string
		for _, e := range all[*record.ProviderError](rs) {
			classes = append(classes, e.Class)
		}
		want := []string{"rate_limited", "overloaded", "server", "overloaded"}
		if !slices.Equal(classes, want) {
			t.Errorf("provider errors %v, want %v", classes, want)
		}
		waits := all[*record.RetryScheduled](rs)
		if len(waits) != 4 {
			t.Fatalf("%d retry_scheduled events, want 4", len(waits))
		}
		for i, w := range waits {
			if w.Attempt != i+1 || w.Class != want[i] || w.DelayMs > 5 {
				t.Errorf("retry %d: %+v", i, w)
			}
		}
		// Each provider_error is followed by its retry_scheduled, before the reply.
		ks := kinds(rs, record.KindSessionStarted, record.KindSystem, record.KindToolStarted, record.KindToolFinished)
		tail := ks[slices.Index(ks, "tool_results")+1:]
		wantTail := []string{"turn_started",
			"provider_error", "retry_scheduled", "provider_error", "retry_scheduled",
			"provider_error", "retry_scheduled", "provider_error", "retry_scheduled",
			"assistant_message", "quiesced"}
		if !slices.Equal(tail, wantTail) {
			t.Errorf("after the first batch\n got %v\nwant %v", tail, wantTail)
		}
	})
}

// TestMidStreamErrorEvent: an error event after output began is retried from scratch; what had
// arrived is discarded.
func TestMidStreamErrorEvent(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(
			bashStep("First.", "echo one"),
			`{"text":"Half an answer that will be lost","error_event":{"after_deltas":2}}`,
			textStep("Whole answer."),
		)})
		restarts := 0
		end := h.watch(func(u session.Update) bool {
			if u.Live != nil && u.Live.Kind == "restart" {
				restarts++
			}
			return false
		})
		out := h.run(context.Background(), "go")
		expect(t, out, fold.Replied, false)
		rs := h.records()
		msg := last[*record.AssistantMessage](t, rs)
		if got := text(msg.Parts); got != "Whole answer." {
			t.Errorf("committed %q, want only the retried reply", got)
		}
		if n := len(all[*record.RetryScheduled](rs)); n != 1 {
			t.Errorf("%d retries, want 1", n)
		}
		pe := last[*record.ProviderError](t, rs)
		t.Logf("mid-stream error classified %s: %s", pe.Class, pe.Message)
		if n := len(all[*record.AssistantMessage](rs)); n != 2 {
			t.Errorf("%d assistant messages, want 2", n)
		}
		end()
		if restarts != 1 {
			t.Errorf("%d restart events published, want 1", restarts)
		}
	})
}

// TestCutConnection: a stream cut without its terminating event is retried from scratch.
func TestCutConnection(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(
			`{"text":"Cut short here, never finished","tool_calls":[{"name":"bash","arguments":{"command":"touch never"}}],"cut":{"after_deltas":3}}`,
			`{"text":"Cut again","cut":{"after_bytes":40}}`,
			textStep("Complete."),
		)})
		out := h.run(context.Background(), "go")
		expect(t, out, fold.Replied, false)
		rs := h.records()
		msgs := all[*record.AssistantMessage](rs)
		if len(msgs) != 1 || text(msgs[0].Parts) != "Complete." {
			t.Fatalf("assistant messages %+v, want one, \"Complete.\"", msgs)
		}
		var classes []string
		for _, e := range all[*record.ProviderError](rs) {
			classes = append(classes, e.Class)
		}
		if !slices.Equal(classes, []string{"network", "network"}) {
			t.Errorf("provider errors %v, want two network errors", classes)
		}
		if len(all[*record.ToolStarted](rs)) != 0 {
			t.Errorf("a call from a cut stream was run")
		}
	})
}

// TestMaxTokensInToolCall: a call whose arguments were cut off is dropped (repaired), the turn
// reports Truncated and is nudged; the model then finishes.
func TestMaxTokensInToolCall(t *testing.T) {
	cases := []struct {
		name string
		step string
	}{
		{"call only", `{"tool_calls":[{"name":"bash","arguments":{"command":"echo a long line that will be cut off"}}],"max_tokens":true}`},
		{"text and call", `{"text":"Writing it now.","tool_calls":[{"name":"bash","arguments":{"command":"echo a long line that will be cut off"}}],"max_tokens":true}`},
		{"complete call and a cut one", `{"tool_calls":[{"name":"bash","arguments":{"command":"echo kept"}},{"name":"bash","arguments":{"command":"echo a long line that will be cut off"}}],"max_tokens":true}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			eachFormat(t, func(t *testing.T, f format) {
				h := newHarness(t, f, setup{script: steps(c.step, textStep("Finished in smaller steps."))})
				out := h.run(context.Background(), "go")
				expect(t, out, fold.Replied, false)
				rs := h.records()
				msgs := all[*record.AssistantMessage](rs)
				first := msgs[0]
				reps := all[*record.Repaired](rs)
				if len(reps) == 0 || !strings.Contains(reps[0].What, "cut off") || reps[0].Turn != first.Turn {
					t.Fatalf("repaired events %+v, want the cut call dropped", reps)
				}
				if !strings.Contains(string(reps[0].Original), `echo a long`) {
					t.Errorf("the repair does not keep the original call: %s", reps[0].Original)
				}
				kept := calls(first.Parts)
				for _, p := range kept {
					if strings.Contains(string(p.Args), "a long") {
						t.Errorf("the cut call was committed: %s", p.Args)
					}
				}
				if c.name == "complete call and a cut one" {
					// The complete call runs; the exchange continues without a nudge.
					if len(kept) != 1 || len(all[*record.ToolResults](rs)) != 1 {
						t.Errorf("the complete call was not run: %+v", first.Parts)
					}
					return
				}
				if len(kept) != 0 {
					t.Errorf("calls committed: %+v", kept)
				}
				nudges := all[*record.Nudge](rs)
				if len(nudges) != 1 || nudges[0].Reason != "truncated" {
					t.Errorf("nudges %+v, want one for a truncated reply", nudges)
				}
				st := all[*record.Steering](rs)
				if len(st) != 1 || st[0].Source != "nudge" {
					t.Errorf("steering %+v, want one nudge", st)
				}
				if len(msgs) != 2 {
					t.Errorf("%d assistant messages, want 2", len(msgs))
				}
			})
		})
	}
}

// TestEmptyReply: an empty reply is committed with a stub and nudged; four in a row end the
// exchange after three nudges, with a failure event.
func TestEmptyReply(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(
			`{"empty":true}`, textStep("Here I am."),
			`{"empty":true}`, `{"empty":true}`, `{"empty":true}`, `{"empty":true}`,
			textStep("Back."),
		)})
		out := h.run(context.Background(), "hello")
		expect(t, out, fold.Replied, false)
		rs := h.records()
		msgs := all[*record.AssistantMessage](rs)
		if len(msgs) != 2 || text(msgs[0].Parts) != fold.EmptyStub {
			t.Fatalf("assistant messages %+v, want the stub then the reply", msgs)
		}
		if n := all[*record.Nudge](rs); len(n) != 1 || n[0].Reason != "empty" {
			t.Errorf("nudges %+v", n)
		}

		out = h.run(context.Background(), "hello again")
		expect(t, out, fold.Aborted, true)
		rs = h.records()
		quiesced(t, rs, fold.Aborted)
		if n := len(all[*record.Nudge](rs)); n != 4 {
			t.Errorf("%d nudges in all, want 1 + 3", n)
		}
		if fl := last[*record.Failure](t, rs); !strings.Contains(fl.Message, "empty") {
			t.Errorf("failure %q", fl.Message)
		}
		t.Logf("aborted: %v", out.Err)

		out = h.run(context.Background(), "once more")
		expect(t, out, fold.Replied, false)
	})
}

// TestNonObjectArguments: arguments that are not a JSON object are repaired to {} with the
// original kept, and the call then fails its own schema, truthfully.
func TestNonObjectArguments(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(
			`{"tool_calls":[{"name":"bash","arguments":"ls -la"},{"name":"bash","arguments":[1,2]}]}`,
			textStep("I will pass an object next time."),
		)})
		out := h.run(context.Background(), "go")
		expect(t, out, fold.Replied, false)
		rs := h.records()
		reps := all[*record.Repaired](rs)
		if len(reps) != 2 {
			t.Fatalf("repairs %+v, want 2", reps)
		}
		for i, orig := range []string{"ls -la", "[1,2]"} {
			var o struct{ Args string }
			_ = json.Unmarshal(reps[i].Original, &o)
			if o.Args != orig || !strings.Contains(reps[i].What, "not a JSON object") {
				t.Errorf("repair %d: %s %s", i, reps[i].What, reps[i].Original)
			}
		}
		msg := all[*record.AssistantMessage](rs)[0]
		for _, c := range calls(msg.Parts) {
			if string(c.Args) != "{}" {
				t.Errorf("committed args %s, want {}", c.Args)
			}
		}
		for _, r := range last[*record.ToolResults](t, rs).Results {
			if r.Outcome != record.Failed || !r.IsError || !strings.Contains(r.Content, "command") {
				t.Errorf("result %+v, want a schema failure naming command", r)
			}
		}
		if n := len(all[*record.ToolStarted](rs)); n != 2 {
			t.Errorf("%d tool_started, want 2 (the calls ran and failed on their schema)", n)
		}
	})
}

// TestThinkingSignature: thinking and its signature are committed byte for byte and sent back as
// received (on the Anthropic wire, signature and all). The OpenAI wires keep the reasoning's text
// unsigned: these requests do not ask for a Responses item's encrypted content, so nothing is
// sent back.
func TestThinkingSignature(t *testing.T) {
	const thought = "Let me think: the listing is short.\n  Two spaces, \"quotes\" and ünïcode ✓"
	const sig = "EqQBCkYIBxgCKkD+/sig==" // base64-ish, with characters JSON might escape
	eachFormat(t, func(t *testing.T, f format) {
		step := `{"thinking":{"text":` + mustJSON(thought) + `,"signature":` + mustJSON(sig) + `},"text":"Looking.","tool_calls":[{"name":"bash","arguments":{"command":"echo x"}}]}`
		h := newHarness(t, f, setup{script: steps(step, textStep("Done."))})
		out := h.run(context.Background(), "go")
		expect(t, out, fold.Replied, false)
		rs := h.records()
		msg := all[*record.AssistantMessage](rs)[0]
		var th *record.Part
		for i := range msg.Parts {
			if msg.Parts[i].Type == record.PartThinking {
				th = &msg.Parts[i]
			}
		}
		if f.name != "anthropic" {
			if th == nil || th.Text != thought || th.Signature != "" || th.Data != "" {
				t.Fatalf("thinking committed from %s: %+v, want %q unsigned", f.name, th, thought)
			}
			second := h.sim.Requests()[1].Body
			if strings.Contains(string(second), "quotes") || strings.Contains(string(second), "EqQBCkYI") {
				t.Errorf("reasoning sent back on %s: %s", f.name, second)
			}
			return
		}
		if th == nil {
			t.Fatalf("no thinking committed: %+v", msg.Parts)
		}
		if th.Text != thought || th.Signature != sig {
			t.Errorf("thinking %q signed %q, want %q signed %q", th.Text, th.Signature, thought, sig)
		}
		reqs := h.sim.Requests()
		second := reqs[len(reqs)-1].Body
		var body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content []struct {
					Type      string `json:"type"`
					Thinking  string `json:"thinking"`
					Signature string `json:"signature"`
				} `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(second, &body); err != nil {
			t.Fatal(err)
		}
		b := body.Messages[1].Content[0]
		if b.Type != "thinking" || b.Thinking != thought || b.Signature != sig {
			t.Errorf("the second request sent the thinking back as %+v", b)
		}
	})
}

// TestAuthError: a 401 is not retried; the exchange is aborted with a clear error.
func TestAuthError(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(
			bashStep("First.", "echo one"),
			`{"status":401,"message":"invalid x-api-key"}`,
			textStep("After a new key."),
		)})
		out := h.run(context.Background(), "go")
		expect(t, out, fold.Aborted, true)
		var pe *provider.Error
		if !errorsAs(out.Err, &pe) || pe.Class != provider.Auth {
			t.Fatalf("error %v, want an auth error", out.Err)
		}
		if !strings.Contains(out.Err.Error(), "invalid x-api-key") {
			t.Errorf("the error does not say what the provider said: %v", out.Err)
		}
		rs := h.records()
		quiesced(t, rs, fold.Aborted)
		if n := len(all[*record.RetryScheduled](rs)); n != 0 {
			t.Errorf("%d retries of an auth error", n)
		}
		if pe := last[*record.ProviderError](t, rs); pe.Class != "auth" || pe.Status != 401 {
			t.Errorf("provider error %+v", pe)
		}
		if n := len(h.sim.Requests()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
		out = h.run(context.Background(), "try again")
		expect(t, out, fold.Replied, false)
	})
}

// TestContextLimit: a prompt-too-long error makes the harness learn the limit the provider
// states, evict on its own and retry, once per request; from then on the session keeps to the
// learned limit at its turn boundaries, so the provider does not refuse it again while its turns
// fit. A newest turn over the limit alone aborts cleanly, and the next prompt works.
func TestContextLimit(t *testing.T) {
	big := func(n int) string { return "head -c " + itoa(n) + " /dev/zero | tr '\\0' x; echo" }
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{
			script: steps(
				bashStep("One.", big(6000)),
				bashStep("Two.", big(6000)),
				bashStep("Three.", big(6000)),
				bashStep("Four.", big(6000)),
				// refused here: over the limit; the limit learned, evicted and retried
				bashStep("Five.", big(6000)),
				bashStep("Six.", big(6000)),
				bashStep("Seven.", big(6000)),
				// under the learned limit, the harness evicts before the provider would refuse
				textStep("Fits after the evictions."),

				bashStep("Small.", "echo small"),
				bashStep("Small again.", "echo small"),
				textStep("Small is fine."),

				bashStep("Huge.", big(40000)),
				// the huge result cut to what the learned window leaves: it fits
				textStep("Read what was kept of it."),

				// a huge prompt: refused by rein before it is sent (it cannot fit the window)

				textStep("Fits again."),
			),
			sim: func(o *sim.Options) { o.ContextLimit = 6000 },
		})
		out := h.run(context.Background(), "fill the context")
		expect(t, out, fold.Replied, false)
		rs := h.records()
		ev := all[*record.Evicted](rs)
		if len(ev) < 2 {
			t.Fatalf("evictions %+v, want the refusal's and the learned limit's", ev)
		}
		for _, e := range ev {
			if e.By != record.ByHarness {
				t.Errorf("eviction %+v, want by the harness", e)
			}
		}
		pes := all[*record.ProviderError](rs)
		if len(pes) != 1 || pes[0].Class != "context_length" {
			t.Errorf("provider errors %+v, want one context_length", pes)
		}
		ps := all[*record.Pressure](rs)
		if len(ps) == 0 || ps[0].Line != "context_length" || ps[0].Limit != 6000 {
			t.Fatalf("pressure %+v, want the refusal's first, teaching the limit of 6000", ps)
		}
		for _, p := range ps[1:] {
			if p.Window != 6000 || p.Limit != 0 {
				t.Errorf("pressure %+v, want the learned window of 6000", p)
			}
		}

		out = h.run(context.Background(), "something small")
		expect(t, out, fold.Replied, false)
		if n := len(all[*record.Evicted](h.records())); n != 2 {
			t.Errorf("%d evictions after a small exchange, want still 2", n)
		}

		// A result too large for the window is cut to what it leaves, saying so.
		out = h.run(context.Background(), "now something huge")
		expect(t, out, fold.Replied, false)
		if res := last[*record.ToolResults](t, h.records()).Results[0]; !strings.Contains(res.Content, "[rein: cut:") || len(res.Content) > 12_000 {
			t.Fatalf("the huge result was sent with %d bytes in a 6,000-token window", len(res.Content))
		}

		// A prompt alone over the learned limit: no eviction could save it, so rein refuses it
		// before it is recorded or sent (TestPromptLargerThanTheWindow).
		prompts := len(all[*record.UserPrompt](h.records()))
		out = h.run(context.Background(), "now something huge: "+strings.Repeat("a pasted log line\n", 40000/18))
		var tl *agent.PromptTooLarge
		if !errorsAs(out.Err, &tl) || tl.Window != 6000 {
			t.Fatalf("error %v, want the prompt refused as too large for the learned window of 6000", out.Err)
		}
		if n := len(all[*record.UserPrompt](h.records())); n != prompts {
			t.Fatalf("the refused prompt was recorded")
		}

		// The next prompt goes through.
		out = h.run(context.Background(), "a small question")
		expect(t, out, fold.Replied, false)
		if n := h.sim.Pending(); n != 0 {
			t.Errorf("%d script steps left", n)
		}
	})
}

// TestValidatorRunsBeforeSend: a request the validator refuses is never sent; the exchange ends
// with a failure naming it a harness bug, and the request is saved beside the record.
func TestValidatorRunsBeforeSend(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(textStep("never")), unused: 1})
		h.wire.refuse = func([]byte) *provider.Violation {
			return &provider.Violation{Rule: "test_rule", Message: "refused by the test"}
		}
		out := h.run(context.Background(), "go")
		expect(t, out, fold.Aborted, true)
		if n := len(h.sim.Requests()); n != 0 {
			t.Errorf("%d requests sent past the validator", n)
		}
		fl := last[*record.Failure](t, h.records())
		if !strings.Contains(fl.Message, "test_rule") || !strings.Contains(fl.Message, "bug") {
			t.Errorf("failure %q", fl.Message)
		}
		h.wire.refuse = nil
	})
}

// TestThinkingEnabled: with Anthropic extended thinking on, a tool turn carries its signed
// thinking back first, and a Stop while the model thinks commits nothing unsendable.
func TestThinkingEnabled(t *testing.T) {
	f := formats[0]
	think := func(s string) string { return `"thinking":{"text":"` + s + `","signature":"c2lnXzE="}` }
	h := newHarness(t, f, setup{
		script: steps(
			`{`+think("I should list the files.")+`,"tool_calls":[{"name":"bash","arguments":{"command":"ls"}}]}`,
			`{`+think("A long deliberation that will be cut short by the person.")+`,"text":"Never said.","delay_ms":50}`,
			`{`+think("Fresh start.")+`,"text":"Here."}`,
		),
		cfg: func(c *agent.Config) { c.Thinking, c.MaxTokens = 1024, 4096 },
	})
	ctx := h.stopOn(func(u session.Update) bool { return u.Live != nil && u.Live.Kind == "thinking" && h.sim.Pending() == 1 })
	out := h.run(ctx, "look around")
	expect(t, out, fold.Cancelled, false)
	rs := h.records()
	if n := len(all[*record.AssistantMessage](rs)); n != 1 {
		t.Errorf("%d assistant messages, want only the tool turn (a stop mid-thought commits nothing)", n)
	}
	out = h.run(context.Background(), "go on")
	expect(t, out, fold.Replied, false)
}

// TestRetriesRunOut: when the attempts run out, or the provider says not to retry, the exchange
// ends aborted with the provider's error, every wait on the record.
func TestRetriesRunOut(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{
			script: steps(
				`{"status":529}`, `{"status":529}`, `{"status":529,"message":"still overloaded"}`,
				`{"status":503,"should_retry":false}`,
				textStep("Finally."),
			),
			cfg: func(c *agent.Config) { c.Retry.MaxAttempts = 3 },
		})
		out := h.run(context.Background(), "go")
		expect(t, out, fold.Aborted, true)
		if !strings.Contains(out.Err.Error(), "still overloaded") {
			t.Errorf("error %v, want the last attempt's", out.Err)
		}
		rs := h.records()
		if n, m := len(all[*record.RetryScheduled](rs)), len(all[*record.ProviderError](rs)); n != 2 || m != 3 {
			t.Errorf("%d retries and %d provider errors, want 2 and 3", n, m)
		}
		out = h.run(context.Background(), "again")
		expect(t, out, fold.Aborted, true)
		if n := len(all[*record.RetryScheduled](h.records())); n != 2 {
			t.Errorf("a retry the provider vetoed was scheduled")
		}
		out = h.run(context.Background(), "and again")
		expect(t, out, fold.Replied, false)
	})
}
