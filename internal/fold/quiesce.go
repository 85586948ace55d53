package fold

import (
	"fmt"
	"slices"

	"github.com/reinhq/rein/internal/record"
)

// Quiesce reasons, recorded in the quiesced event: the record's (record.QuiescedReplied, ...).
const (
	Replied   = record.QuiescedReplied
	Cancelled = record.QuiescedCancelled
	Aborted   = record.QuiescedAborted
	Limit     = record.QuiescedLimit
	Crashed   = record.QuiescedCrashed
)

// QuiescePlan returns what the log still owes for a fresh prompt to become admissible, ending the
// exchange for reason: the answer to every owed call, or nil when nothing is owed. Each answer is
// truthful about how far its call got, whatever the reason:
//
//   - finished, with its result kept in its tool_finished event: that result, byte for byte, with
//     its own outcome (DESIGN §3.3: a crash mid-batch never relabels a finished call);
//   - started (a tool_started event) and not finished with a kept result: interrupted;
//   - never started: not_executed.
//
// Nothing else is ever synthesised.
func (s *State) QuiescePlan(reason string) *record.ToolResults {
	if len(s.owed) == 0 {
		return nil
	}
	turn := s.newest()
	why := "the session was stopped"
	switch reason {
	case Crashed:
		why = "rein stopped unexpectedly (a crash or a kill)"
	case Aborted:
		why = "the exchange ended on an error"
	case Limit:
		why = "the exchange reached its turn limit"
	}
	res := &record.ToolResults{}
	for _, id := range s.owed {
		if r, ok := s.finished.get(id); ok {
			res.Results = append(res.Results, r)
			continue
		}
		name := s.CallName(id)
		r := record.ToolResult{CallID: id, IsError: true}
		if s.Started(id) {
			r.Outcome = record.Interrupted
			r.Content = fmt.Sprintf("%s was cut short when %s; it produced no result here, and any side effects it already had stand.", name, why)
		} else if p, held := s.Parking(); held && p.CallID == id {
			r.Outcome = record.NotExecuted
			r.Content = heldContent(name, why, p)
		} else {
			r.Outcome = record.NotExecuted
			r.Content = fmt.Sprintf("%s was not executed: %s before it started.", name, why)
		}
		r.Content = WithTrailer(r.Content, turn)
		res.Results = append(res.Results, r)
	}
	return res
}

// Finished returns the result an owed call's tool_finished event kept, if it kept one.
func (s *State) Finished(callID string) (record.ToolResult, bool) { return s.finished.get(callID) }

// judgeToolFinished refuses a kept result that could not answer its call: the quiesce plan would
// put it in a tool_results record the fold must refuse. A tool_finished that keeps no result
// (every one written before the field existed) is judged as it always was: admissible.
func judgeToolFinished(seq int64, b *record.ToolFinished) error {
	if b.Content != "" && !b.Outcome.Valid() {
		return refuse(seq, "finishes tool call %q with the outcome %q, which is not one of ok, error, denied, not_executed, interrupted, timed_out", b.CallID, b.Outcome)
	}
	return nil
}

// applyToolFinished keeps the result of an owed call, or forgets it when the event keeps none:
// the newest word on a call is the one a resume answers with.
func (s *State) applyToolFinished(b *record.ToolFinished) {
	if !slices.Contains(s.owed, b.CallID) {
		return
	}
	if b.Content == "" {
		s.finished.del(b.CallID)
		return
	}
	s.finished.put(b.CallID, record.ToolResult{CallID: b.CallID, Content: b.Content, IsError: b.IsError, Outcome: b.Outcome})
}
