package host

import (
	"time"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

// State is the folded state of a conversation that the host publishes and every client keeps a
// copy of. Working is computed from it, by the same rule everywhere.
type State struct {
	Phase       string        `json:"phase"`
	InFlight    bool          `json:"in_flight"`
	Turn        int64         `json:"turn"`
	Working     bool          `json:"working"`
	Submissions []SubmissionV `json:"submissions"`
	// Approvals are the tool calls waiting for the person's answer (permission mode ask).
	Approvals []ApprovalV `json:"approvals"`
	Seq       int64       `json:"seq"`
}

// ApprovalV is a tool call waiting for the person's approval, as clients see it: answer it with
// POST /api/conversations/{id}/approve.
type ApprovalV struct {
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	Args   string `json:"args"`
}

// SubmissionV is a submission not yet terminal, as clients see it.
type SubmissionV struct {
	ID          string              `json:"id"`
	Op          string              `json:"op"`
	State       string              `json:"state"`
	Text        string              `json:"text"`
	Attachments []record.Attachment `json:"attachments"`
	Queue       bool                `json:"queue,omitempty"`
}

// Working is the one working rule (DESIGN §12.4): an exchange in flight (taken up and not
// quiesced), or a submission accepted or delivered and not yet terminal. The host's Stop, the
// conversation list, the web chat's Stop button and the TUI all use it; the web chat's copy in
// internal/web/static/working.js is the same rule, pinned to this one by a browser test.
func Working(s State) bool {
	if s.InFlight {
		return true
	}
	for _, sub := range s.Submissions {
		if sub.State == Accepted || sub.State == Delivered {
			return true
		}
	}
	return false
}

// StateOf folds a session's state into the published conversation state.
func StateOf(st *fold.State) State {
	s := State{Phase: st.Phase().String(), InFlight: st.InFlight(), Seq: st.Seq(), Submissions: []SubmissionV{}, Approvals: []ApprovalV{}}
	for _, a := range st.Approvals() {
		s.Approvals = append(s.Approvals, ApprovalV{CallID: a.CallID, Name: a.Name, Args: a.Args})
	}
	if s.InFlight {
		s.Turn = st.Newest()
	}
	for _, sub := range st.Submissions() {
		if sub.Open() {
			s.Submissions = append(s.Submissions, SubmissionV{ID: sub.ID, Op: sub.Op, State: public(sub.State), Text: sub.Text, Attachments: orEmpty(sub.Attachments), Queue: sub.Queue})
		}
	}
	s.Working = Working(s)
	return s
}

// View is a conversation as the API shows it.
type View struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Created string `json:"created"`
	Updated string `json:"updated"`
	Closed  bool   `json:"closed"`
	State   State  `json:"state"`
	// Held names the other process (a rein run, another host) that holds the conversation's
	// record, when one does: its state is what the record said when the host last read it, and
	// what needs the session is refused with the code "held" until that process lets go.
	Held *fsys.Holder `json:"held,omitempty"`

	created, updated int64 // unix ms, for ordering and the index
}

// viewOf is a conversation's view from its folded state.
func viewOf(id string, st *fold.State) View {
	m := st.Meta()
	v := View{ID: id, Title: m.Title, Closed: m.Closed, State: StateOf(st), created: m.Created, updated: st.LastTime()}
	if v.Title == "" {
		for _, t := range st.Turns() {
			if t.Role == record.User && t.Kind == fold.Own {
				v.Title = t.Label
				break
			}
		}
	}
	v.Created, v.Updated = stamp(v.created), stampNano(v.updated)
	return v
}

// view is the view of a resting conversation, from its index row: nothing is in flight and no
// submission is open, as nothing rests that has work.
func (r Row) view() View {
	return View{ID: r.ID, Title: r.Title, Closed: r.Closed, Created: stamp(r.Created), Updated: stampNano(r.Updated),
		State:   State{Phase: r.Phase, Working: r.Working, Submissions: []SubmissionV{}, Approvals: []ApprovalV{}, Seq: r.Seq},
		created: r.Created, updated: r.Updated}
}

func stamp(ms int64) string     { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }
func stampNano(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }
