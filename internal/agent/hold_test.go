package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/hook"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// hooksIn writes each script into dir and returns the hooks running them.
func hooksIn(t testing.TB, dir string, hs ...hook.Hook) *hook.Set {
	t.Helper()
	for i := range hs {
		p := filepath.Join(dir, "hook"+string(rune('a'+i))+".sh")
		if err := os.WriteFile(p, []byte("#!/usr/bin/env bash\n"+hs[i].Command+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		hs[i].Command = p
		if hs[i].Timeout == 0 {
			hs[i].Timeout = time.Minute
		}
		hs[i].Source = "test"
	}
	return &hook.Set{Hooks: hs, Workspace: dir, Grace: 500 * time.Millisecond}
}

func rule(s string) *tool.Rule {
	r, err := tool.ParseRule(s)
	if err != nil {
		panic(err)
	}
	return &r
}

// holdUnlessApproved holds every call it matches until the file "approved" is in the workspace.
const holdUnlessApproved = `[ -e approved ] || echo '{"decision":"hold","reason":"waiting for a review"}'`

func ofKind(rs []record.Record, k record.Kind) []record.Record {
	var out []record.Record
	for _, r := range rs {
		if r.Kind() == k {
			out = append(out, r)
		}
	}
	return out
}

func lastResults(t testing.TB, rs []record.Record) []record.ToolResult {
	t.Helper()
	res := ofKind(rs, record.KindToolResults)
	if len(res) == 0 {
		t.Fatal("no tool_results recorded")
	}
	return res[len(res)-1].Body.(*record.ToolResults).Results
}

// A pre_tool hook holds the second call of a batch: the first ran, the second did not; the session
// parks with the window open, survives the process (the session is closed and opened again, as
// rein exiting and resuming does), and a release runs the held call exactly once and goes on.
func TestHoldSurvivesAndReleases(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(
			`{"tool_calls":[{"name":"bash","arguments":{"command":"echo one >> one.txt"}},{"name":"bash","arguments":{"command":"echo two >> two.txt"}}]}`,
			textStep("Both done."))})
		h.cfg.Hooks = hooksIn(t, h.ws, hook.Hook{Event: record.HookPreTool, Match: rule("bash(echo two*)"), Command: holdUnlessApproved})
		h.a = agent.New(h.cfg)
		out := h.run(context.Background(), "write both")
		if out.Reason != agent.Held || out.Err != nil {
			t.Fatalf("outcome %+v, want held", out)
		}
		if _, err := os.Stat(filepath.Join(h.ws, "two.txt")); err == nil {
			t.Fatal("the held call ran")
		}
		st := h.sess.Snapshot()
		p, parked := st.Parking()
		if !parked || p.Reason != "waiting for a review" || st.Phase() != fold.AwaitingToolResults || !st.InFlight() {
			t.Fatalf("parked %v %+v, phase %s", parked, p, st.Phase())
		}

		// rein exits; a later rein opens the session again.
		path := h.sess.Path()
		h.sess.Close()
		sess, _, err := session.Open(path, session.Options{})
		if err != nil {
			t.Fatal(err)
		}
		h.sess = sess
		h.cfg.Session = sess
		h.a = agent.New(h.cfg)
		if err := h.a.Settle(h.ws, "test"); err != nil {
			t.Fatal(err)
		}
		if !sess.Snapshot().Parked() {
			t.Fatal("a resume settled the held window instead of keeping it held")
		}
		// Released while the hook still holds: held again, nothing ran.
		if out := h.a.Release(context.Background(), "resume", ""); out.Reason != agent.Held {
			t.Fatalf("released under a hold that still stands: %+v", out)
		}
		if err := os.WriteFile(filepath.Join(h.ws, "approved"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		out = h.a.Release(context.Background(), "resume", "")
		if out.Reason != fold.Replied || out.Err != nil {
			t.Fatalf("release: %+v", out)
		}
		for name, want := range map[string]string{"one.txt": "one\n", "two.txt": "two\n"} {
			if b, _ := os.ReadFile(filepath.Join(h.ws, name)); string(b) != want {
				t.Errorf("%s holds %q, want %q: each call runs exactly once", name, b, want)
			}
		}
		rs := h.records()
		if n := len(ofKind(rs, record.KindHold)); n != 2 {
			t.Errorf("%d hold events, want 2", n)
		}
		if n := len(ofKind(rs, record.KindReleased)); n != 2 {
			t.Errorf("%d released events, want 2", n)
		}
		res := lastResults(t, rs)
		if len(res) != 2 || res[0].Outcome != record.OK || res[1].Outcome != record.OK {
			t.Errorf("results %+v", res)
		}
		if n := len(ofKind(rs, record.KindHook)); n != 3 {
			t.Errorf("%d hook events, want 3 (hold, hold, pass)", n)
		}
	})
}

// A Stop of a held session answers its calls: the held one (here the first, whose tool_started
// went out with its message) not_executed, saying it was held; the rest not_executed.
func TestStopOfHeldAnswersNotExecuted(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(
			`{"tool_calls":[{"name":"bash","arguments":{"command":"touch a"}},{"name":"bash","arguments":{"command":"touch b"}}]}`)})
		h.cfg.Hooks = hooksIn(t, h.ws, hook.Hook{Event: record.HookPreTool, Command: holdUnlessApproved})
		h.a = agent.New(h.cfg)
		if out := h.run(context.Background(), "touch"); out.Reason != agent.Held {
			t.Fatalf("outcome %+v", out)
		}
		if err := h.a.Abandon(); err != nil {
			t.Fatal(err)
		}
		res := lastResults(t, h.records())
		if len(res) != 2 || res[0].Outcome != record.NotExecuted || res[1].Outcome != record.NotExecuted || !strings.Contains(res[0].Content, "held (waiting for a review)") {
			t.Errorf("results %+v", res)
		}
		if err := h.a.Abandon(); !errors.Is(err, agent.ErrNotHeld) {
			t.Errorf("a second Abandon: %v", err)
		}
	})
}

// A refusing hook answers the call denied with its reason, which the model reads; post_tool hooks
// add a line and mark a result an error; everything a hook decided is recorded.
func TestRefuseAndPostTool(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(
			`{"tool_calls":[{"name":"bash","arguments":{"command":"git push origin main"}},{"name":"bash","arguments":{"command":"echo ok"}}]}`,
			textStep("Understood."))})
		h.cfg.Hooks = hooksIn(t, h.ws,
			hook.Hook{Event: record.HookPreTool, Match: rule("bash(git push*)"), Command: `echo 'no pushes to main' >&2; exit 2`},
			hook.Hook{Event: record.HookPostTool, Match: rule("bash"), Command: `echo '{"context":"formatted","error":true,"reason":"lint failed"}'`})
		h.a = agent.New(h.cfg)
		if out := h.run(context.Background(), "push"); out.Reason != fold.Replied || out.Err != nil {
			t.Fatalf("outcome %+v", out)
		}
		rs := h.records()
		res := lastResults(t, rs)
		if res[0].Outcome != record.Denied || !strings.Contains(res[0].Content, "no pushes to main") {
			t.Errorf("the push was answered %+v", res[0])
		}
		if res[1].Outcome != record.Failed || !res[1].IsError || !strings.Contains(res[1].Content, "[rein: a hook adds: formatted]") || !strings.Contains(res[1].Content, "lint failed") {
			t.Errorf("the echo was answered %+v", res[1])
		}
		hooks := ofKind(rs, record.KindHook)
		if len(hooks) != 2 {
			t.Fatalf("%d hook events, want 2", len(hooks))
		}
		if b := hooks[0].Body.(*record.Hook); b.Decision != record.HookRefuse || b.Reason != "no pushes to main" || b.ExitCode == nil || *b.ExitCode != 2 {
			t.Errorf("pre_tool event %+v", b)
		}
	})
}

// A hook that asks puts the call to the person, through the approver as mode ask does.
func TestAskGoesToThePerson(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(bashStep("", "touch asked"), textStep("Done."))})
		h.cfg.Hooks = hooksIn(t, h.ws, hook.Hook{Event: record.HookPreTool, Command: `echo '{"decision":"ask","reason":"touching files"}'`})
		var asked []string
		r := *h.cfg.Runner
		r.Approver = tool.ApproverFunc(func(_ context.Context, c tool.Call) (bool, error) {
			asked = append(asked, c.Name)
			return false, nil
		})
		h.cfg.Runner = &r
		h.a = agent.New(h.cfg)
		if out := h.run(context.Background(), "touch"); out.Reason != fold.Replied {
			t.Fatalf("outcome %+v", out)
		}
		if len(asked) != 1 {
			t.Errorf("the person was asked %d times", len(asked))
		}
		if res := lastResults(t, h.records()); res[0].Outcome != record.Denied {
			t.Errorf("declined call answered %+v", res[0])
		}
		if _, err := os.Stat(filepath.Join(h.ws, "asked")); err == nil {
			t.Error("a declined call ran")
		}
	})
}

// A stop hook that always asks the agent to go on is obeyed at most agent.MaxContinuations times
// in one exchange, each time as harness-authored steering.
func TestStopHookCannotLoopForever(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		var texts []string
		for i := 0; i <= agent.MaxContinuations; i++ {
			texts = append(texts, textStep("Finished."))
		}
		h := newHarness(t, f, setup{script: steps(texts...)})
		h.cfg.Hooks = hooksIn(t, h.ws, hook.Hook{Event: record.HookStop, Command: `echo 'keep going' >&2; exit 2`})
		h.a = agent.New(h.cfg)
		if out := h.run(context.Background(), "go"); out.Reason != fold.Replied || out.Err != nil {
			t.Fatalf("outcome %+v", out)
		}
		rs := h.records()
		var steer int
		for _, r := range ofKind(rs, record.KindSteering) {
			b := r.Body.(*record.Steering)
			if b.Source != "hook" || !strings.Contains(b.Text, "keep going") {
				t.Errorf("steering %+v", b)
			}
			steer++
		}
		if steer != agent.MaxContinuations {
			t.Errorf("%d continuations, want %d", steer, agent.MaxContinuations)
		}
		if n := len(ofKind(rs, record.KindFailure)); n != 1 {
			t.Errorf("%d failure events, want 1 saying the limit was reached", n)
		}
	})
}

// A prompt hook refuses a prompt (nothing but its own record is written) or adds context.
func TestPromptHook(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(textStep("Hello."))})
		h.cfg.Hooks = hooksIn(t, h.ws, hook.Hook{Event: record.HookPrompt, Command: `grep -q secret && { echo 'no secrets' >&2; exit 2; }; echo '{"context":"it is Tuesday"}'`})
		h.a = agent.New(h.cfg)
		out := h.run(context.Background(), "the secret is 42")
		var pr *agent.PromptRefused
		if !errors.As(out.Err, &pr) || pr.Reason != "no secrets" {
			t.Fatalf("outcome %+v", out)
		}
		if n := len(ofKind(h.records(), record.KindUserPrompt)); n != 0 {
			t.Fatalf("a refused prompt was recorded")
		}
		if out := h.run(context.Background(), "hi"); out.Reason != fold.Replied {
			t.Fatalf("outcome %+v", out)
		}
		st := ofKind(h.records(), record.KindSteering)
		if len(st) != 1 || !strings.Contains(st[0].Body.(*record.Steering).Text, "it is Tuesday") {
			t.Errorf("steering %+v", st)
		}
	})
}

// An agent nobody can release (a child agent: Beside sets NoHold) answers a held call denied with
// the reason, and its exchange goes on.
func TestNoHoldRefusesInstead(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(bashStep("", "touch held"), textStep("Understood."))})
		h.cfg.Hooks = hooksIn(t, h.ws, hook.Hook{Event: record.HookPreTool, Command: holdUnlessApproved})
		h.cfg.NoHold = true
		h.a = agent.New(h.cfg)
		if out := h.run(context.Background(), "touch"); out.Reason != fold.Replied || out.Err != nil {
			t.Fatalf("outcome %+v", out)
		}
		res := lastResults(t, h.records())
		if res[0].Outcome != record.Denied || !strings.Contains(res[0].Content, "waiting for a review") {
			t.Errorf("result %+v", res[0])
		}
		if n := len(ofKind(h.records(), record.KindHold)); n != 0 {
			t.Errorf("%d holds recorded", n)
		}
	})
}

// A person's line for the running exchange (Say: rein run's message to a held session) is judged
// where it would be delivered, as a prompt is: one a prompt hook refuses is not delivered and
// comes back in the outcome with the hook's reason; one allowed is delivered with the hook's
// context after it. A parent agent's line to its child (Steer) is the model's: no prompt hook
// judges it.
func TestPersonSteeringJudged(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(textStep("Hello."))})
		h.cfg.Hooks = hooksIn(t, h.ws, hook.Hook{Event: record.HookPrompt, Command: `grep -q secret && { echo 'no secrets' >&2; exit 2; }; echo '{"context":"it is Tuesday"}'`})
		h.a = agent.New(h.cfg)
		h.a.Say("the secret is 42")
		h.a.Say("also this")
		h.a.Steer("a secret from the parent agent")
		out := h.run(context.Background(), "hi")
		if out.Reason != fold.Replied || out.Err != nil {
			t.Fatalf("outcome %+v", out)
		}
		if len(out.Refused) != 1 || out.Refused[0].Text != "the secret is 42" || !strings.Contains(out.Refused[0].Why, "no secrets") {
			t.Errorf("refused %+v, want the secret line with the hook's reason", out.Refused)
		}
		var texts []string
		for _, r := range ofKind(h.records(), record.KindSteering) {
			texts = append(texts, r.Body.(*record.Steering).Text)
		}
		joined := strings.Join(texts, "\n")
		if strings.Contains(joined, "secret is 42") || !strings.Contains(joined, "also this") || !strings.Contains(joined, "a secret from the parent agent") {
			t.Errorf("steering %q", texts)
		}
		if n := strings.Count(joined, "it is Tuesday"); n != 2 { // the prompt's and the allowed line's
			t.Errorf("the hook's context came %d times, want 2: %q", n, texts)
		}
	})
}
