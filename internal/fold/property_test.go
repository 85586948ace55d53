package fold

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/reinhq/rein/internal/record"
	"pgregory.net/rapid"
)

func cmpViews(a, b view) string {
	return cmp.Diff(a, b, cmpopts.EquateEmpty(), cmp.AllowUnexported(Submission{}))
}

// agent drives a log with random live behaviour, the way the loop would: prompts, replies with
// and without tool calls (some malformed, admitted through Admit), tool results, steering,
// evictions, rewinds, clears, stops (quiesce) and crashes (replay of what was written, then a
// quiesce with reason crashed).
type agent struct {
	t *rapid.T
	l *log
}

func (a *agent) step() {
	l, s := a.l, a.l.s
	op := rapid.IntRange(0, 14).Draw(a.t, "op")
	switch op {
	case 0: // a prompt, or an attempt at one while results are owed
		ready := s.IsReady()
		err := l.try(&record.UserPrompt{Turn: s.Next(), Text: rapid.SampledFrom([]string{"fix the bug", "list files\nplease", "é"}).Draw(a.t, "prompt")})
		if (err == nil) != ready {
			a.t.Fatalf("prompt judged wrongly (ready %v): %v", ready, err)
		}
	case 1, 2: // a reply, drafted raw and admitted
		if !s.Phase().awaitingAssistant() {
			return
		}
		var d Draft
		for i, n := 0, rapid.IntRange(0, 3).Draw(a.t, "parts"); i < n; i++ {
			switch rapid.IntRange(0, 5).Draw(a.t, "part") {
			case 0:
				d.Parts = append(d.Parts, text(rapid.SampledFrom([]string{"", " ", "done", "ok\n"}).Draw(a.t, "text")))
			case 1:
				d.Parts = append(d.Parts, record.Part{Type: record.PartThinking, Text: "hmm", Signature: "sig"})
			case 2: // OpenAI reasoning: an item to send back to the Responses API, or unsigned
				p := record.Part{Type: record.PartThinking, Text: rapid.SampledFrom([]string{"", "**Plan**"}).Draw(a.t, "summary")}
				if rapid.Bool().Draw(a.t, "item") {
					p.Data = fmt.Sprintf(`{"id":"rs_%d_%d","type":"reasoning","encrypted_content":"gAAA","summary":[]}`, s.Seq(), i)
				}
				d.Parts = append(d.Parts, p)
			default:
				id := rapid.SampledFrom([]string{"", "c1", "c2", "toolu_x", fmt.Sprintf("c%d", s.Seq())}).Draw(a.t, "id")
				args := rapid.SampledFrom([]string{`{"command":"ls"}`, `"ls"`, `[1]`, `null`, `{bad`, ``, ` { "a" : 1 } `}).Draw(a.t, "args")
				d.Parts = append(d.Parts, call(id, rapid.SampledFrom([]string{"bash", "read file", ""}).Draw(a.t, "name"), args))
				if rapid.IntRange(0, 5).Draw(a.t, "cut") == 0 {
					d.Incomplete = append(d.Incomplete, len(d.Parts)-1)
				}
			}
		}
		d.Stopped = rapid.IntRange(0, 6).Draw(a.t, "stopped") == 0
		turn := s.Next()
		parts, _, verdict := s.Admit(turn, d)
		if verdict == Nothing {
			return
		}
		l.add(&record.AssistantMessage{Turn: turn, Parts: parts, StopReason: "end_turn"})
	case 3: // tool started and finished events (some keeping their result), then the results
		if s.Phase() != AwaitingToolResults || s.Parked() {
			return
		}
		for _, id := range s.Owed() {
			if rapid.Bool().Draw(a.t, "started") {
				l.add(&record.ToolStarted{CallID: id, Name: s.CallName(id)})
				if rapid.Bool().Draw(a.t, "finished") {
					l.addLine(finishedEvent(a.t, id, s.newest()))
				}
			}
		}
		if rapid.Bool().Draw(a.t, "finish") {
			res := &record.ToolResults{}
			for _, id := range s.Owed() {
				r, ok := s.Finished(id)
				if !ok {
					r = record.ToolResult{CallID: id, Content: WithTrailer("out "+id, s.newest()), Outcome: record.OK}
				}
				res.Results = append(res.Results, r)
			}
			l.addLine(res)
		}
	case 4: // steering
		due := s.Phase().awaitingAssistant()
		err := l.try(&record.Steering{Text: "also this"})
		if (err == nil) != due {
			a.t.Fatalf("steering judged wrongly (reply due %v): %v", due, err)
		}
	case 5, 6: // an eviction of a random run, with a random note
		items := s.Frontier()
		if len(items) == 0 {
			return
		}
		i := rapid.IntRange(0, len(items)-1).Draw(a.t, "from")
		j := rapid.IntRange(i, len(items)-1).Draw(a.t, "to")
		from, to := items[i].From, items[j].To
		if rapid.IntRange(0, 4).Draw(a.t, "misalign") == 0 {
			from++
		}
		note := rapid.SampledFrom([]string{"the detour", "", "two\nlines", strings.Repeat("x", 241)}).Draw(a.t, "note")
		_, want := s.CheckEviction(from, to, note)
		by := rapid.SampledFrom([]record.Authority{record.ByModel, record.ByHarness, record.ByUser}).Draw(a.t, "by")
		err := l.try(&record.Evicted{From: from, To: to, Note: note, By: by, Op: rapid.SampledFrom([]string{"", "op-e"}).Draw(a.t, "op")})
		if (err == nil) != (want == nil) {
			a.t.Fatalf("CheckEviction says %v, the fold says %v", want, err)
		}
		if u := s.Unclosed(); err == nil && u != 0 && s.Held(u) != "resident" {
			a.t.Fatalf("an eviction touched the unclosed turn %d", u)
		}
	case 7: // a rewind to a random turn
		if s.High() == 0 {
			return
		}
		anchor := rapid.Int64Range(1, s.High()+1).Draw(a.t, "anchor")
		want := s.CheckRewind(anchor)
		err := l.try(&record.Rewound{Anchor: anchor, Op: rapid.SampledFrom([]string{"", "op-r"}).Draw(a.t, "op")})
		if (err == nil) != (want == nil) {
			a.t.Fatalf("CheckRewind says %v, the fold says %v", want, err)
		}
	case 8:
		_ = l.try(&record.Cleared{Op: rapid.SampledFrom([]string{"", "op-c"}).Draw(a.t, "op")})
	case 9, 10: // Stop: quiesce
		a.quiesce(Cancelled)
	case 11: // crash: only what was written survives; resume quiesces with reason crashed
		cut := rapid.IntRange(0, len(l.recs)).Draw(a.t, "crash at")
		l.recs = l.recs[:cut]
		l.s = replay(a.t, l.recs)
		a.quiesce(Crashed)
	case 12:
		_ = l.try(&record.System{Text: "system " + fmt.Sprint(s.Seq())})
	case 13: // the harness's own eviction under pressure
		if s.Phase() == AwaitingToolResults {
			return
		}
		items := s.Frontier()
		from, to, ok := s.PlanForcedEviction(rapid.Int64Range(0, 4000).Draw(a.t, "keep"))
		if !ok {
			return
		}
		if _, err := s.CheckEviction(from, to, "pressure"); err != nil {
			a.t.Fatalf("the forced eviction %d–%d is one the fold refuses: %v", from, to, err)
		}
		// The prompt that opened the exchange in hand, and the newest item, always stay.
		if last := items[len(items)-1]; from <= last.To && last.From <= to {
			a.t.Fatalf("the forced eviction %d–%d covers the newest item %d–%d", from, to, last.From, last.To)
		}
		for i := len(items) - 1; i >= 0; i-- {
			if it := items[i]; it.Residue < 0 && s.TurnAt(it.Turn).Role == record.User && s.TurnAt(it.Turn).Kind == Own {
				if from <= it.From && it.To <= to {
					a.t.Fatalf("the forced eviction %d–%d covers turn %d, the prompt of the exchange in hand", from, to, it.From)
				}
				break
			}
		}
		l.add(&record.Evicted{From: from, To: to, Note: "pressure", By: record.ByHarness})
	case 14: // a hold on an owed call, or a release (hold_test.go)
		a.holdStep()
	}
}

func (a *agent) quiesce(reason string) {
	l := a.l
	if plan := l.s.QuiescePlan(reason); plan != nil {
		for _, r := range plan.Results {
			if kept, ok := l.s.Finished(r.CallID); ok {
				if !reflect.DeepEqual(r, kept) {
					a.t.Fatalf("quiesce answered the finished call %s with %+v, not its kept result %+v", r.CallID, r, kept)
				}
				continue
			}
			want := record.NotExecuted
			if l.s.Started(r.CallID) {
				want = record.Interrupted
			}
			if r.Outcome != want {
				a.t.Fatalf("quiesce answered %s %s, want %s", r.CallID, r.Outcome, want)
			}
		}
		l.add(plan)
	}
	l.add(&record.Quiesced{Reason: reason})
	if !l.s.IsReady() {
		a.t.Fatalf("after quiesce the session is not ready: %v", l.s.Phase())
	}
}

// The fold's central property: live behaviour of any shape leaves a record whose replay equals
// the live state, whose every renderable context is sendable, and which never panics.
func TestLiveEqualsReplay(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		a := &agent{t: rt, l: newLog(rt)}
		n := rapid.IntRange(1, 80).Draw(rt, "steps")
		for i := 0; i < n; i++ {
			a.step()
			if a.l.s.Phase() != AwaitingToolResults {
				if err := checkSendable(a.l.s.Context()); err != nil {
					rt.Fatalf("unsendable context after step %d: %v", i, err)
				}
				if a.l.s.Phase() != ReadyForUser {
					if err := wireCheck(a.l.s); err != nil {
						rt.Fatalf("after step %d: %v", i, err)
					}
				}
			}
			checkLaminar(rt, a.l.s)
			if d := cmp.Diff(naiveFrontier(a.l.s), a.l.s.Frontier(), cmpopts.EquateEmpty()); d != "" {
				rt.Fatalf("the kept frontier differs from one derived afresh after step %d:\n%s", i, d)
			}
			if d := cmp.Diff(naiveContext(a.l.s), a.l.s.Context(), cmpopts.EquateEmpty()); d != "" {
				rt.Fatalf("the incremental rendering differs from rendering afresh after step %d:\n%s", i, d)
			}
		}
		if d := cmpViews(viewOf(a.l.s), viewOf(replay(rt, a.l.recs))); d != "" {
			rt.Fatalf("replay differs from the live fold:\n%s", d)
		}
		// However it ended, a quiesce makes a fresh prompt admissible.
		a.quiesce(Aborted)
		if err := a.l.try(&record.UserPrompt{Turn: a.l.s.Next(), Text: "again"}); err != nil {
			rt.Fatalf("after quiesce a fresh prompt was refused: %v", err)
		}
	})
}

func checkLaminar(t *rapid.T, s *State) {
	rs := s.Residues()
	for i := range rs {
		for j := range rs {
			a, b := rs[i], rs[j]
			if i == j || a.Withdrawn || b.Withdrawn {
				continue
			}
			disjoint := a.To < b.From || b.To < a.From
			nested := (a.From <= b.From && b.To <= a.To) || (b.From <= a.From && a.To <= b.To)
			if !disjoint && !nested {
				t.Fatalf("residues %d–%d and %d–%d overlap without nesting", a.From, a.To, b.From, b.To)
			}
		}
	}
}

// Admission: whatever a provider sends becomes a sendable message.
func TestAdmitAlwaysSendable(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := New()
		var d Draft
		for i, n := 0, rapid.IntRange(0, 5).Draw(rt, "n"); i < n; i++ {
			d.Parts = append(d.Parts, record.Part{
				Type:   rapid.SampledFrom([]record.PartType{record.PartText, record.PartThinking, record.PartToolCall, record.PartToolResult, record.PartRedacted, "weird"}).Draw(rt, "type"),
				Text:   rapid.SampledFrom([]string{"", " ", "x"}).Draw(rt, "text"),
				CallID: rapid.SampledFrom([]string{"", "a", "a", "b c"}).Draw(rt, "id"),
				Name:   rapid.SampledFrom([]string{"", "bash", "a b"}).Draw(rt, "name"),
				Args:   json.RawMessage(rapid.SampledFrom([]string{"", "{}", "1", "[", `{"a":"b"}`}).Draw(rt, "args")),
			})
		}
		parts, _, v := s.Admit(1, d)
		if v == Nothing {
			return
		}
		if why := checkMessage(record.Message{Role: record.Assistant, Parts: parts}); why != "" {
			rt.Fatalf("admitted a message that %s: %+v", why, parts)
		}
	})
}

func TestEvictionGuards(t *testing.T) {
	l := newLog(t)
	for i := 0; i < 5; i++ {
		l.prompt(fmt.Sprintf("p%d", i))
		l.reply(call(fmt.Sprintf("c%d", i), "bash", `{}`))
		l.results(record.OK)
		l.reply(text("done"))
	}
	// turns 1..15: prompt, call turn, reply per exchange
	l.add(&record.Evicted{From: 4, To: 9, Note: "middle", By: record.ByModel})
	l.prompt("now")
	cases := []struct {
		from, to int64
		note     string
		want     string
	}{
		{1, 999, "n", "turn 999 is not recorded: the latest is 16"},
		{5, 5, "n", "turns 5–5 have already left your context"},
		{2, 6, "n", "turns 2–6 reach into the residue over 4–9"},
		{7, 12, "n", "turns 7–12 reach into the residue over 4–9"},
		{10, 16, "n", "turn 16 is being written now: an eviction keeps the work in hand"},
		{1, 2, "", "the note is empty"},
		{1, 2, "a\nb", "more than one line"},
		{1, 2, strings.Repeat("é", 121), "at most 240 bytes"},
		{3, 2, "n", "runs backwards"},
	}
	for _, c := range cases {
		err := l.try(&record.Evicted{From: c.from, To: c.to, Note: c.note, By: record.ByModel})
		mustContain(t, err, c.want)
	}
	// A run that covers a residue whole nests it.
	l.add(&record.Evicted{From: 2, To: 12, Note: "outer", By: record.ByUser})
	if got := l.s.Held(5); got != "under [4, 9]" {
		t.Errorf("turn 5 held %q, want under its innermost residue [4, 9]", got)
	}
	if got := l.s.Held(10); got != "under [2, 12]" {
		t.Errorf("turn 10 held %q", got)
	}
	ctx := l.s.Context()
	if !strings.Contains(ctx[1].Parts[0].Text, "turns 2–12 have left your context. Note: \"outer\"") {
		t.Errorf("second context message is %q, want the outer residue", ctx[1].Parts[0].Text)
	}
	if err := checkSendable(ctx); err != nil {
		t.Fatal(err)
	}
	// A rewind into a residue is refused; to its start it withdraws it.
	mustContain(t, l.try(&record.Rewound{Anchor: 5}), "lies under the residue over 2–12")
}

// A prompt may leave under a note while its answers stay: the context still opens with a user
// item, and never ends with a residue.
func TestPromptLeavesUnderNote(t *testing.T) {
	l := newLog(t)
	l.prompt("a long prompt")
	l.reply(call("c1", "bash", `{}`))
	l.results(record.OK)
	l.add(&record.Evicted{From: 1, To: 1, Note: "the task: fix it", By: record.ByModel})
	ctx := l.s.Context()
	if ctx[0].Role != record.User || !strings.HasPrefix(ctx[0].Parts[0].Text, "[rein: turn 1 has left") {
		t.Fatalf("context opens with %+v", ctx[0])
	}
	if err := checkSendable(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestQuiescePlanTruthful(t *testing.T) {
	l := newLog(t)
	l.prompt("go")
	l.reply(call("a", "bash", `{}`), call("b", "read_file", `{}`))
	l.add(&record.ToolStarted{CallID: "a", Name: "bash"})
	plan := l.s.QuiescePlan(Cancelled)
	if plan.Results[0].Outcome != record.Interrupted || plan.Results[1].Outcome != record.NotExecuted {
		t.Fatalf("plan %+v", plan.Results)
	}
	if !strings.HasSuffix(plan.Results[0].Content, "\nTURN: 2") || !strings.Contains(plan.Results[0].Content, "side effects it already had stand") {
		t.Fatalf("interrupted content %q", plan.Results[0].Content)
	}
	l.add(plan)
	if l.s.QuiescePlan(Cancelled) != nil {
		t.Fatal("a settled log still owes something")
	}
}

func TestInheritance(t *testing.T) {
	p := newLog(t)
	p.prompt("task")
	p.reply(call("c1", "bash", `{}`))
	p.results(record.OK)
	p.reply(text("thinking"), call("c2", "agents", `{"op":"start"}`)) // the spawning batch, unanswered
	inh, err := p.s.Inheritance("parent-1", 0, func(t Turn) record.Pointer {
		return record.Pointer{File: "/p/record.jsonl", Loci: []record.Locus{{Seq: t.Seqs[0]}}}
	})
	if err != nil {
		t.Fatal(err)
	}
	c := newLog(t)
	c.add(inh)
	if got := c.s.Next(); got != 4 {
		t.Errorf("child's next turn %d, want 4 (it continues the parent's sequence)", got)
	}
	c.prompt("child task")
	if err := checkSendable(c.s.Context()); err != nil {
		t.Fatalf("child context: %v", err)
	}
	if d := cmpViews(viewOf(c.s), viewOf(replay(t, c.recs))); d != "" {
		t.Fatal(d)
	}
}

// FuzzFold feeds arbitrary lines to decode and fold: nothing panics, and a refusal leaves the
// state as it was.
func FuzzFold(f *testing.F) {
	l := newLog(f)
	l.prompt("a")
	l.reply(call("c1", "bash", `{}`))
	l.results(record.OK)
	l.add(&record.Evicted{From: 1, To: 1, Note: "n", By: record.ByModel})
	var seed []byte
	for _, r := range l.recs {
		line, _ := record.Encode(r)
		seed = append(seed, line...)
	}
	f.Add(seed)
	// A host's record: submissions, handing, steering, Stops.
	for _, name := range []string{"stopwithdrawsaccepted-1.jsonl", "racesendstop-3.jsonl", "approvestopendsthewait-1.jsonl"} {
		host, err := os.ReadFile(filepath.Join("testdata", "host-records", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(host)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := New()
		for i, line := range strings.Split(string(data), "\n") {
			r, err := record.Decode([]byte(line), int64(i+1))
			if err != nil {
				return
			}
			before := viewOf(s)
			if err := s.Step(r); err != nil {
				if d := cmpViews(before, viewOf(s)); d != "" {
					t.Fatalf("refusal changed the state: %s", d)
				}
				return
			}
			if s.Phase() != AwaitingToolResults {
				if err := checkSendable(s.Context()); err != nil {
					t.Fatalf("admitted records render unsendable: %v", err)
				}
			}
		}
	})
}

// naiveContext renders the frontier from scratch, walking each turn's chain of residues to the
// outermost, as the incremental Context (and the kept frontier) must agree with.
func naiveContext(s *State) []record.Message {
	var out []record.Message
	last := -1
	for _, t := range s.Turns() {
		if t.Withdrawn {
			continue
		}
		if t.Under < 0 {
			out = append(out, t.Messages...)
			continue
		}
		o := t.Under
		for s.Residues()[o].Parent >= 0 {
			o = s.Residues()[o].Parent
		}
		if o == last {
			continue
		}
		last = o
		r := s.Residues()[o]
		out = append(out, record.Message{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: ResidueText(r.From, r.To, r.Note)}}})
	}
	return out
}

// naiveFrontier derives the frontier from the turn table and the residues' parent chains.
func naiveFrontier(s *State) []Item {
	var items []Item
	last := -1
	for i, t := range s.Turns() {
		if t.Withdrawn {
			continue
		}
		if t.Under < 0 {
			items = append(items, Item{From: t.ID, To: t.ID, Residue: -1, Turn: i})
			continue
		}
		o := t.Under
		for s.Residues()[o].Parent >= 0 {
			o = s.Residues()[o].Parent
		}
		if o == last {
			continue
		}
		last = o
		r := s.Residues()[o]
		items = append(items, Item{From: r.From, To: r.To, Residue: o, Turn: -1})
	}
	return items
}
