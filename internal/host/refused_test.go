package host_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/hook"
	"github.com/reinhq/rein/internal/record"
)

// refusingSecrets gives each conversation's agent in workspace ws a prompt hook that refuses a
// prompt holding "secret" and otherwise runs allowed (a line of bash), and a window of 8,000 tokens.
func refusingSecrets(t *testing.T, ws, allowed string) func(cfg *agent.Config) {
	p := filepath.Join(t.TempDir(), "refuse.sh")
	body := "#!/usr/bin/env bash\ngrep -q secret && { echo 'no secrets in prompts' >&2; exit 2; }\n" + allowed + "\n"
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	set := &hook.Set{Workspace: ws, Hooks: []hook.Hook{{Event: record.HookPrompt, Command: p, Timeout: time.Minute, Source: "test"}}}
	return func(cfg *agent.Config) { cfg.Hooks, cfg.Window = set, 8_000 }
}

// A message a prompt hook refuses, or one too large for the model's window, is rejected with the
// reason — the clients show it, with
// its text, and offer to send it again — and the conversation goes on: the next message is taken
// up and answered. (The refused message stayed waiting before, first in line, refused again at
// every later send: nothing behind it was ever delivered.)
func TestRefusedMessageDoesNotWedge(t *testing.T) {
	r := newRig(t, rigOptions{script: steps(`{"text":"hello"}`)})
	r.opts.agent = refusingSecrets(t, r.ws, "exit 0")
	r.restart()
	id := r.create("refused")
	refused := r.send(id, "the secret is 42")
	r.settle(id)
	huge := r.send(id, "summarize:\n"+strings.Repeat("a pasted log line\n", 4_000))
	r.settle(id)
	r.send(id, "hi")
	r.settle(id)
	var tooLarge *record.Submission
	for _, rec := range r.records(id) {
		if s, ok := rec.Body.(*record.Submission); ok && s.ID == huge.MessageID && s.State == record.SubmissionRejected {
			tooLarge = s
		}
	}
	if tooLarge == nil || !strings.Contains(tooLarge.Detail, "window of 8000 tokens") {
		t.Errorf("the message too large for the window: %+v, want it rejected saying why", tooLarge)
	}
	var rejected *record.Submission
	answered := false
	for _, rec := range r.records(id) {
		if s, ok := rec.Body.(*record.Submission); ok {
			switch {
			case s.ID == refused.MessageID && s.State == record.SubmissionRejected:
				rejected = s
			case s.ID != refused.MessageID && s.ID != huge.MessageID && s.State == record.SubmissionAnswered:
				answered = true
			}
		}
		if up, ok := rec.Body.(*record.UserPrompt); ok && (strings.Contains(up.Text, "secret") || strings.Contains(up.Text, "summarize")) {
			t.Errorf("the refused message was delivered: %+v", up)
		}
	}
	if rejected == nil || !strings.Contains(rejected.Detail, "no secrets in prompts") {
		t.Errorf("the refused message: %+v, want it rejected with the hook's reason", rejected)
	}
	if !answered {
		t.Error("the message after the refused one was not answered")
	}
	if v := r.get(id); len(v.State.Submissions) != 0 || v.State.Working {
		t.Errorf("state %+v, want nothing waiting", v.State)
	}
}

// The same holds for a message sent while the agent works, delivered as steering at the next turn
// boundary: the prompt hook judges it as it judges a prompt, and one refused, or too large for
// the window, is rejected with the reason instead of delivered (it went to the model unjudged).
func TestRefusedSteeringIsNotDelivered(t *testing.T) {
	r := newRig(t, rigOptions{bash: true, script: steps(
		`{"tool_calls":[{"name":"bash","arguments":{"command":"while [ ! -e go ]; do sleep 0.02; done; echo went"}}]}`, `{"text":"done"}`)})
	r.opts.agent = refusingSecrets(t, r.ws, `echo '{"context":"it is Tuesday"}'`)
	r.restart()
	id := r.create("steering")
	r.send(id, "start")
	deadline := time.Now().Add(10 * time.Second)
	for started := false; !started; {
		if time.Now().After(deadline) {
			t.Fatal("the tool never started")
		}
		for _, rec := range r.records(id) {
			if _, ok := rec.Body.(*record.ToolStarted); ok {
				started = true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Each is handed to the running exchange before its send returns; the command ends once all
	// three are, and the boundary after it delivers them.
	secret := r.send(id, "the secret is 42")
	huge := r.send(id, "summarize:\n"+strings.Repeat("a pasted log line\n", 4_000))
	ok := r.send(id, "also check the tests")
	if err := os.WriteFile(filepath.Join(r.ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r.settle(id)
	states := map[string]*record.Submission{}
	var steered []string
	for _, rec := range r.records(id) {
		switch b := rec.Body.(type) {
		case *record.Submission:
			states[b.ID] = b
		case *record.Steering:
			steered = append(steered, b.Text)
		}
	}
	if s := states[secret.MessageID]; s == nil || s.State != record.SubmissionRejected || !strings.Contains(s.Detail, "no secrets in prompts") {
		t.Errorf("the refused message: %+v, want it rejected with the hook's reason", s)
	}
	if s := states[huge.MessageID]; s == nil || s.State != record.SubmissionRejected || !strings.Contains(s.Detail, "window of 8000 tokens") {
		t.Errorf("the message too large: %+v, want it rejected saying why", s)
	}
	if s := states[ok.MessageID]; s == nil || s.State != record.SubmissionAnswered {
		t.Errorf("the message allowed: %+v, want it answered", s)
	}
	joined := strings.Join(steered, "\n")
	if strings.Contains(joined, "secret") || strings.Contains(joined, "summarize") || !strings.Contains(joined, "also check the tests") || !strings.Contains(joined, "it is Tuesday") {
		for i, s := range steered {
			if len(s) > 80 {
				steered[i] = s[:80] + "…"
			}
		}
		t.Errorf("steering delivered: %q, want only the allowed message and the hook's context", steered)
	}
}
