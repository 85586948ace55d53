package fold

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/reinhq/rein/internal/record"
)

// The fold's judgement of a held window, as a table: what each record meets in each state.
func TestHoldJudgement(t *testing.T) {
	open := func(t *testing.T) *log {
		l := newLog(t)
		l.prompt("go")
		l.reply(call("c1", "bash", `{"command":"echo 1"}`), call("c2", "bash", `{"command":"echo 2"}`))
		l.add(&record.ToolStarted{CallID: "c1", Name: "bash"})
		l.add(&record.ToolFinished{CallID: "c1", Outcome: record.OK, Content: "1\nTURN: 2"})
		l.add(&record.ToolStarted{CallID: "c2", Name: "bash"})
		return l
	}
	refused := func(t *testing.T, l *log, p record.Payload, want string) {
		t.Helper()
		err := l.try(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%T: %v, want a refusal saying %q", p, err, want)
		}
	}

	t.Run("no window", func(t *testing.T) {
		l := newLog(t)
		l.prompt("go")
		refused(t, l, &record.Hold{CallID: "c1"}, "no tool window is open")
		refused(t, l, &record.Released{}, "not held")
	})
	t.Run("not owed, finished", func(t *testing.T) {
		l := open(t)
		refused(t, l, &record.Hold{CallID: "c9"}, "does not owe")
		refused(t, l, &record.Hold{CallID: "c1"}, "already finished")
	})
	t.Run("held", func(t *testing.T) {
		l := open(t)
		l.add(&record.Hold{CallID: "c2", Reason: "review", By: "hook"})
		if !l.s.Parked() || l.s.IsReady() || l.s.Started("c2") {
			t.Fatalf("parked %v ready %v started %v", l.s.Parked(), l.s.IsReady(), l.s.Started("c2"))
		}
		refused(t, l, &record.Hold{CallID: "c2"}, "already held")
		refused(t, l, &record.ToolStarted{CallID: "c2", Name: "bash"}, "a release comes first")
		refused(t, l, &record.ToolFinished{CallID: "c2", Outcome: record.OK, Content: "x"}, "a release comes first")
		refused(t, l, &record.UserPrompt{Turn: l.s.Next(), Text: "next"}, "")
		// A Stop answers the window: the finished call with its result, the held one not run.
		plan := l.s.QuiescePlan(Cancelled)
		if len(plan.Results) != 2 || plan.Results[0].Outcome != record.OK || plan.Results[1].Outcome != record.NotExecuted || !strings.Contains(plan.Results[1].Content, "held (review)") {
			t.Fatalf("plan %+v", plan.Results)
		}
		l.add(plan)
		l.add(&record.Quiesced{Reason: Cancelled})
		if l.s.Parked() || !l.s.IsReady() {
			t.Fatal("a settled window is still held")
		}
	})
	t.Run("released", func(t *testing.T) {
		l := open(t)
		l.add(&record.Hold{CallID: "c2", Reason: "review", By: "hook"})
		l.add(&record.Released{By: "resume"})
		if l.s.Parked() || l.s.IsReady() {
			t.Fatal("a released window must be open and unheld")
		}
		l.add(&record.ToolStarted{CallID: "c2", Name: "bash"})
		l.add(&record.ToolResults{Results: []record.ToolResult{{CallID: "c1", Content: "1\nTURN: 2", Outcome: record.OK}, {CallID: "c2", Content: "2\nTURN: 2", Outcome: record.OK}}})
		if !l.s.IsReady() {
			t.Fatal("an answered window is not ready")
		}
		refused(t, l, &record.Released{}, "not held")
	})
	t.Run("a hook's steering after a reply", func(t *testing.T) {
		l := newLog(t)
		l.prompt("go")
		l.reply(text("done"))
		l.add(&record.Steering{Text: "[rein: go on]", Source: "hook"})
		if l.s.Phase() != AwaitingAssistantAfterUser {
			t.Fatalf("phase %s", l.s.Phase())
		}
	})
}

// holdStep is the property test's hold and release: a hold is admitted exactly on an owed call
// that has not finished while no hold stands; while one stands, a call starting is refused and a
// release admitted.
func (a *agent) holdStep() {
	l, s := a.l, a.l.s
	if s.Parked() {
		p, _ := s.Parking()
		if err := l.try(&record.ToolStarted{CallID: p.CallID, Name: s.CallName(p.CallID)}); err == nil {
			a.t.Fatalf("call %s started while held", p.CallID)
		}
		if rapid.Bool().Draw(a.t, "release") {
			l.add(&record.Released{By: "resume"})
		}
		return
	}
	ids := append(s.Owed(), "c-unknown")
	id := rapid.SampledFrom(ids).Draw(a.t, "held call")
	_, finished := s.Finished(id)
	want := s.Phase() == AwaitingToolResults && id != "c-unknown" && !finished
	err := l.try(&record.Hold{CallID: id, Reason: "review", By: "hook"})
	if (err == nil) != want {
		a.t.Fatalf("hold of %s judged wrongly (want admitted %v): %v", id, want, err)
	}
	if err == nil && (s.IsReady() || s.Started(id)) {
		a.t.Fatalf("after the hold of %s: ready %v, started %v", id, s.IsReady(), s.Started(id))
	}
}
