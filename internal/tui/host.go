package tui

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/record"
)

// Host is what the chat needs of a rein host: the part of the host API (docs/api.md) a terminal
// client uses, in the API's own types (package api). ClientHost adapts internal/client to it, for
// a host in-process or remote alike; tests use a fake.
type Host interface {
	Capabilities(ctx context.Context) ([]string, error)
	List(ctx context.Context) ([]api.View, error)
	Create(ctx context.Context, op, title string) (api.View, error)
	Send(ctx context.Context, id string, m api.Message) (api.SendResult, error)
	Stop(ctx context.Context, id, op string) (api.StopResult, error)
	// Transcript answers what GET /api/conversations/{id}/transcript does; the chat shows its
	// survey (the index may be left out).
	Transcript(ctx context.Context, id string) (api.Transcript, error)
	// Events streams the conversation's records after seq after, and live material, until ctx
	// ends. The channel closes when the stream ends; the chat then reconnects after the last seq
	// it applied, so nothing is missed.
	Events(ctx context.Context, id string, after int64) (<-chan api.Event, error)
}

// BackendCreator is the optional part of a host that creates a conversation on a named back-end
// (capability backends.v1: rein's own loop, Claude Code or Codex); /new <name> uses it.
type BackendCreator interface {
	CreateOn(ctx context.Context, op, title, backend string) (api.View, error)
}

// Editor is the optional part of a host: a person's context edits, forks and model changes. A
// host advertises each with a capability (api.CapEdits, CapFork, CapModel); the chat asks only a
// host that advertises it, and says "not supported by this host" otherwise.
type Editor interface {
	Evict(ctx context.Context, id, op string, from, to int64, note string) (api.Survey, error)
	Rewind(ctx context.Context, id, op string, turn int64) (api.Survey, error)
	Clear(ctx context.Context, id, op string) (api.Survey, error)
	Fork(ctx context.Context, id, op string, at int64) (api.View, error)
	SetModel(ctx context.Context, id, op, model string) (api.View, error)
}

// Approvals is the optional part of a host that answers the tool calls waiting for the person's
// approval (permission mode ask; capability api.CapApprovals).
type Approvals interface {
	Approve(ctx context.Context, id, op, callID string, allow bool) error
}

// ErrUnsupported is what an Editor method answers when the client it wraps cannot make the call.
var ErrUnsupported = errors.New("not supported by this host")

// decodePayload decodes a record event's payload into its record type (record.New), or nil for a
// kind this build does not know (or a payload it cannot read: the chat shows what it understands
// and never fails on a newer host's record).
func decodePayload(kind string, data json.RawMessage) any {
	p, ok := record.New(record.Kind(kind))
	if !ok {
		return nil
	}
	if len(data) > 0 {
		if err := json.Unmarshal(data, p); err != nil {
			return nil
		}
	}
	return p
}
