package host

import (
	"time"

	"github.com/reinhq/rein/internal/fold"
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
	Seq         int64         `json:"seq"`
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
// app.js is the same three lines.
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
	s := State{Phase: st.Phase().String(), InFlight: st.InFlight(), Seq: st.Seq(), Submissions: []SubmissionV{}}
	if s.InFlight {
		s.Turn = st.Newest()
	}
	for _, sub := range st.Submissions() {
		if sub.State == Accepted || sub.State == Delivered {
			s.Submissions = append(s.Submissions, SubmissionV{ID: sub.ID, Op: sub.Op, State: sub.State, Text: sub.Text, Attachments: orEmpty(sub.Attachments), Queue: sub.Queue})
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
}

// View returns the conversation's view.
func (c *Conv) View() View {
	var v View
	c.sess.Read(func(st *fold.State) {
		m := st.Meta()
		v = View{ID: c.id, Title: m.Title, Closed: m.Closed, State: StateOf(st)}
		if v.Title == "" {
			for _, t := range st.Turns() {
				if t.Role == record.User && t.Kind == fold.Own {
					v.Title = t.Label
					break
				}
			}
		}
		v.Created = time.UnixMilli(m.Created).UTC().Format(time.RFC3339)
		v.Updated = time.UnixMilli(st.LastTime()).UTC().Format(time.RFC3339Nano)
	})
	return v
}
