package api

import "github.com/reinhq/rein/internal/record"

// The bodies of the API's requests and answers, endpoint by endpoint (docs/api.md). Every
// mutation carries an operation id (op_id): a repeat with the same payload answers what the first
// did with "replayed": true and no second effect; the same id with another payload is refused
// OpConflict.

// MaxBody bounds every request body.
const MaxBody = 1 << 20

// Conversations is what GET /api/conversations answers, most recently updated first.
type Conversations struct {
	Conversations []View `json:"conversations"`
}

// CreateRequest is the body of POST /api/conversations.
type CreateRequest struct {
	Op    string `json:"op_id"`
	Title string `json:"title"` // optional
	// Backend names the agent program the conversation's turns run in (capability backends.v1):
	// BackendRein, BackendClaude or BackendCodex; "" takes the host's default.
	Backend string `json:"backend,omitempty"`
}

// Created is what a create (POST /api/conversations) and a fork answer: the conversation, and
// whether the operation had already made it.
type Created struct {
	Conversation View `json:"conversation"`
	Replayed     bool `json:"replayed"`
}

// RenameRequest is the body of PATCH /api/conversations/{id}; it answers the View.
type RenameRequest struct {
	Op    string `json:"op_id"`
	Title string `json:"title"`
}

// Message is the body of POST /api/conversations/{id}/messages. Op is its operation id: keep it to
// retry the same message.
type Message struct {
	Op          string              `json:"op_id"`
	Text        string              `json:"text,omitempty"`
	Attachments []record.Attachment `json:"attachments,omitempty"` // capability attachments.v1
	// Queue delivers it after the running exchange ends instead of as steering at the next turn
	// boundary (capability queue.v1).
	Queue bool `json:"queue,omitempty"`
}

// SendResult is what a send answers, as soon as the submission is durable.
type SendResult struct {
	MessageID string `json:"message_id"`
	State     string `json:"state"`
	Replayed  bool   `json:"replayed"`
}

// StopRequest is the body of POST /api/conversations/{id}/stop.
type StopRequest struct {
	Op string `json:"op_id"`
	// Turn, when not 0, is a precondition: stop only if that turn is still in hand.
	Turn int64 `json:"turn,omitempty"`
}

// StopResult is what a Stop answers.
type StopResult struct {
	Stopped     bool    `json:"stopped"`
	Interrupted bool    `json:"interrupted"`
	Withdrawn   []Taken `json:"withdrawn"`
	Reason      string  `json:"reason,omitempty"` // why nothing was stopped, when the turn was not in hand
	Replayed    bool    `json:"replayed"`
}

// Taken is a message a Stop took back, returned so the client can put its text back.
type Taken struct {
	ID          string              `json:"id"`
	Text        string              `json:"text"`
	Attachments []record.Attachment `json:"attachments"`
}

// ApproveRequest is the body of POST /api/conversations/{id}/approve (capability approvals.v1).
type ApproveRequest struct {
	Op     string `json:"op_id"`
	CallID string `json:"call_id"`
	Allow  *bool  `json:"allow"` // required: true runs the call, false refuses it
	// Scope (approval-scope.v1) is "once" (or empty): this call; or "conversation": allow this
	// call and grant the rules it was asked with for the rest of the conversation.
	Scope string `json:"scope,omitempty"`
}

// ApproveResult is what an approval answers.
type ApproveResult struct {
	CallID   string `json:"call_id"`
	State    string `json:"state"` // allowed or denied
	Scope    string `json:"scope,omitempty"`
	Replayed bool   `json:"replayed"`
}

// ModelRequest is the body of POST /api/conversations/{id}/model (capability model.v1).
type ModelRequest struct {
	Op       string `json:"op_id"`
	Model    string `json:"model"`
	Provider string `json:"provider,omitempty"` // the conversation's, when empty
}

// ModelResult is what a model switch answers.
type ModelResult struct {
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	Replayed     bool   `json:"replayed"`
	Conversation View   `json:"conversation"`
}

// EvictRequest is the body of POST /api/conversations/{id}/evict: take turns [From, To] out of
// the context, leaving Note in their place (capability context-edits.v1).
type EvictRequest struct {
	Op   string `json:"op_id"`
	From int64  `json:"from"`
	To   int64  `json:"to"`
	Note string `json:"note"`
}

// RewindRequest is the body of POST /api/conversations/{id}/rewind: withdraw every turn from Turn
// on.
type RewindRequest struct {
	Op   string `json:"op_id"`
	Turn int64  `json:"turn"`
	// Files rewinds the workspace's files too, to their checkpoint when Turn began (capability
	// rewind-files.v1).
	Files bool `json:"files,omitempty"`
}

// ClearRequest is the body of POST /api/conversations/{id}/clear: withdraw every turn.
type ClearRequest struct {
	Op string `json:"op_id"`
}

// EditResult is what an edit (evict, rewind, clear) answers: the survey after it.
type EditResult struct {
	Seq      int64  `json:"seq"`
	Survey   Survey `json:"survey"`
	Replayed bool   `json:"replayed"`
	// Files is what a rewind with files did to the workspace.
	Files *FilesRestored `json:"files,omitempty"`
}

// ForkRequest is the body of POST /api/conversations/{id}/fork: a new conversation inheriting
// this one's context up to turn At (0: all of it). It answers Created (capability fork.v1).
type ForkRequest struct {
	Op string `json:"op_id"`
	At int64  `json:"at,omitempty"`
}
