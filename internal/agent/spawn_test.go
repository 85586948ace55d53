package agent_test

import (
	"errors"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// Beside makes each child a session beside its parent's that names it, inheriting its context
// when asked, with tools of its own, its parent's configuration, an agents door of its own (so a
// grandchild is made the same way) and AwaitChildren set.
func TestBeside(t *testing.T) {
	h := newHarness(t, formats[0], setup{noCheck: true, noBash: true})
	next := h.sess.Snapshot().Next()
	must(t, h.sess.Append(&record.UserPrompt{Turn: next, Text: "hello"}))
	must(t, h.sess.Append(&record.AssistantMessage{Turn: next + 1, Parts: []record.Part{{Type: record.PartText, Text: "hi"}}}))
	must(t, h.sess.Commit(&record.Quiesced{Reason: fold.Replied}))

	var runners []*tool.Runner
	fail := errors.New("no tools today")
	tools := func() (*tool.Runner, error) {
		if len(runners) == 3 {
			return nil, fail
		}
		runners = append(runners, &tool.Runner{Policy: tool.Policy{Mode: tool.ModeReadOnly}})
		return runners[len(runners)-1], nil
	}
	spawn := agent.Beside(session.Options{}, record.SessionStarted{Provider: "sim", Model: "sim-1", Cwd: h.ws, Version: "test", Parent: "not-this"}, tools)

	check := func(a *agent.Agent, parent *session.Session, turns int, runner *tool.Runner) {
		t.Helper()
		s := a.Session()
		t.Cleanup(func() { s.Close() })
		st := s.Snapshot()
		meta, n := st.Meta(), st.NumTurns()
		if s.ProjectDir() != parent.ProjectDir() || s.ID() == parent.ID() {
			t.Errorf("child %s is in %s, want a new session beside %s", s.ID(), s.ProjectDir(), parent.ProjectDir())
		}
		if meta.Parent != parent.ID() || meta.Session != s.ID() || meta.Model != "sim-1" {
			t.Errorf("child's session_started: %+v; want parent %s", meta, parent.ID())
		}
		if n != turns {
			t.Errorf("child holds %d turns, want %d", n, turns)
		}
		cfg := a.Config()
		if !cfg.AwaitChildren || cfg.Runner != runner || a.Children() == nil || cfg.Model != h.cfg.Model || cfg.Client != h.cfg.Client {
			t.Errorf("child's config: await %v, own runner %v, agents door %v, parent's model and client %v",
				cfg.AwaitChildren, cfg.Runner == runner, a.Children() != nil, cfg.Model == h.cfg.Model && cfg.Client == h.cfg.Client)
		}
	}
	fresh, err := spawn(h.a, false)
	must(t, err)
	check(fresh, h.sess, 0, runners[0])
	heir, err := spawn(h.a, true)
	must(t, err)
	check(heir, h.sess, 2, runners[1])
	grand, err := heir.Children().Spawn(heir, false)
	must(t, err)
	check(grand, heir.Session(), 0, runners[2])
	if _, err := spawn(h.a, false); !errors.Is(err, fail) {
		t.Errorf("a spawn whose tools fail = %v; want %v", err, fail)
	}
}

// TestAgentsTakeUpLast: rein run's exchange. A Stop while the parent awaits its children stops them
// beside it, and TakeUpLast returns with every child stopped, settled and closed (its record's lock
// released), nothing delivered to the stopped parent.
func TestAgentsTakeUpLast(t *testing.T) {
	fm := newFamily(t, formats[0], steps(
		callStep("Two helpers.",
			agentsCall(`{"op":"start","prompt":"one","inherit":false}`),
			agentsCall(`{"op":"start","prompt":"two","inherit":false}`)),
		textStep("Waiting for them."),
	), true, agent.Limits{},
		steps(callStep("", gateCall(1))),
		steps(callStep("", gateCall(2))),
	)
	ctx, stop := fm.stopper()
	fm.onStatus(func(s string) bool {
		fm.after(1, func() { fm.after(2, stop) })
		return true
	})
	out := fm.a.TakeUpLast(ctx, agent.Prompt{Text: "delegate"})
	expect(t, out, fold.Cancelled, false)
	quiesced(t, fm.records(), fold.Cancelled)
	if n := fm.kids.Running(); n != 0 {
		t.Fatalf("%d children still running after TakeUpLast", n)
	}
	for n := 1; n <= 2; n++ {
		k := fm.kid(n)
		quiesced(t, readRecords(t, k.sess.Path()), fold.Cancelled)
		settled(t, k.id, k.sess.Path())
		s, _, err := session.Open(k.sess.Path(), session.Options{})
		if err != nil {
			t.Fatalf("%s is still held after TakeUpLast: %v", k.id, err)
		}
		s.Close()
	}
	if n := fm.a.Arrivals(); n != 0 {
		t.Errorf("%d replies of stopped children reached the parent", n)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
