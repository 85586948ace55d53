package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/host"
)

// ClientHost adapts internal/client to Host and Editor: the chat's one way to a host, in-process
// or remote alike.
//
// The context edits and fork (POST /api/conversations/{id}/evict, rewind, clear, fork) are not in
// internal/client yet; until they are, post calls them here, through the same base URL, token
// and HTTP client.
type ClientHost struct {
	c     *client.Client
	base  string
	token string
	hc    *http.Client
}

// NewClientHost returns the chat's view of the host at base, reached through c (which was made
// with the same base, token and HTTP client).
func NewClientHost(c *client.Client, base, token string, hc *http.Client) *ClientHost {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &ClientHost{c: c, base: strings.TrimSuffix(base, "/"), token: token, hc: hc}
}

// Capabilities implements Host.
func (h *ClientHost) Capabilities(ctx context.Context) ([]string, error) {
	caps, err := h.c.Capabilities(ctx)
	return caps.Capabilities, err
}

// List implements Host.
func (h *ClientHost) List(ctx context.Context) ([]host.View, error) { return h.c.List(ctx) }

// Create implements Host.
func (h *ClientHost) Create(ctx context.Context, op, title string) (host.View, error) {
	v, _, err := h.c.Create(ctx, op, title)
	return v, err
}

// Send implements Host.
func (h *ClientHost) Send(ctx context.Context, id string, m Outgoing) (host.SendResult, error) {
	return h.c.Send(ctx, id, client.Message{Op: m.Op, Text: m.Text, Queue: m.Queue})
}

// Stop implements Host.
func (h *ClientHost) Stop(ctx context.Context, id, op string) (host.StopResult, error) {
	return h.c.StopOp(ctx, id, op, 0)
}

// Transcript implements Host.
func (h *ClientHost) Transcript(ctx context.Context, id string) (Transcript, error) {
	raw, err := h.c.Transcript(ctx, id)
	if err != nil {
		return Transcript{}, err
	}
	var t struct {
		Survey fold.Survey `json:"survey"`
		Index  []fold.Row  `json:"index"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return Transcript{}, fmt.Errorf("read the transcript: %w", err)
	}
	return Transcript{Survey: t.Survey, Index: t.Index}, nil
}

// Events implements Host. The client reconnects on its own with Last-Event-ID; its stream ends
// only when ctx does or the host refuses the subscription.
func (h *ClientHost) Events(ctx context.Context, id string, after int64) (<-chan Event, error) {
	s := h.c.Events(ctx, id, after)
	out := make(chan Event, 64)
	go func() {
		defer close(out)
		for ev := range s.C {
			e := Event{Seq: ev.Seq, Kind: ev.Kind, Payload: ev.Payload}
			if ev.Live != nil {
				e.Live = &Live{Kind: ev.Live.Kind, Text: ev.Live.Text, CallID: ev.Live.CallID, Name: ev.Live.Name}
			} else {
				st := ev.State
				e.State = &st
			}
			select {
			case out <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// editAnswer is what the edit endpoints answer.
type editAnswer struct {
	Survey fold.Survey `json:"survey"`
}

// Evict implements Editor.
func (h *ClientHost) Evict(ctx context.Context, id, op string, from, to int64, note string) (fold.Survey, error) {
	var a editAnswer
	err := h.post(ctx, id, "evict", map[string]any{"op_id": op, "from": from, "to": to, "note": note}, &a)
	return a.Survey, err
}

// Rewind implements Editor.
func (h *ClientHost) Rewind(ctx context.Context, id, op string, turn int64) (fold.Survey, error) {
	var a editAnswer
	err := h.post(ctx, id, "rewind", map[string]any{"op_id": op, "turn": turn}, &a)
	return a.Survey, err
}

// Clear implements Editor.
func (h *ClientHost) Clear(ctx context.Context, id, op string) (fold.Survey, error) {
	var a editAnswer
	err := h.post(ctx, id, "clear", map[string]any{"op_id": op}, &a)
	return a.Survey, err
}

// Fork implements Editor.
func (h *ClientHost) Fork(ctx context.Context, id, op string, at int64) (host.View, error) {
	var a struct {
		Conversation host.View `json:"conversation"`
	}
	body := map[string]any{"op_id": op}
	if at != 0 {
		body["at"] = at
	}
	err := h.post(ctx, id, "fork", body, &a)
	return a.Conversation, err
}

// SetModel implements Editor (capability model.v1).
func (h *ClientHost) SetModel(ctx context.Context, id, op, model string) (host.View, error) {
	res, err := h.c.SetModel(ctx, id, op, model, "")
	return res.Conversation, err
}

// Approve implements Approvals (capability approvals.v1).
func (h *ClientHost) Approve(ctx context.Context, id, op, callID string, allow bool) error {
	_, err := h.c.Approve(ctx, id, op, callID, allow)
	return err
}

// post makes one of the edit calls the client does not have yet.
func (h *ClientHost) post(ctx context.Context, id, what string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.base+"/api/conversations/"+url.PathEscape(id)+"/"+what, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+h.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
			return &client.Error{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
		}
		return &client.Error{Status: resp.StatusCode, Code: fmt.Sprintf("http_%d", resp.StatusCode), Message: strings.TrimSpace(string(data))}
	}
	return json.Unmarshal(data, out)
}
