// Package client is the Go client of rein's host API (docs/api.md): conversations, sends, Stop,
// approvals, model switches, context edits, forks and the events stream, for tests and the
// terminal UI. It speaks only HTTP to the host, in the wire types of package api, so it links
// neither the host nor anything behind it; a client computes Working with the host's own function
// (api.Working) from its own copy of the state.
//
// Every mutating call carries an operation id. Send takes one from the caller, who keeps it to
// retry the same message after a lost answer (NewOp mints one); Stop mints a new one for every
// press, since each press is its own operation (DESIGN §12.3), and StopOp retries a press.
//
// A refusal is returned as an *api.Error with the status it came with; Code reads its code.
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/api"
)

// Client talks to one host.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// New returns a client of the host at base (e.g. "http://127.0.0.1:8080") with its bearer token.
// hc may be nil for http.DefaultClient; it must not set a timeout that would cut an events stream.
func New(base, token string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: strings.TrimSuffix(base, "/"), token: token, http: hc}
}

// Code returns the API error code of err ("not_found", "op_conflict", ...), or "".
func Code(err error) api.Code { return api.CodeOf(err) }

// NewOp mints an operation id.
func NewOp() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "op-" + hex.EncodeToString(b[:])
}

// Capabilities asks what the host accepts.
func (c *Client) Capabilities(ctx context.Context) (api.Capabilities, error) {
	var out api.Capabilities
	err := c.do(ctx, http.MethodGet, "/api/capabilities", nil, &out)
	return out, err
}

// List returns every conversation, most recently updated first.
func (c *Client) List(ctx context.Context) ([]api.View, error) {
	var out api.Conversations
	err := c.do(ctx, http.MethodGet, "/api/conversations", nil, &out)
	return out.Conversations, err
}

// Create makes a conversation under operation op; replayed reports that op had already made it.
func (c *Client) Create(ctx context.Context, op, title string) (v api.View, replayed bool, err error) {
	var out api.Created
	err = c.do(ctx, http.MethodPost, "/api/conversations", api.CreateRequest{Op: op, Title: title}, &out)
	return out.Conversation, out.Replayed, err
}

// CreateOn creates a conversation whose turns run in backend (capability backends.v1; "" is the
// host's default).
func (c *Client) CreateOn(ctx context.Context, op, title, backend string) (v api.View, replayed bool, err error) {
	var out api.Created
	err = c.do(ctx, http.MethodPost, "/api/conversations", api.CreateRequest{Op: op, Title: title, Backend: backend}, &out)
	return out.Conversation, out.Replayed, err
}

// Get returns one conversation.
func (c *Client) Get(ctx context.Context, id string) (api.View, error) {
	var out api.View
	err := c.do(ctx, http.MethodGet, convPath(id, ""), nil, &out)
	return out, err
}

// Rename gives a conversation a new title.
func (c *Client) Rename(ctx context.Context, id, op, title string) (api.View, error) {
	var out api.View
	err := c.do(ctx, http.MethodPatch, convPath(id, ""), api.RenameRequest{Op: op, Title: title}, &out)
	return out, err
}

// Close stops a conversation's work and closes it.
func (c *Client) Close(ctx context.Context, id, op string) (api.View, error) {
	var out api.View
	err := c.do(ctx, http.MethodDelete, convPath(id, "")+"?op_id="+url.QueryEscape(op), nil, &out)
	return out, err
}

// Send sends a message; the answer comes as soon as the host has it durably. Keep m.Op to retry
// the same message.
func (c *Client) Send(ctx context.Context, id string, m api.Message) (api.SendResult, error) {
	var out api.SendResult
	err := c.do(ctx, http.MethodPost, convPath(id, "/messages"), m, &out)
	return out, err
}

// Stop presses Stop: it stops whatever the conversation has in flight, under a new operation id.
// turn, when non-zero, is a precondition: stop only if that turn is still in hand.
func (c *Client) Stop(ctx context.Context, id string, turn int64) (api.StopResult, error) {
	return c.StopOp(ctx, id, NewOp(), turn)
}

// StopOp sends a Stop under a given operation id: to retry a press whose answer was lost.
func (c *Client) StopOp(ctx context.Context, id, op string, turn int64) (api.StopResult, error) {
	var out api.StopResult
	err := c.do(ctx, http.MethodPost, convPath(id, "/stop"), api.StopRequest{Op: op, Turn: turn}, &out)
	return out, err
}

// Approve answers a tool call waiting for the person's approval (capability approvals.v1): allow
// runs it, else it is refused. Keep op to retry the same answer; a call no one waits on any more
// is refused not_found.
func (c *Client) Approve(ctx context.Context, id, op, callID string, allow bool) (api.ApproveResult, error) {
	var out api.ApproveResult
	err := c.do(ctx, http.MethodPost, convPath(id, "/approve"), api.ApproveRequest{Op: op, CallID: callID, Allow: &allow}, &out)
	return out, err
}

// ApproveScoped is Approve with the answer's scope (capability approval-scope.v1): "once", or
// "conversation" to allow the call and grant the rules it was asked with for the rest of the
// conversation.
func (c *Client) ApproveScoped(ctx context.Context, id, op, callID string, allow bool, scope string) (api.ApproveResult, error) {
	var out api.ApproveResult
	err := c.do(ctx, http.MethodPost, convPath(id, "/approve"), api.ApproveRequest{Op: op, CallID: callID, Allow: &allow, Scope: scope}, &out)
	return out, err
}

// SetModel switches a conversation to model, and provider when not empty (capability model.v1),
// from its next exchange. It is refused busy while the conversation works.
func (c *Client) SetModel(ctx context.Context, id, op, model, provider string) (api.ModelResult, error) {
	var out api.ModelResult
	err := c.do(ctx, http.MethodPost, convPath(id, "/model"), api.ModelRequest{Op: op, Model: model, Provider: provider}, &out)
	return out, err
}

// Evict takes turns [from, to] out of the context, leaving note in their place (capability
// context-edits.v1). It is refused busy while the conversation works.
func (c *Client) Evict(ctx context.Context, id, op string, from, to int64, note string) (api.EditResult, error) {
	var out api.EditResult
	err := c.do(ctx, http.MethodPost, convPath(id, "/evict"), api.EvictRequest{Op: op, From: from, To: to, Note: note}, &out)
	return out, err
}

// Rewind withdraws every turn from turn on (capability context-edits.v1).
func (c *Client) Rewind(ctx context.Context, id, op string, turn int64) (api.EditResult, error) {
	var out api.EditResult
	err := c.do(ctx, http.MethodPost, convPath(id, "/rewind"), api.RewindRequest{Op: op, Turn: turn}, &out)
	return out, err
}

// Clear withdraws every turn (capability context-edits.v1).
func (c *Client) Clear(ctx context.Context, id, op string) (api.EditResult, error) {
	var out api.EditResult
	err := c.do(ctx, http.MethodPost, convPath(id, "/clear"), api.ClearRequest{Op: op}, &out)
	return out, err
}

// Fork makes a new conversation inheriting this one's context up to turn at, 0 for all of it
// (capability fork.v1); replayed reports that op had already made it.
func (c *Client) Fork(ctx context.Context, id, op string, at int64) (v api.View, replayed bool, err error) {
	var out api.Created
	err = c.do(ctx, http.MethodPost, convPath(id, "/fork"), api.ForkRequest{Op: op, At: at}, &out)
	return out.Conversation, out.Replayed, err
}

// Transcript returns the context as it would be sent, the survey, the turn index and the residues.
func (c *Client) Transcript(ctx context.Context, id string) (api.Transcript, error) {
	return c.TranscriptPage(ctx, id, api.IndexPage{})
}

// TranscriptPage is Transcript with as much of the index as page says: a page of it from a turn,
// or none (capability transcript-pages.v1; a host without it answers the whole index).
func (c *Client) TranscriptPage(ctx context.Context, id string, page api.IndexPage) (api.Transcript, error) {
	q := url.Values{}
	switch {
	case page.None:
		q.Set("index", "none")
	case page.Paged:
		q.Set("index_from", strconv.FormatInt(page.From, 10))
	}
	path := convPath(id, "/transcript")
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out api.Transcript
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

func convPath(id, rest string) string { return "/api/conversations/" + url.PathEscape(id) + rest }

// do sends one request and decodes a 2xx answer into out, or returns the host's *Error.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := c.request(ctx, method, path, body)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return readError(resp)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	return nil
}

func (c *Client) request(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// readError turns a non-2xx answer into an *api.Error with its status. A body that is not the
// API's error (a proxy's page) gets the code "http_<status>".
func readError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var body api.ErrorBody
	if json.Unmarshal(b, &body) != nil || body.Error == nil || body.Error.Code == "" {
		return &api.Error{Status: resp.StatusCode, Code: api.Code(fmt.Sprintf("http_%d", resp.StatusCode)), Message: strings.TrimSpace(string(b))}
	}
	body.Error.Status = resp.StatusCode
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
		body.Error.RetryAfter = time.Duration(secs) * time.Second
	}
	return body.Error
}

// Release releases a conversation parked on a held tool call (capability release.v1): the hooks
// and the person are asked again, and the call runs or is refused then. Released is false when the
// conversation was not held.
func (c *Client) Release(ctx context.Context, id, op string) (api.ReleaseResult, error) {
	var out api.ReleaseResult
	err := c.do(ctx, http.MethodPost, convPath(id, "/release"), api.ReleaseRequest{Op: op}, &out)
	return out, err
}
