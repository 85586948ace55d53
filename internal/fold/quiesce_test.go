package fold

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/internal/record"
	"pgregory.net/rapid"
)

var outcomes = []record.Outcome{record.OK, record.Failed, record.Denied, record.Interrupted, record.TimedOut}

// contentBits are the pieces a random tool output is made of: the characters that are hard to
// carry through JSON unchanged (quotes, backslashes, controls, invalid UTF-8, separators), a
// trailer-looking line and plain words.
var contentBits = []string{"ok", " ", "\n", "\t", `"`, `\`, "\x00", "\x1f", "\xff", "\xc3", "é", "\u2028", "😀", "<&>", "TURN: 9", "[exit code 1]", "\r\n"}

// finishedEvent draws the tool_finished the agent writes for a call of turn: a random outcome and,
// three times in four, the result kept as the batch's tool_results will carry it. The fourth
// time it keeps none, as a record written before the field existed, or a result resting on
// records that land only with the batch.
func finishedEvent(t *rapid.T, id string, turn int64) *record.ToolFinished {
	fin := &record.ToolFinished{CallID: id, DurationMs: rapid.Int64Range(0, 5000).Draw(t, "ms"), Outcome: rapid.SampledFrom(outcomes).Draw(t, "outcome")}
	if rapid.IntRange(0, 3).Draw(t, "kept") > 0 {
		var b strings.Builder
		for _, s := range rapid.SliceOfN(rapid.SampledFrom(contentBits), 0, 12).Draw(t, "content") {
			b.WriteString(s)
		}
		fin.Content = WithTrailer(b.String(), turn)
		fin.IsError = fin.Outcome != record.OK
	}
	return fin
}

// A crash anywhere in a batch, however its calls went, settles to a record that keeps every
// finished result byte for byte as the uncrashed batch would have recorded it: the plan answers
// a call with its kept result, interrupted only if it started and kept none, not_executed if it
// never started; for every quiesce reason alike. The fold replaying the cut record equals the
// fold that wrote it.
func TestCrashMidBatchKeepsFinished(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		l := newLog(rt)
		for i, n := 0, rapid.IntRange(0, 2).Draw(rt, "before"); i < n; i++ {
			l.prompt("earlier")
			l.reply(call(fmt.Sprintf("e%d", i), "bash", `{}`))
			l.results(record.OK)
		}
		l.prompt("go")
		n := rapid.IntRange(1, 5).Draw(rt, "calls")
		var parts []record.Part
		for i := range n {
			parts = append(parts, call(fmt.Sprintf("c%d", i), "bash", `{"command":"true"}`))
		}
		turn := l.reply(parts...)
		batch := len(l.recs) // the batch's first event

		// The batch as the agent writes it when nothing goes wrong: each call started, then
		// finished, then every result at once.
		whole := &record.ToolResults{}
		for i := range n {
			id := fmt.Sprintf("c%d", i)
			l.add(&record.ToolStarted{CallID: id, Name: "bash"})
			fin := finishedEvent(rt, id, turn)
			l.addLine(fin)
			r := record.ToolResult{CallID: id, Content: fin.Content, IsError: fin.IsError, Outcome: fin.Outcome}
			if fin.Content == "" {
				r.Content = WithTrailer("a result kept only in memory", turn)
			}
			whole.Results = append(whole.Results, r)
		}
		l.addLine(whole)
		if d := cmpViews(viewOf(l.s), viewOf(replay(rt, l.recs))); d != "" {
			rt.Fatalf("replay of the whole batch differs from the live fold:\n%s", d)
		}
		answered := l.recs[len(l.recs)-1].Body.(*record.ToolResults)

		// The crash: only records before cut survive (cut == len keeps the answered batch).
		cut := rapid.IntRange(batch, len(l.recs)).Draw(rt, "cut")
		kept := l.recs[:cut]
		live := New()
		for _, r := range kept {
			if err := live.Step(r); err != nil {
				rt.Fatalf("live step: %v", err)
			}
		}
		st := replay(rt, kept)
		if d := cmpViews(viewOf(live), viewOf(st)); d != "" {
			rt.Fatalf("replay of the cut record differs from the live fold:\n%s", d)
		}
		reason := rapid.SampledFrom([]string{Crashed, Cancelled, Aborted, Limit}).Draw(rt, "reason")
		plan := st.QuiescePlan(reason)
		if cut == len(l.recs) {
			if plan != nil {
				rt.Fatalf("an answered batch still owes %+v", plan)
			}
			return
		}
		started, finished := map[string]bool{}, map[string]*record.ToolFinished{}
		for _, r := range kept[batch:] {
			switch b := r.Body.(type) {
			case *record.ToolStarted:
				started[b.CallID] = true
			case *record.ToolFinished:
				finished[b.CallID] = b
			}
		}
		for i, got := range plan.Results {
			id := fmt.Sprintf("c%d", i)
			switch fin := finished[id]; {
			case got.CallID != id:
				rt.Fatalf("plan result %d answers %s, want %s", i, got.CallID, id)
			case fin != nil && fin.Content != "":
				if !reflect.DeepEqual(got, answered.Results[i]) {
					rt.Fatalf("%s (%s): the finished call is answered\n%+v\nwhere the uncrashed batch answered\n%+v", id, reason, got, answered.Results[i])
				}
			case started[id]:
				if got.Outcome != record.Interrupted {
					rt.Fatalf("%s started and kept no result; answered %s, want interrupted", id, got.Outcome)
				}
			default:
				if got.Outcome != record.NotExecuted {
					rt.Fatalf("%s never started; answered %s, want not_executed", id, got.Outcome)
				}
			}
		}

		// Settle as a resume does, and read the record back.
		settled := &log{t: rt, s: st, recs: append([]record.Record(nil), kept...)}
		settled.addLine(plan)
		settled.addLine(&record.Quiesced{Reason: reason})
		back := replay(rt, settled.recs)
		if d := cmpViews(viewOf(settled.s), viewOf(back)); d != "" {
			rt.Fatalf("replay of the settled record differs from the live fold:\n%s", d)
		}
		if !back.IsReady() || back.InFlight() {
			rt.Fatalf("the settled record is not ready: %s", back.Phase())
		}
		if err := checkSendable(back.Context()); err != nil {
			rt.Fatalf("the settled context is unsendable: %v", err)
		}
		res := settled.recs[cut].Body.(*record.ToolResults)
		for i, r := range res.Results {
			if fin := finished[r.CallID]; fin != nil && fin.Content != "" && !reflect.DeepEqual(r, answered.Results[i]) {
				rt.Fatalf("the settled record answers %s\n%+v\nwhere the uncrashed batch answered\n%+v", r.CallID, r, answered.Results[i])
			}
		}
	})
}

// The plan, call by call, for each reason: a kept result as it was kept, a started call
// interrupted, an unstarted one not_executed; a tool_finished without content (the older shape)
// keeps nothing, and a later one without content takes back what an earlier one kept.
func TestQuiescePlanAnswersFinished(t *testing.T) {
	for _, reason := range []string{Crashed, Cancelled, Aborted, Limit} {
		l := newLog(t)
		l.prompt("go")
		l.reply(call("a", "bash", `{}`), call("b", "bash", `{}`), call("c", "bash", `{}`), call("d", "bash", `{}`), call("e", "bash", `{}`))
		l.add(&record.ToolStarted{CallID: "a", Name: "bash"})
		l.add(&record.ToolFinished{CallID: "a", Outcome: record.Failed, Content: "boom\n[exit code 1]\nTURN: 2", IsError: true, ExitCode: new(int)})
		l.add(&record.ToolStarted{CallID: "b", Name: "bash"})
		l.add(&record.ToolFinished{CallID: "b", Outcome: record.OK}) // older shape: nothing kept
		l.add(&record.ToolStarted{CallID: "c", Name: "bash"})
		l.add(&record.ToolFinished{CallID: "c", Outcome: record.OK, Content: "first\nTURN: 2"})
		l.add(&record.ToolFinished{CallID: "c", Outcome: record.OK})
		l.add(&record.ToolStarted{CallID: "d", Name: "bash"})
		l.add(&record.ToolFinished{CallID: "zz", Outcome: record.OK, Content: "not owed\nTURN: 2"})
		plan := l.s.QuiescePlan(reason)
		want := []record.Outcome{record.Failed, record.Interrupted, record.Interrupted, record.Interrupted, record.NotExecuted}
		var got []record.Outcome
		for _, r := range plan.Results {
			got = append(got, r.Outcome)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("%s: outcomes (-want +got):\n%s", reason, d)
		}
		if r := plan.Results[0]; !reflect.DeepEqual(r, record.ToolResult{CallID: "a", Content: "boom\n[exit code 1]\nTURN: 2", IsError: true, Outcome: record.Failed}) {
			t.Fatalf("%s: the finished call is answered %+v", reason, r)
		}
		l.add(plan)
		if _, ok := l.s.Finished("a"); ok {
			t.Fatalf("%s: a kept result outlived its batch", reason)
		}
	}
}

// A kept result that could not answer its call is refused by name; one without content is
// admitted whatever it says, as it always was.
func TestToolFinishedJudged(t *testing.T) {
	l := newLog(t)
	l.prompt("go")
	l.reply(call("a", "bash", `{}`))
	mustContain(t, l.try(&record.ToolFinished{CallID: "a", Outcome: "fine", Content: "x\nTURN: 2"}), `finishes tool call "a" with the outcome "fine"`)
	if _, ok := l.s.Finished("a"); ok {
		t.Fatal("a refused tool_finished kept its result")
	}
	if err := l.try(&record.ToolFinished{CallID: "a", Outcome: "fine"}); err != nil {
		t.Fatalf("a tool_finished keeping nothing was refused: %v", err)
	}
}
