// Package api is what crosses rein's host API (docs/api.md): the JSON of every request and answer,
// the events stream's payloads, the error codes with the one table of their HTTP statuses, the
// capabilities, and the rules every client computes from its own copy of a conversation's state
// with the same function as the host (Working, DESIGN §12.4).
//
// It is the contract between the host and its clients, so it owns its types outright: none is
// borrowed from the packages behind the host (the fold's residues and rows, the filesystem's lock
// holder, the session's live events have their own wire types here, converted by the host), and a
// client links this package, the record vocabulary and the standard library, never the host, the
// agent, the session or SQLite. Field names and JSON tags are the wire: renaming one breaks every
// client in the field, so new fields are optional and nothing is reordered or removed.
package api

// The capabilities a host may advertise (GET /api/capabilities). A client sends an optional field
// or calls an optional endpoint only on a host that advertises it, and treats an unknown host as
// the oldest.
const (
	CapStop        = "conversation-stop.v1" // POST .../stop
	CapOpIDs       = "op-ids.v1"            // op_id on every mutation, replayed on a repeat
	CapEvents      = "events.v1"            // GET .../events
	CapAttachments = "attachments.v1"       // attachments on a message
	CapQueue       = "queue.v1"             // queue on a message
	CapEdits       = "context-edits.v1"     // POST .../evict, rewind, clear
	CapFork        = "fork.v1"              // POST .../fork
	CapApprovals   = "approvals.v1"         // POST .../approve
	CapModel       = "model.v1"             // POST .../model
	// CapApprovalScope: scope "conversation" on an approval's answer, diff and rules on the
	// approvals a conversation's state lists.
	CapApprovalScope = "approval-scope.v1"
	// CapBackends: backend on a create, naming the agent program the conversation's turns run
	// in; the capabilities list the back-ends the host offers (Capabilities.Backends).
	CapBackends = "backends.v1"
)

// The back-ends a conversation's turns may run in (capability backends.v1).
const (
	BackendRein   = "rein"   // rein's own loop, with the host's provider and model
	BackendClaude = "claude" // Claude Code
	BackendCodex  = "codex"  // Codex
)

// Capabilities is what GET /api/capabilities answers: the host's version and what it accepts.
type Capabilities struct {
	Version      string   `json:"version"`
	Capabilities []string `json:"capabilities"`
	// Backends are the back-ends a create may name (capability backends.v1), and Backend the one
	// a create that names none gets.
	Backends []string `json:"backends,omitempty"`
	Backend  string   `json:"backend,omitempty"`
}

// Has reports whether the host advertises capability name.
func (c Capabilities) Has(name string) bool {
	for _, n := range c.Capabilities {
		if n == name {
			return true
		}
	}
	return false
}
