package fold

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/internal/record"
	"pgregory.net/rapid"
)

// hostModel is the host and its agent in miniature: it drives a log through the fold's plans in
// the order internal/host and internal/agent do, with their steps interleaved at random as their
// goroutines may interleave them. Sends (some queued) and the pump (start the next prompt, hand
// the rest); turn boundaries (deliver what was handed); replies with and without tool calls;
// approvals asked and answered; Stops (repeated, naming a turn or not, with and without an
// exchange running); exchanges ending (quiesce, then the host's finish); crashes (what was
// written survives; settle, then the restart plan).
type hostModel struct {
	t       *rapid.T
	l       *log
	running bool // the host has an exchange: taken up, not yet finished on the host's side
	stopped bool // the running exchange's context was cancelled: its next step quiesces
	ended   string
	msgs    int
	ops     []string // Stop operation ids used
	calls   int
}

func (h *hostModel) send() {
	h.msgs++
	id := fmt.Sprintf("m%d", h.msgs)
	h.l.add(&record.Submission{ID: id, Op: "op-" + id, State: record.SubmissionAccepted, Text: "message " + id,
		Queue: rapid.IntRange(0, 3).Draw(h.t, "queue") == 0})
	h.pump()
}

// pump is Conv.pump: start the oldest waiting message when nothing runs, then hand the rest.
func (h *hostModel) pump() {
	s := h.l.s
	if !h.running {
		next, ok := s.NextPrompt()
		if !ok {
			return
		}
		if !s.IsReady() || s.InFlight() { // agent.Begin settles what the last exchange left
			h.quiesce(Aborted)
		}
		h.l.add(&record.UserPrompt{Turn: s.Next(), Text: next.Text, Submission: next.ID})
		h.running, h.stopped, h.ended = true, false, ""
	}
	for _, p := range s.HandPlan() {
		h.l.add(p)
	}
}

func (h *hostModel) quiesce(reason string) {
	if plan := h.l.s.QuiescePlan(reason); plan != nil {
		h.l.add(plan)
	}
	h.l.add(&record.Quiesced{Reason: reason})
}

// agent plays one step of the running exchange's loop.
func (h *hostModel) agent() {
	s := h.l.s
	if !h.running || h.ended != "" {
		return
	}
	if h.stopped {
		h.quiesce(Cancelled)
		h.ended = Cancelled
		return
	}
	switch s.Phase() {
	case AwaitingToolResults:
		owed := s.Owed()
		if _, asked := s.Approval(owed[0]); !asked && rapid.Bool().Draw(h.t, "ask") {
			h.l.add(&record.Approval{CallID: owed[0], Name: "bash", State: record.ApprovalAsked})
			return
		}
		if _, asked := s.Approval(owed[0]); asked {
			return // waits for the person
		}
		h.l.results(record.OK)
	case AwaitingAssistantAfterUser, AwaitingAssistantAfterToolResults:
		// The boundary: what was handed is delivered, at the writer.
		for _, p := range s.DeliveryPlan() {
			h.l.add(p)
		}
		switch rapid.IntRange(0, 3).Draw(h.t, "reply") {
		case 0, 1:
			h.calls++
			h.l.reply(call(fmt.Sprintf("c%d", h.calls), "bash", `{}`))
		case 2:
			h.l.reply(text("done"))
			h.quiesce(Replied)
			h.ended = Replied
		case 3: // a provider error ends it
			h.quiesce(Aborted)
			h.ended = Aborted
		}
	}
}

// finish is Conv.finish: what the exchange delivered ends, then the next message is taken up.
func (h *hostModel) finish() {
	if !h.running || h.ended == "" {
		return
	}
	for _, p := range h.l.s.FinishPlan(h.ended, "") {
		h.l.add(p)
	}
	h.running = false
	h.pump()
}

// stop is Conv.stopLocked.
func (h *hostModel) stop() {
	op := fmt.Sprintf("s%d", len(h.ops)+1)
	if len(h.ops) > 0 && rapid.IntRange(0, 4).Draw(h.t, "repeat press") == 0 {
		op = rapid.SampledFrom(h.ops).Draw(h.t, "press")
	} else {
		h.ops = append(h.ops, op)
	}
	var turn int64
	if rapid.IntRange(0, 3).Draw(h.t, "precondition") == 0 {
		turn = rapid.SampledFrom([]int64{h.l.s.Newest(), h.l.s.Newest() + 1}).Draw(h.t, "turn")
	}
	before := h.l.s.Submissions()
	plan := h.l.s.StopPlan(op, turn, h.running)
	for _, p := range plan.Records {
		h.l.add(p)
	}
	if plan.Replay != nil || plan.Stale || plan.Records == nil {
		if d := cmp.Diff(before, h.l.s.Submissions(), cmp.AllowUnexported(Submission{})); d != "" {
			h.t.Fatalf("a press that did nothing changed the submissions:\n%s", d)
		}
		return
	}
	for _, v := range h.l.s.Submissions() {
		if v.Waiting() {
			h.t.Fatalf("after a Stop, %s is still %s", v.ID, v.State)
		}
	}
	if plan.Interrupt {
		h.stopped = true
	}
}

// answer is Conv.Approve.
func (h *hostModel) answer() {
	asked := h.l.s.Approvals()
	callID := "c0"
	if len(asked) > 0 {
		callID = asked[0].CallID
	}
	p := h.l.s.AnswerPlan(fmt.Sprintf("a%d", h.l.s.Seq()), callID, rapid.Bool().Draw(h.t, "allow"))
	if p.Record != nil {
		h.l.add(p.Record)
	}
}

// crash keeps a random prefix of what was written, and starts again as a host does: the
// exchange left in flight settled (crashed), then the restart plan.
func (h *hostModel) crash() {
	cut := rapid.IntRange(0, len(h.l.recs)).Draw(h.t, "crash at")
	h.l.recs = h.l.recs[:cut]
	h.l.s = replay(h.t, h.l.recs)
	if h.l.s.InFlight() || !h.l.s.IsReady() {
		h.quiesce(Crashed)
	}
	for _, p := range h.l.s.RestartPlan() {
		h.l.add(p)
	}
	h.running, h.stopped, h.ended = false, false, ""
}

// check holds after every step.
func (h *hostModel) check() {
	s := h.l.s
	// The open submissions and the operations' index are what a walk of them all finds.
	var open []Submission
	for _, v := range s.Submissions() {
		if v.Open() {
			open = append(open, v)
		}
		if got, ok := s.SubmissionByOp(v.Op); !ok || got.ID != v.ID {
			h.t.Fatalf("SubmissionByOp(%q) = %s, %v; want %s", v.Op, got.ID, ok, v.ID)
		}
	}
	if d := cmp.Diff(open, s.OpenSubmissions(), cmp.AllowUnexported(Submission{})); d != "" {
		h.t.Fatalf("OpenSubmissions differs from the open ones of Submissions:\n%s", d)
	}
	if _, ok := s.SubmissionByOp("op-never"); ok {
		h.t.Fatalf("SubmissionByOp found an operation never used")
	}
	for _, v := range s.Submissions() {
		switch {
		case v.State == record.SubmissionHanded && (!s.InFlight() || s.Stopped()):
			h.t.Fatalf("%s is handed, but the exchange is in flight %v, stopped %v", v.ID, s.InFlight(), s.Stopped())
		case v.Waiting() && !h.running:
			h.t.Fatalf("%s is %s while no exchange runs: the pump left it", v.ID, v.State)
		}
	}
}

// step plays one step of the host or its agent, drawn at random, and checks what holds after it.
func (h *hostModel) step() {
	switch rapid.IntRange(0, 12).Draw(h.t, "step") {
	case 0, 1, 2:
		h.send()
	case 3, 4, 5, 6:
		h.agent()
	case 7, 8:
		h.finish()
	case 9:
		h.stop()
	case 10:
		h.answer()
	case 11:
		if rapid.IntRange(0, 3).Draw(h.t, "crash") == 0 {
			h.crash()
		}
	case 12:
		if h.running && h.ended == "" && rapid.IntRange(0, 3).Draw(h.t, "close") == 0 {
			h.stopped = true // the host closing: the exchange is cancelled with no Stop
		}
	}
	h.check()
}

// The host's behaviour, however its steps interleave, leaves a record whose replay equals the
// live state; every record a plan returns is admitted; no message is delivered twice, or after it
// was withdrawn, or taken up after a Stop pressed while it waited; and once the host stops
// everything and its exchange finishes, every message has ended.
func TestHostLiveEqualsReplay(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := &hostModel{t: rt, l: newLog(rt)}
		h.l.add(&record.System{Text: "sys"})
		for i, n := 0, rapid.IntRange(1, 120).Draw(rt, "steps"); i < n; i++ {
			h.step()
		}
		live, replayed := h.l.s, replay(rt, h.l.recs)
		if d := cmp.Diff(live.Submissions(), replayed.Submissions(), cmp.AllowUnexported(Submission{})); d != "" {
			rt.Fatalf("the replayed submissions differ from the live ones:\n%s", d)
		}
		if live.Stopped() != replayed.Stopped() || !cmp.Equal(live.Approvals(), replayed.Approvals()) {
			rt.Fatalf("replay differs: stopped %v/%v, approvals %v/%v", live.Stopped(), replayed.Stopped(), live.Approvals(), replayed.Approvals())
		}
		if d := cmpViews(viewOf(live), viewOf(replayed)); d != "" {
			rt.Fatalf("replay differs from the live fold:\n%s", d)
		}
		checkDeliveries(rt, h.l.recs)
		// Stop everything: once the exchange finishes, nothing is open.
		plan := h.l.s.StopPlan("s-last", 0, h.running)
		for _, p := range plan.Records {
			h.l.add(p)
		}
		h.stopped = h.stopped || plan.Interrupt
		for range 3 {
			h.agent()
			h.finish()
		}
		for _, v := range h.l.s.Submissions() {
			if v.Open() {
				rt.Fatalf("after a Stop and the exchange's end, %s is still %s", v.ID, v.State)
			}
		}
	})
}

// checkDeliveries checks the record the way the host's tests do (checkRecord in internal/host).
func checkDeliveries(t *rapid.T, recs []record.Record) {
	accepted := map[string]int64{}
	delivered := map[string]int64{}
	var lastStop int64
	deliver := func(seq int64, id string) {
		if id == "" {
			return
		}
		if prev, ok := delivered[id]; ok {
			t.Fatalf("record %d delivers %s again (first at %d)", seq, id, prev)
		}
		if lastStop > accepted[id] {
			t.Fatalf("record %d delivers %s, accepted at %d, before the Stop of record %d", seq, id, accepted[id], lastStop)
		}
		delivered[id] = seq
	}
	for _, r := range recs {
		switch b := r.Body.(type) {
		case *record.Submission:
			if b.State == record.SubmissionAccepted {
				accepted[b.ID] = r.Seq
			}
		case *record.UserPrompt:
			deliver(r.Seq, b.Submission)
		case *record.Steering:
			deliver(r.Seq, b.Submission)
		case *record.Stop:
			lastStop = r.Seq
		}
	}
}
