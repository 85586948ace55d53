package tui

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/record"
)

// Host is what the chat needs of a rein host: the part of the host API (docs/api.md) a terminal
// client uses. cmd/rein adapts internal/client to it; tests use a fake.
type Host interface {
	Capabilities(ctx context.Context) ([]string, error)
	List(ctx context.Context) ([]host.View, error)
	Create(ctx context.Context, op, title string) (host.View, error)
	Send(ctx context.Context, id string, m Outgoing) (host.SendResult, error)
	Stop(ctx context.Context, id, op string) (host.StopResult, error)
	Transcript(ctx context.Context, id string) (Transcript, error)
	// Events streams the conversation's records after seq after, and live material, until ctx
	// ends. The channel closes when the stream ends; the chat then reconnects after the last seq
	// it applied, so nothing is missed.
	Events(ctx context.Context, id string, after int64) (<-chan Event, error)
}

// Editor is the optional part of a host: a person's context edits, forks and model changes. A
// host advertises each with a capability (CapEdits, CapFork, CapModel); the chat asks only a host
// that advertises it, and says "not supported by this host" otherwise.
type Editor interface {
	Evict(ctx context.Context, id, op string, from, to int64, note string) (fold.Survey, error)
	Rewind(ctx context.Context, id, op string, turn int64) (fold.Survey, error)
	Clear(ctx context.Context, id, op string) (fold.Survey, error)
	Fork(ctx context.Context, id, op string, at int64) (host.View, error)
	SetModel(ctx context.Context, id, op, model string) (host.View, error)
}

// The capabilities the chat looks for.
const (
	CapQueue     = "queue.v1"
	CapEdits     = "context-edits.v1" // evict, rewind, clear
	CapFork      = "fork.v1"
	CapModel     = "model.v1"     // POST /api/conversations/{id}/model
	CapApprovals = "approvals.v1" // POST /api/conversations/{id}/approve
)

// Approvals is the optional part of a host that answers the tool calls waiting for the person's
// approval (permission mode ask; capability CapApprovals).
type Approvals interface {
	Approve(ctx context.Context, id, op, callID string, allow bool) error
}

// ErrUnsupported is what an Editor method answers when the client it wraps cannot make the call.
var ErrUnsupported = errors.New("not supported by this host")

// Outgoing is a message to send.
type Outgoing struct {
	Op    string
	Text  string
	Queue bool // deliver after the running exchange instead of as steering
}

// Transcript is what GET /api/conversations/{id}/transcript answers that the chat shows.
type Transcript struct {
	Survey fold.Survey
	Index  []fold.Row
}

// Event is one server-sent event of a conversation: a record (Seq > 0, with the folded State as
// of it) or live material (Live != nil), which is not recorded.
type Event struct {
	Seq     int64
	Kind    string
	Payload json.RawMessage
	State   *host.State
	Live    *Live
}

// Live is live, unrecorded material: streamed text and thinking, tool progress, status.
type Live struct {
	Kind   string `json:"kind"` // text, thinking, tool_call, tool_args, tool_start, tool_end, restart, status
	Text   string `json:"text,omitempty"`
	CallID string `json:"call_id,omitempty"`
	Name   string `json:"name,omitempty"`
}

// payloads constructs the payload of each record kind the chat shows.
var payloads = map[string]func() any{
	string(record.KindSessionStarted):   func() any { return new(record.SessionStarted) },
	string(record.KindSessionResumed):   func() any { return new(record.SessionResumed) },
	string(record.KindUserPrompt):       func() any { return new(record.UserPrompt) },
	string(record.KindSteering):         func() any { return new(record.Steering) },
	string(record.KindImport):           func() any { return new(record.Import) },
	string(record.KindAssistantMessage): func() any { return new(record.AssistantMessage) },
	string(record.KindToolResults):      func() any { return new(record.ToolResults) },
	string(record.KindEvicted):          func() any { return new(record.Evicted) },
	string(record.KindRewound):          func() any { return new(record.Rewound) },
	string(record.KindCleared):          func() any { return new(record.Cleared) },
	string(record.KindInherited):        func() any { return new(record.Inherited) },
	string(record.KindTurnStarted):      func() any { return new(record.TurnStarted) },
	string(record.KindUsage):            func() any { return new(record.UsageReported) },
	string(record.KindProviderError):    func() any { return new(record.ProviderError) },
	string(record.KindRetryScheduled):   func() any { return new(record.RetryScheduled) },
	string(record.KindToolStarted):      func() any { return new(record.ToolStarted) },
	string(record.KindToolFinished):     func() any { return new(record.ToolFinished) },
	string(record.KindCancelled):        func() any { return new(record.Cancelled) },
	string(record.KindQuiesced):         func() any { return new(record.Quiesced) },
	string(record.KindRepaired):         func() any { return new(record.Repaired) },
	string(record.KindNudge):            func() any { return new(record.Nudge) },
	string(record.KindHold):             func() any { return new(record.Hold) },
	string(record.KindReleased):         func() any { return new(record.Released) },
	string(record.KindModelChanged):     func() any { return new(record.ModelChanged) },
	string(record.KindPressure):         func() any { return new(record.Pressure) },
	string(record.KindFailure):          func() any { return new(record.Failure) },
	string(record.KindSubmission):       func() any { return new(record.Submission) },
	string(record.KindStop):             func() any { return new(record.Stop) },
	string(record.KindRenamed):          func() any { return new(record.Renamed) },
	string(record.KindClosed):           func() any { return new(record.Closed) },
	string(record.KindApproval):         func() any { return new(record.Approval) },
}

// decodePayload decodes a record event's payload into its record type, or nil for a kind the
// chat does not show (or a payload it cannot read: the chat shows what it understands and never
// fails on a newer host's record).
func decodePayload(kind string, data json.RawMessage) any {
	mk, ok := payloads[kind]
	if !ok {
		return nil
	}
	p := mk()
	if len(data) > 0 {
		if err := json.Unmarshal(data, p); err != nil {
			return nil
		}
	}
	return p
}
