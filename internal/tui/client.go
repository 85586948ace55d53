package tui

import (
	"context"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
)

// ClientHost adapts internal/client to Host, Editor and Approvals: the chat's one way to a host,
// in-process or remote alike.
type ClientHost struct {
	c *client.Client
	// Backend is the back-end the conversations it creates run in ("": the host's default).
	Backend string
}

// NewClientHost returns the chat's view of the host c talks to.
func NewClientHost(c *client.Client) *ClientHost { return &ClientHost{c: c} }

// OnBackend makes the conversations h creates run in backend (capability backends.v1: "" is the
// host's default), and returns h.
func (h *ClientHost) OnBackend(backend string) *ClientHost {
	h.Backend = backend
	return h
}

// Capabilities implements Host.
func (h *ClientHost) Capabilities(ctx context.Context) ([]string, error) {
	caps, err := h.c.Capabilities(ctx)
	return caps.Capabilities, err
}

// List implements Host.
func (h *ClientHost) List(ctx context.Context) ([]api.View, error) { return h.c.List(ctx) }

// Create implements Host.
func (h *ClientHost) Create(ctx context.Context, op, title string) (api.View, error) {
	v, _, err := h.c.CreateOn(ctx, op, title, h.Backend)
	return v, err
}

// CreateOn implements BackendCreator.
func (h *ClientHost) CreateOn(ctx context.Context, op, title, backend string) (api.View, error) {
	v, _, err := h.c.CreateOn(ctx, op, title, backend)
	return v, err
}

// Send implements Host.
func (h *ClientHost) Send(ctx context.Context, id string, m api.Message) (api.SendResult, error) {
	return h.c.Send(ctx, id, m)
}

// Stop implements Host.
func (h *ClientHost) Stop(ctx context.Context, id, op string) (api.StopResult, error) {
	return h.c.StopOp(ctx, id, op, 0)
}

// Transcript implements Host.
func (h *ClientHost) Transcript(ctx context.Context, id string) (api.Transcript, error) {
	// The chat shows the survey, never the index: a long conversation's index is not built.
	return h.c.TranscriptPage(ctx, id, api.IndexPage{None: true})
}

// Events implements Host. The client reconnects on its own with Last-Event-ID; its stream ends
// only when ctx does or the host refuses the subscription.
func (h *ClientHost) Events(ctx context.Context, id string, after int64) (<-chan api.Event, error) {
	return h.c.Events(ctx, id, after).C, nil
}

// Evict implements Editor.
func (h *ClientHost) Evict(ctx context.Context, id, op string, from, to int64, note string) (api.Survey, error) {
	res, err := h.c.Evict(ctx, id, op, from, to, note)
	return res.Survey, err
}

// Rewind implements Editor.
func (h *ClientHost) Rewind(ctx context.Context, id, op string, turn int64) (api.Survey, error) {
	res, err := h.c.Rewind(ctx, id, op, turn)
	return res.Survey, err
}

// Clear implements Editor.
func (h *ClientHost) Clear(ctx context.Context, id, op string) (api.Survey, error) {
	res, err := h.c.Clear(ctx, id, op)
	return res.Survey, err
}

// Fork implements Editor.
func (h *ClientHost) Fork(ctx context.Context, id, op string, at int64) (api.View, error) {
	v, _, err := h.c.Fork(ctx, id, op, at)
	return v, err
}

// SetModel implements Editor (capability model.v1).
func (h *ClientHost) SetModel(ctx context.Context, id, op, model string) (api.View, error) {
	res, err := h.c.SetModel(ctx, id, op, model, "")
	return res.Conversation, err
}

// ApproveScoped implements ScopedApprovals (capability approval-scope.v1).
func (h *ClientHost) ApproveScoped(ctx context.Context, id, op, callID string, allow bool, scope string) error {
	_, err := h.c.ApproveScoped(ctx, id, op, callID, allow, scope)
	return err
}

// Approve implements Approvals (capability approvals.v1).
func (h *ClientHost) Approve(ctx context.Context, id, op, callID string, allow bool) error {
	_, err := h.c.Approve(ctx, id, op, callID, allow)
	return err
}
