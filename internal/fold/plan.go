package fold

import (
	"github.com/reinhq/rein/internal/record"
)

// The host's decisions about submissions, Stop and approvals, as plans: each is a pure function of
// the state as it stands when the host writes, returning the records to write and the effects to
// carry out once they are durable (rule 3 of STYLE.md). The host computes a plan inside the
// session's write (session.CommitPlan), so no other record lands between the judgement and the
// write: a plan is never refused.

// HandPlan returns what hands the waiting submissions to the running exchange: a handed event for
// each one accepted and not queued, oldest first, while an exchange is in flight and no Stop has
// interrupted it. Otherwise nothing: they wait for the next exchange.
func (s *State) HandPlan() []record.Payload {
	if !s.inFlight || s.stopped > 0 {
		return nil
	}
	var ps []record.Payload
	for v := range s.openSubs() {
		if v.State == record.SubmissionAccepted && !v.Queue {
			ps = append(ps, &record.Submission{ID: v.ID, State: record.SubmissionHanded})
		}
	}
	return ps
}

// DeliveryPlan returns what delivers, at a turn boundary of the running exchange, the submissions
// handed to it: a steering record for each, oldest first. Nothing when no reply is due, no
// exchange is in flight, or a Stop interrupted it.
func (s *State) DeliveryPlan() []record.Payload {
	if !s.phase.awaitingAssistant() || !s.inFlight || s.stopped > 0 {
		return nil
	}
	var ps []record.Payload
	for v := range s.openSubs() {
		if v.State == record.SubmissionHanded {
			ps = append(ps, &record.Steering{Text: v.SteeringText(), Source: "user", Submission: v.ID})
		}
	}
	return ps
}

// NextPrompt returns the submission the next exchange takes up as its prompt: the oldest waiting.
func (s *State) NextPrompt() (Submission, bool) {
	for v := range s.openSubs() {
		if v.Waiting() {
			return v, true
		}
	}
	return Submission{}, false
}

// StopPlan is what a Stop press does (DESIGN §12.3).
type StopPlan struct {
	// Replay is the Stop the press's operation id already recorded: the press is answered from it
	// and does nothing more. Conflict says that Stop named another turn.
	Replay   *record.Stop
	Conflict bool
	// Stale says the press named a turn that is no longer in hand: it does nothing.
	Stale bool
	// Withdraw are the submissions it takes back, oldest first: every one still waiting. For a
	// replay, those its first press took back.
	Withdraw []Submission
	// Interrupt says the running exchange is to be cancelled, once Records are durable.
	Interrupt bool
	// Settle says the session is parked on a held call with no exchange running: once Records are
	// durable, its window is to be answered (not_executed for every call that had not run) and
	// the exchange quiesced, as a Stop quiesces a running one.
	Settle bool
	// Records are what the press writes, in this order and in one write: a withdrawn event for
	// each submission taken back, then the Stop. Nil when there is nothing to stop (a quiet
	// success, no record), and for a replay or a stale press.
	Records []record.Payload
}

// StopPlan judges a Stop press under operation op. turn, when non-zero, is a precondition: stop
// only if that turn is in hand. running says whether the host has an exchange running (taken up,
// and not yet finished on its side): a Stop interrupts it even once it has quiesced, so that
// what it left waits. A press's effects happen only if its write is durable: withdraw, record
// the Stop, then interrupt.
func (s *State) StopPlan(op string, turn int64, running bool) StopPlan {
	if prev, ok := s.stops.get(op); ok {
		p := StopPlan{Replay: &prev, Conflict: prev.Turn != turn}
		for _, id := range prev.Withdrawn {
			if v, ok := s.Submission(id); ok {
				p.Withdraw = append(p.Withdraw, v)
			}
		}
		return p
	}
	if turn != 0 && !(s.inFlight && s.newest() == turn) {
		return StopPlan{Stale: true}
	}
	p := StopPlan{Interrupt: running, Settle: s.parked && !running}
	var ids []string
	for v := range s.openSubs() {
		if v.Waiting() {
			p.Withdraw = append(p.Withdraw, v)
			p.Records = append(p.Records, &record.Submission{ID: v.ID, State: record.SubmissionWithdrawn, Reason: "cancelled before it started"})
			ids = append(ids, v.ID)
		}
	}
	if !running && !p.Settle && len(ids) == 0 {
		return StopPlan{}
	}
	p.Records = append(p.Records, &record.Stop{Op: op, Turn: turn, Withdrawn: ids, Interrupted: running || p.Settle})
	return p
}

// FinishPlan returns how the submissions an exchange delivered end, once it has ended for reason
// (a quiesce reason): answered if it replied, else cancelled, with detail saying why when there is
// more to say.
func (s *State) FinishPlan(reason, detail string) []record.Payload {
	end := record.SubmissionCancelled
	if reason == Replied {
		end = record.SubmissionAnswered
	}
	var ps []record.Payload
	for v := range s.openSubs() {
		if v.State == record.SubmissionDelivered {
			ps = append(ps, &record.Submission{ID: v.ID, State: end, Reason: reason, Detail: detail})
		}
	}
	return ps
}

// HostRestarted is the reason a submission ends with when the host restarted under it.
const HostRestarted = "host_restarted"

// RestartPlan returns how a host that starts again ends what a previous host left open, once the
// exchange it left in flight is settled: a submission still waiting is rejected (the client may
// send it again under a new id; nothing is delivered twice), and one delivered ends cancelled.
func (s *State) RestartPlan() []record.Payload {
	var ps []record.Payload
	for v := range s.openSubs() {
		switch {
		case v.Waiting():
			ps = append(ps, &record.Submission{ID: v.ID, State: record.SubmissionRejected, Reason: HostRestarted,
				Detail: "the host restarted before this message was delivered; send it again to retry"})
		case v.State == record.SubmissionDelivered && !s.parked: // a held exchange is still the message's
			ps = append(ps, &record.Submission{ID: v.ID, State: record.SubmissionCancelled, Reason: HostRestarted,
				Detail: "the host restarted while this message's exchange was running"})
		}
	}
	return ps
}

// AnswerPlan is what a person's answer to an approval does.
type AnswerPlan struct {
	// Replay is the answer the operation id already recorded: the request is answered from it.
	// Conflict says it answered another call, or the other way.
	Replay   *record.Approval
	Conflict bool
	// Record is the answer to write; nil when the call is not waiting for one (never asked,
	// answered already, or its wait ended by a Stop).
	Record *record.Approval
}

// AnswerPlan judges an answer to call callID under operation op: allowed, or denied.
func (s *State) AnswerPlan(op, callID string, allow bool) AnswerPlan {
	return s.ScopedAnswerPlan(op, callID, allow, "")
}

// ScopedAnswerPlan is AnswerPlan for an answer of scope: "" for the one call, or
// record.ScopeConversation to allow the call and grant the rules it was asked with (see
// Grants). A replay conflicts when the scope differs too.
func (s *State) ScopedAnswerPlan(op, callID string, allow bool, scope string) AnswerPlan {
	state := record.ApprovalDenied
	if allow {
		state = record.ApprovalAllowed
	}
	if prev, ok := s.answers.get(op); ok {
		return AnswerPlan{Replay: &prev, Conflict: prev.CallID != callID || prev.State != state || prev.Scope != scope}
	}
	a, ok := s.Approval(callID)
	if !ok || s.stopped > 0 {
		return AnswerPlan{}
	}
	rec := &record.Approval{CallID: callID, State: state, By: string(record.ByUser), Op: op}
	if scope != "" {
		rec.Scope, rec.Rules = scope, a.Rules
	}
	return AnswerPlan{Record: rec}
}
