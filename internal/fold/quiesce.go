package fold

import (
	"fmt"

	"github.com/reinhq/rein/internal/record"
)

// Quiesce reasons, recorded in the quiesced event.
const (
	Replied   = "replied"
	Cancelled = "cancelled"
	Aborted   = "aborted"
	Limit     = "limit"
	Crashed   = "crashed"
)

// QuiescePlan returns what the log still owes for a fresh prompt to become admissible, ending the
// exchange for reason: the answer to every owed call, truthful about whether it started
// (not_executed, or interrupted when a tool_started event says it ran), or nil when nothing is
// owed. Nothing else is ever synthesised.
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
		name := s.CallName(id)
		r := record.ToolResult{CallID: id, IsError: true}
		if s.Started(id) {
			r.Outcome = record.Interrupted
			r.Content = fmt.Sprintf("%s was cut short when %s; it produced no result here, and any side effects it already had stand.", name, why)
		} else {
			r.Outcome = record.NotExecuted
			r.Content = fmt.Sprintf("%s was not executed: %s before it started.", name, why)
		}
		r.Content = WithTrailer(r.Content, turn)
		res.Results = append(res.Results, r)
	}
	return res
}
