package fold

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/internal/record"
)

// The submission lifecycle (DESIGN §12.2), one test per row: every state a submission can be in,
// against every record that could move it. The expected table is written out here, apart from the
// fold's own (transitions), so that a change to either shows.

// subLog builds a log with an exchange in flight (a reply due, no Stop) and submission m1 in
// state from ("" leaves it unrecorded), reached by the records a host writes.
func subLog(t *testing.T, from record.SubmissionState) *log {
	t.Helper()
	l := newLog(t)
	l.add(&record.System{Text: "sys"})
	l.add(&record.Submission{ID: "m0", Op: "op0", State: record.SubmissionAccepted, Text: "first"})
	l.add(&record.UserPrompt{Turn: l.s.Next(), Text: "first", Submission: "m0"})
	accept := func() {
		l.add(&record.Submission{ID: "m1", Op: "op1", State: record.SubmissionAccepted, Text: "second"})
	}
	deliver := func() {
		accept()
		l.add(&record.Submission{ID: "m1", State: record.SubmissionHanded})
		l.add(&record.Steering{Text: "second", Source: "user", Submission: "m1"})
	}
	switch from {
	case "":
	case record.SubmissionAccepted:
		accept()
	case record.SubmissionHanded:
		accept()
		l.add(&record.Submission{ID: "m1", State: record.SubmissionHanded})
	case record.SubmissionDelivered:
		deliver()
	case record.SubmissionAnswered, record.SubmissionCancelled:
		deliver()
		l.add(&record.Submission{ID: "m1", State: from, Reason: Replied})
	case record.SubmissionWithdrawn, record.SubmissionRejected:
		accept()
		l.add(&record.Submission{ID: "m1", State: from})
	default:
		t.Fatalf("no way to reach %q", from)
	}
	if v, _ := l.s.Submission("m1"); v.State != from {
		t.Fatalf("built m1 %q, want %q", v.State, from)
	}
	if !l.s.InFlight() || l.s.Stopped() || !l.s.Phase().awaitingAssistant() {
		t.Fatalf("the exchange is not in flight and due a reply: %v %v %v", l.s.InFlight(), l.s.Stopped(), l.s.Phase())
	}
	return l
}

// subMove is a record that may move m1.
type subMove struct {
	name string
	make func(l *log) record.Payload
}

var subMoves = []subMove{
	{"accept", func(l *log) record.Payload {
		return &record.Submission{ID: "m1", Op: "op9", State: record.SubmissionAccepted, Text: "again"}
	}},
	{"hand", func(l *log) record.Payload { return &record.Submission{ID: "m1", State: record.SubmissionHanded} }},
	{"prompt", func(l *log) record.Payload {
		return &record.UserPrompt{Turn: l.s.Next(), Text: "second", Submission: "m1"}
	}},
	{"steer", func(l *log) record.Payload { return &record.Steering{Text: "second", Source: "user", Submission: "m1"} }},
	{"mark delivered", func(l *log) record.Payload { return &record.Submission{ID: "m1", State: record.SubmissionDelivered} }},
	{"withdraw", func(l *log) record.Payload {
		return &record.Submission{ID: "m1", State: record.SubmissionWithdrawn, Reason: "cancelled before it started"}
	}},
	{"reject", func(l *log) record.Payload {
		return &record.Submission{ID: "m1", State: record.SubmissionRejected, Reason: HostRestarted}
	}},
	{"answer", func(l *log) record.Payload {
		return &record.Submission{ID: "m1", State: record.SubmissionAnswered, Reason: Replied}
	}},
	{"cancel", func(l *log) record.Payload {
		return &record.Submission{ID: "m1", State: record.SubmissionCancelled, Reason: Cancelled}
	}},
	{"quiesce", func(l *log) record.Payload { return &record.Quiesced{Reason: Cancelled} }},
}

func TestSubmissionTransitions(t *testing.T) {
	const (
		none      = record.SubmissionState("")
		accepted  = record.SubmissionAccepted
		handed    = record.SubmissionHanded
		delivered = record.SubmissionDelivered
		answered  = record.SubmissionAnswered
		cancelled = record.SubmissionCancelled
		withdrawn = record.SubmissionWithdrawn
		rejected  = record.SubmissionRejected
	)
	// legal[from][move] is the state m1 is in after the move; a move not listed is refused. A
	// quiesce is never refused: it hands back what was handed, and leaves the rest.
	legal := map[record.SubmissionState]map[string]record.SubmissionState{
		none:      {"accept": accepted, "quiesce": none},
		accepted:  {"hand": handed, "prompt": delivered, "steer": delivered, "withdraw": withdrawn, "reject": rejected, "quiesce": accepted},
		handed:    {"steer": delivered, "withdraw": withdrawn, "reject": rejected, "quiesce": accepted},
		delivered: {"answer": answered, "cancel": cancelled, "quiesce": delivered},
		answered:  {"quiesce": answered},
		cancelled: {"quiesce": cancelled},
		withdrawn: {"quiesce": withdrawn},
		rejected:  {"quiesce": rejected},
	}
	// What a refusal says, beyond the record and the submission: the state it is in and what may
	// follow it.
	why := map[record.SubmissionState]string{
		none:      "which was never accepted",
		accepted:  "which is accepted (record 4): an accepted submission can only be handed, delivered, withdrawn or rejected",
		handed:    "which is handed (record 5): a handed submission can only be delivered, withdrawn or rejected",
		delivered: "which is delivered (record 6): a delivered submission can only be answered or cancelled",
		answered:  "which is answered (record 7): it has ended, and nothing may follow",
		cancelled: "which is cancelled (record 7): it has ended, and nothing may follow",
		withdrawn: "which is withdrawn (record 5): it has ended, and nothing may follow",
		rejected:  "which is rejected (record 5): it has ended, and nothing may follow",
	}
	rows := 0
	for _, from := range []record.SubmissionState{none, accepted, handed, delivered, answered, cancelled, withdrawn, rejected} {
		for _, m := range subMoves {
			name := string(from)
			if name == "" {
				name = "unrecorded"
			}
			t.Run(name+"/"+m.name, func(t *testing.T) {
				rows++
				l := subLog(t, from)
				before := l.s.Submissions()
				err := l.try(m.make(l))
				to, ok := legal[from][m.name]
				if !ok {
					if err == nil {
						t.Fatalf("admitted, want refused")
					}
					msg := err.Error()
					if !strings.Contains(msg, "submission m1") {
						t.Errorf("the refusal does not name the submission: %v", err)
					}
					want := why[from]
					switch {
					case m.name == "mark delivered":
						want = "delivered only by the prompt or the steering that carries it"
					case m.name == "accept" && from != none:
						want = "again (it is " + string(from) // accepted twice: said as such
					}
					if !strings.Contains(msg, want) {
						t.Errorf("refusal %q does not say %q", msg, want)
					}
					if d := cmp.Diff(before, l.s.Submissions(), cmp.AllowUnexported(Submission{})); d != "" {
						t.Errorf("a refused record changed the submissions:\n%s", d)
					}
					return
				}
				if err != nil {
					t.Fatalf("refused (%v), want %q", err, to)
				}
				v, _ := l.s.Submission("m1")
				if v.State != to {
					t.Fatalf("m1 is %q, want %q", v.State, to)
				}
				// The live state is the replayed one.
				r := replay(t, l.recs)
				if d := cmp.Diff(l.s.Submissions(), r.Submissions(), cmp.AllowUnexported(Submission{})); d != "" {
					t.Fatalf("replay differs:\n%s", d)
				}
			})
		}
	}
	// The fold's table is the one written out above: the same steps, no more.
	var got []string
	for _, tr := range Transitions() {
		got = append(got, string(tr.From)+">"+string(tr.To)+" by "+string(tr.By))
	}
	moveKind := map[string]record.Kind{"accept": record.KindSubmission, "hand": record.KindSubmission, "prompt": record.KindUserPrompt,
		"steer": record.KindSteering, "withdraw": record.KindSubmission, "reject": record.KindSubmission, "answer": record.KindSubmission,
		"cancel": record.KindSubmission, "quiesce": record.KindQuiesced}
	var want []string
	for from, moves := range legal {
		for m, to := range moves {
			if to != from {
				want = append(want, string(from)+">"+string(to)+" by "+string(moveKind[m]))
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the fold's table differs from this test's:\n%s", d)
	}
}

// The guards of a step: what the table admits, the state may still refuse.
func TestSubmissionGuards(t *testing.T) {
	type guard struct {
		name  string
		build func(l *log) // from subLog(accepted)
		rec   record.Payload
		want  string
	}
	hand := &record.Submission{ID: "m1", State: record.SubmissionHanded}
	for _, g := range []guard{
		{"hand a queued message", func(l *log) {
			l.add(&record.Submission{ID: "m2", Op: "op2", State: record.SubmissionAccepted, Text: "later", Queue: true})
		}, &record.Submission{ID: "m2", State: record.SubmissionHanded}, "it was sent queued"},
		{"hand with no exchange in flight", func(l *log) { l.add(&record.Quiesced{Reason: Replied}) }, hand, "no exchange is in flight"},
		{"hand to an exchange a Stop interrupted", func(l *log) {
			l.add(&record.Stop{Op: "s1", Interrupted: true})
		}, hand, "which the Stop of record"},
		{"accept under an operation already used", nil,
			&record.Submission{ID: "m2", Op: "op1", State: record.SubmissionAccepted, Text: "x"}, "already sent submission m1"},
		{"accept with no id", nil, &record.Submission{Op: "op2", State: record.SubmissionAccepted, Text: "x"}, "no id"},
		{"a state the fold does not know", nil, &record.Submission{ID: "m1", State: "lost"}, `the state "lost"`},
		{"a second Stop under one operation", func(l *log) { l.add(&record.Stop{Op: "s1"}) }, &record.Stop{Op: "s1"}, "a second Stop under operation s1"},
		{"a Stop naming a message it did not withdraw", nil, &record.Stop{Op: "s1", Withdrawn: []string{"m1"}}, "which is accepted"},
		{"a Stop naming a message never accepted", nil, &record.Stop{Op: "s1", Withdrawn: []string{"m9"}}, "never accepted"},
		{"an answer to a call not asked about", nil, &record.Approval{CallID: "c1", State: record.ApprovalAllowed, Op: "a1"}, "not waiting"},
		{"an approval of an unknown state", nil, &record.Approval{CallID: "c1", State: "maybe"}, `the state "maybe"`},
	} {
		t.Run(g.name, func(t *testing.T) {
			l := subLog(t, record.SubmissionAccepted)
			if g.build != nil {
				g.build(l)
			}
			err := l.try(g.rec)
			if err == nil || !strings.Contains(err.Error(), g.want) {
				t.Fatalf("got %v, want a refusal saying %q", err, g.want)
			}
		})
	}
	// A new exchange's take-up ends what a Stop said of the one before.
	l := subLog(t, record.SubmissionAccepted)
	l.add(&record.Stop{Op: "s1", Interrupted: true})
	l.add(&record.Quiesced{Reason: Cancelled})
	if !l.s.Stopped() {
		t.Fatal("the Stop is forgotten at the quiesce: a child's reply after it would wake the agent")
	}
	l.add(&record.UserPrompt{Turn: l.s.Next(), Text: "second", Submission: "m1"})
	if l.s.Stopped() {
		t.Fatal("a new prompt's exchange reads as stopped")
	}
}

// The plans: what the host writes is what the fold admits, and does what §12.2 and §12.3 say.
func TestSubmissionPlans(t *testing.T) {
	l := subLog(t, record.SubmissionAccepted)
	l.add(&record.Submission{ID: "m2", Op: "op2", State: record.SubmissionAccepted, Text: "later", Queue: true,
		Attachments: []record.Attachment{{Name: "a.txt", Text: "A"}}})
	// Handing: m1 (not queued) goes to the running exchange; m2 waits for the next.
	for _, p := range l.s.HandPlan() {
		l.add(p)
	}
	if v, _ := l.s.Submission("m1"); v.State != record.SubmissionHanded {
		t.Fatalf("m1 %s after HandPlan", v.State)
	}
	if v, _ := l.s.Submission("m2"); v.State != record.SubmissionAccepted {
		t.Fatalf("queued m2 %s after HandPlan", v.State)
	}
	// Delivery at the boundary: steering carrying m1.
	ps := l.s.DeliveryPlan()
	if len(ps) != 1 || ps[0].(*record.Steering).Submission != "m1" {
		t.Fatalf("delivery plan %+v", ps)
	}
	for _, p := range ps {
		l.add(p)
	}
	// A Stop: m2 withdrawn, the exchange interrupted; then nothing more is handed or delivered.
	plan := l.s.StopPlan("s1", 0, true)
	if !plan.Interrupt || len(plan.Withdraw) != 1 || plan.Withdraw[0].ID != "m2" || len(plan.Records) != 2 {
		t.Fatalf("stop plan %+v", plan)
	}
	for _, p := range plan.Records {
		l.add(p)
	}
	l.add(&record.Submission{ID: "m3", Op: "op3", State: record.SubmissionAccepted, Text: "after the stop"})
	if ps := l.s.HandPlan(); ps != nil {
		t.Fatalf("handed to a stopped exchange: %+v", ps)
	}
	if again := l.s.StopPlan("s1", 0, true); again.Replay == nil || again.Conflict || len(again.Withdraw) != 1 || again.Records != nil {
		t.Fatalf("a repeated press %+v, want the first one's answer", again)
	}
	if other := l.s.StopPlan("s1", 5, true); !other.Conflict {
		t.Fatalf("the press's id with another turn: %+v, want a conflict", other)
	}
	// The exchange ends: what it delivered is cancelled; m3 is the next prompt.
	l.add(&record.Quiesced{Reason: Cancelled})
	for _, p := range l.s.FinishPlan(Cancelled, "") {
		l.add(p)
	}
	for _, id := range []string{"m0", "m1"} {
		if v, _ := l.s.Submission(id); v.State != record.SubmissionCancelled {
			t.Errorf("%s %s after the stopped exchange ended", id, v.State)
		}
	}
	if next, ok := l.s.NextPrompt(); !ok || next.ID != "m3" {
		t.Fatalf("next prompt %+v %v", next, ok)
	}
	// Nothing in flight, nothing waiting but m3: a Stop withdraws it; another is quiet.
	if plan := l.s.StopPlan("s2", 0, false); len(plan.Records) != 2 || plan.Interrupt {
		t.Fatalf("stop plan with m3 waiting %+v", plan)
	} else {
		for _, p := range plan.Records {
			l.add(p)
		}
	}
	if plan := l.s.StopPlan("s3", 0, false); plan.Records != nil || plan.Interrupt || plan.Replay != nil {
		t.Fatalf("a quiet stop %+v", plan)
	}
	// A stale precondition does nothing.
	if plan := l.s.StopPlan("s4", 99, true); !plan.Stale || plan.Records != nil {
		t.Fatalf("a stale stop %+v", plan)
	}
	// A restart: waiting rejected, delivered cancelled.
	l.add(&record.Submission{ID: "m4", Op: "op4", State: record.SubmissionAccepted, Text: "four"})
	l.add(&record.UserPrompt{Turn: l.s.Next(), Text: "four", Submission: "m4"})
	l.add(&record.Submission{ID: "m5", Op: "op5", State: record.SubmissionAccepted, Text: "five"})
	for _, p := range l.s.HandPlan() {
		l.add(p)
	}
	l.add(&record.Quiesced{Reason: Crashed})
	if v, _ := l.s.Submission("m5"); v.State != record.SubmissionAccepted {
		t.Fatalf("m5 %s after the crash's quiesce, want handed back", v.State)
	}
	for _, p := range l.s.RestartPlan() {
		l.add(p)
	}
	for id, want := range map[string]record.SubmissionState{"m4": record.SubmissionCancelled, "m5": record.SubmissionRejected} {
		if v, _ := l.s.Submission(id); v.State != want || v.Reason != HostRestarted {
			t.Errorf("%s %s (%s) after the restart, want %s", id, v.State, v.Reason, want)
		}
	}
	// Attachments are delivered with the text when a message steers.
	if got := (Submission{Text: "see", Attachments: []record.Attachment{{Name: "a.txt", Text: "A"}, {Name: "i.png", Data: "x"}}}).SteeringText(); got != "see\n\nAttached a.txt:\nA" {
		t.Errorf("steering text %q", got)
	}
}

// Answers to approvals: one per operation, only while the call waits, never after a Stop.
func TestAnswerPlan(t *testing.T) {
	l := subLog(t, "")
	l.add(&record.AssistantMessage{Turn: l.s.Next(), Parts: []record.Part{call("c1", "bash", `{}`)}})
	l.add(&record.Approval{CallID: "c1", Name: "bash", Args: "{}", State: record.ApprovalAsked})
	p := l.s.AnswerPlan("a1", "c1", true)
	if p.Record == nil || p.Record.State != record.ApprovalAllowed || p.Replay != nil {
		t.Fatalf("answer plan %+v", p)
	}
	l.add(p.Record)
	if a, ok := l.s.ApprovalAnswer("c1"); !ok || a.State != record.ApprovalAllowed {
		t.Fatalf("the answer of c1: %+v %v", a, ok)
	}
	if p := l.s.AnswerPlan("a1", "c1", true); p.Replay == nil || p.Conflict {
		t.Fatalf("a repeated answer %+v, want a replay", p)
	}
	if p := l.s.AnswerPlan("a1", "c1", false); !p.Conflict {
		t.Fatalf("the same op with another answer %+v, want a conflict", p)
	}
	if p := l.s.AnswerPlan("a2", "c1", true); p.Record != nil {
		t.Fatalf("an answer to an answered call %+v", p)
	}
	// A Stop ends the wait: an answer after it is not written.
	l.results(record.OK)
	l.add(&record.AssistantMessage{Turn: l.s.Next(), Parts: []record.Part{call("c2", "bash", `{}`)}})
	l.add(&record.Approval{CallID: "c2", Name: "bash", State: record.ApprovalAsked})
	for _, p := range l.s.StopPlan("s1", 0, true).Records {
		l.add(p)
	}
	if p := l.s.AnswerPlan("a3", "c2", true); p.Record != nil {
		t.Fatalf("an answer after the Stop %+v", p)
	}
}

// A delivered message that ended is in its turn's record: the state keeps only its key, not a
// second copy of its text and pictures for as long as the conversation lasts; a message that never
// reached a turn (withdrawn, rejected) keeps its own. Either way the key tells a retried send of
// the same message from a different one.
func TestSubmissionLetsGoOfDelivered(t *testing.T) {
	att := []record.Attachment{{Name: "shot.png", MediaType: "image/png", Data: strings.Repeat("iVBORw0KGgo", 100)}}
	for _, end := range []record.SubmissionState{record.SubmissionAnswered, record.SubmissionCancelled, record.SubmissionWithdrawn, record.SubmissionRejected} {
		t.Run(string(end), func(t *testing.T) {
			l := newLog(t)
			l.add(&record.System{Text: "sys"})
			l.add(&record.Submission{ID: "m1", Op: "op1", State: record.SubmissionAccepted, Text: "look at this", Attachments: att})
			switch end {
			case record.SubmissionAnswered, record.SubmissionCancelled:
				l.add(&record.UserPrompt{Turn: l.s.Next(), Text: "look at this", Attachments: att, Submission: "m1"})
				l.reply(text("a cat"))
			}
			l.add(&record.Submission{ID: "m1", State: end})
			v, ok := l.s.Submission("m1")
			if !ok || v.State != end {
				t.Fatalf("submission m1: %+v %v, want %s", v, ok, end)
			}
			delivered := end == record.SubmissionAnswered || end == record.SubmissionCancelled
			if kept := v.Text != "" || v.Attachments != nil; kept == delivered {
				t.Errorf("%s: the state keeps the message's text and attachments %v, want %v", end, kept, !delivered)
			}
			if !v.Carries("look at this", att) {
				t.Errorf("%s: the submission does not carry the message it was sent with", end)
			}
			other := slices.Clone(att)
			other[0].Data += "A"
			for what, differs := range map[string]bool{
				"other text":      v.Carries("look at that", att),
				"no attachments":  v.Carries("look at this", nil),
				"other picture":   v.Carries("look at this", other),
				"text moved over": v.Carries("look at thisshot.png", []record.Attachment{{MediaType: "image/png", Data: att[0].Data}}),
			} {
				if differs {
					t.Errorf("%s: the submission carries a message with %s", end, what)
				}
			}
			if d := sameState(l.s, replay(t, l.recs)); d != "" {
				t.Errorf("replay differs from the live fold:\n%s", d)
			}
		})
	}
}
