package api

import (
	"fmt"
	"time"

	"github.com/reinhq/rein/internal/record"
)

// Submission states (DESIGN §12.2): accepted (durable on the host, waiting) → delivered
// (committed as a user prompt or steering) → answered or cancelled; or withdrawn (a Stop took it
// back before it started) or rejected (with a reason, e.g. host_restarted).
const (
	Accepted  = "accepted"
	Delivered = "delivered"
	Answered  = "answered"
	Cancelled = "cancelled"
	Withdrawn = "withdrawn"
	Rejected  = "rejected"
)

// State is the folded state of a conversation that the host publishes and every client keeps a
// copy of (in View, and in every record event). Working is computed from it, by the same rule
// everywhere.
type State struct {
	Phase    string `json:"phase"`
	InFlight bool   `json:"in_flight"`
	// Turn is the turn in hand: the newest turn while an exchange is in flight, else 0.
	Turn    int64 `json:"turn"`
	Working bool  `json:"working"`
	// Submissions are the submissions not yet terminal (accepted or delivered).
	Submissions []Submission `json:"submissions"`
	// Approvals are the tool calls waiting for the person's answer (permission mode ask).
	Approvals []Approval `json:"approvals"`
	// Seq is the record the state is as of.
	Seq int64 `json:"seq"`
	// Hold is the held tool call the conversation is parked on, if it is (release.v1).
	Hold *Hold `json:"hold,omitempty"`
}

// Submission is a submission not yet terminal, as clients see it.
type Submission struct {
	ID          string              `json:"id"`
	Op          string              `json:"op"`
	State       string              `json:"state"`
	Text        string              `json:"text"`
	Attachments []record.Attachment `json:"attachments"`
	Queue       bool                `json:"queue,omitempty"`
}

// Approval is a tool call waiting for the person's approval, as clients see it: answer it with
// POST /api/conversations/{id}/approve.
type Approval struct {
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	Args   string `json:"args"`
	// Diff is what the call would change, as a unified diff of the file as it was when asked
	// (edit_file, write_file), or why it would fail; Rules are the rules an answer of scope
	// "conversation" grants (none: the call can only be allowed once). approval-scope.v1.
	Diff  string   `json:"diff,omitempty"`
	Rules []string `json:"rules,omitempty"`
}

// Working is the one working rule (DESIGN §12.4): an exchange in flight (taken up and not
// quiesced), or a submission accepted or delivered and not yet terminal. The host's Stop and
// edits, the conversation list, the terminal UI and the Go client all call it; the web chat's copy
// in internal/web/static/working.js is the same rule, pinned to this one by a browser test.
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

// View is a conversation as the API shows it.
type View struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Created string `json:"created"` // RFC 3339, UTC
	Updated string `json:"updated"` // RFC 3339 with fractions, UTC
	Closed  bool   `json:"closed"`
	State   State  `json:"state"`
	// Held names the other process (a rein run, another host) that holds the conversation's
	// record, when one does: its state is what the record said when the host last read it, and
	// what needs the session is refused with the code Held until that process lets go.
	Held *Holder `json:"held,omitempty"`
	// Shelf is where a person put the conversation: "archived", "deleted", or "" (the list).
	// PurgeAt is when a deleted one's files go for good (RFC 3339); until then it can be restored.
	Shelf   string `json:"shelf,omitempty"`
	PurgeAt string `json:"purge_at,omitempty"`
	// Backend is the agent program the conversation's turns run in (capability backends.v1),
	// when it is not rein's own loop; a resting conversation's view may leave it out.
	Backend string `json:"backend,omitempty"`
}

// Holder is the process that holds a conversation's record, as it said when it took the lock.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"` // its command line, shortened
	Since   time.Time `json:"since"`   // when it took the lock
}

// String names the holder for a person: "pid 4242 (rein run "fix it") since 2026-11-29 19:45:12",
// in the words the host's own refusals use.
func (h Holder) String() string {
	if h.PID <= 0 {
		return "a process that has not said who it is"
	}
	s := fmt.Sprintf("pid %d", h.PID)
	if h.Command != "" {
		s += " (" + h.Command + ")"
	}
	if !h.Since.IsZero() {
		s += " since " + h.Since.Local().Format(time.DateTime)
	}
	return s
}
