// Package client is the Go client of rein's host API (docs/api.md): conversations, sends, Stop and
// the events stream, for tests and the terminal UI. It speaks only HTTP to the host and uses the
// host's wire types, so a client computes Working with the host's own function (host.Working).
//
// Every mutating call carries an operation id. Send takes one from the caller, who keeps it to
// retry the same message after a lost answer (NewOp mints one); Stop mints a new one for every
// press, since each press is its own operation (DESIGN §12.3), and StopOp retries a press.
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/record"
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

// Error is a refusal from the host: its HTTP status and the API's code and message.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%d): %s", e.Code, e.Status, e.Message) }

// Code returns the API error code of err ("not_found", "op_conflict", ...), or "".
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// NewOp mints an operation id.
func NewOp() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "op-" + hex.EncodeToString(b[:])
}

// Capabilities is what a host advertises.
type Capabilities struct {
	Version      string   `json:"version"`
	Capabilities []string `json:"capabilities"`
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

// Capabilities asks what the host accepts.
func (c *Client) Capabilities(ctx context.Context) (Capabilities, error) {
	var out Capabilities
	err := c.do(ctx, http.MethodGet, "/api/capabilities", nil, &out)
	return out, err
}

// List returns every conversation, most recently updated first.
func (c *Client) List(ctx context.Context) ([]host.View, error) {
	var out struct {
		Conversations []host.View `json:"conversations"`
	}
	err := c.do(ctx, http.MethodGet, "/api/conversations", nil, &out)
	return out.Conversations, err
}

// Create makes a conversation under operation op; replayed reports that op had already made it.
func (c *Client) Create(ctx context.Context, op, title string) (v host.View, replayed bool, err error) {
	var out struct {
		Conversation host.View `json:"conversation"`
		Replayed     bool      `json:"replayed"`
	}
	err = c.do(ctx, http.MethodPost, "/api/conversations", map[string]any{"op_id": op, "title": title}, &out)
	return out.Conversation, out.Replayed, err
}

// Get returns one conversation.
func (c *Client) Get(ctx context.Context, id string) (host.View, error) {
	var out host.View
	err := c.do(ctx, http.MethodGet, convPath(id, ""), nil, &out)
	return out, err
}

// Rename gives a conversation a new title.
func (c *Client) Rename(ctx context.Context, id, op, title string) (host.View, error) {
	var out host.View
	err := c.do(ctx, http.MethodPatch, convPath(id, ""), map[string]any{"op_id": op, "title": title}, &out)
	return out, err
}

// Close stops a conversation's work and closes it.
func (c *Client) Close(ctx context.Context, id, op string) (host.View, error) {
	var out host.View
	err := c.do(ctx, http.MethodDelete, convPath(id, "")+"?op_id="+url.QueryEscape(op), nil, &out)
	return out, err
}

// Message is what Send sends. Op is its operation id: keep it to retry the same message.
type Message struct {
	Op          string              `json:"op_id"`
	Text        string              `json:"text,omitempty"`
	Attachments []record.Attachment `json:"attachments,omitempty"`
	// Queue delivers it after the running exchange ends instead of as steering (capability
	// queue.v1).
	Queue bool `json:"queue,omitempty"`
}

// Send sends a message; the answer comes as soon as the host has it durably.
func (c *Client) Send(ctx context.Context, id string, m Message) (host.SendResult, error) {
	var out host.SendResult
	err := c.do(ctx, http.MethodPost, convPath(id, "/messages"), m, &out)
	return out, err
}

// Stop presses Stop: it stops whatever the conversation has in flight, under a new operation id.
// turn, when non-zero, is a precondition: stop only if that turn is still in hand.
func (c *Client) Stop(ctx context.Context, id string, turn int64) (host.StopResult, error) {
	return c.StopOp(ctx, id, NewOp(), turn)
}

// StopOp sends a Stop under a given operation id: to retry a press whose answer was lost.
func (c *Client) StopOp(ctx context.Context, id, op string, turn int64) (host.StopResult, error) {
	body := map[string]any{"op_id": op}
	if turn != 0 {
		body["turn"] = turn
	}
	var out host.StopResult
	err := c.do(ctx, http.MethodPost, convPath(id, "/stop"), body, &out)
	return out, err
}

// Approve answers a tool call waiting for the person's approval (capability approvals.v1): allow
// runs it, else it is refused. Keep op to retry the same answer; a call no one waits on any more
// is refused not_found.
func (c *Client) Approve(ctx context.Context, id, op, callID string, allow bool) (host.ApproveResult, error) {
	var out host.ApproveResult
	err := c.do(ctx, http.MethodPost, convPath(id, "/approve"), map[string]any{"op_id": op, "call_id": callID, "allow": allow}, &out)
	return out, err
}

// SetModel switches a conversation to model, and provider when not empty (capability model.v1),
// from its next exchange. It is refused busy while the conversation works.
func (c *Client) SetModel(ctx context.Context, id, op, model, provider string) (host.ModelResult, error) {
	body := map[string]any{"op_id": op, "model": model}
	if provider != "" {
		body["provider"] = provider
	}
	var out host.ModelResult
	err := c.do(ctx, http.MethodPost, convPath(id, "/model"), body, &out)
	return out, err
}

// Transcript returns the context as it would be sent, the survey, the turn index and the residues,
// as the host encodes them.
func (c *Client) Transcript(ctx context.Context, id string) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.do(ctx, http.MethodGet, convPath(id, "/transcript"), nil, &out)
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

// readError turns a non-2xx answer into an *Error.
func readError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) != nil || e.Error.Code == "" {
		return &Error{Status: resp.StatusCode, Code: "http_" + fmt.Sprint(resp.StatusCode), Message: strings.TrimSpace(string(b))}
	}
	return &Error{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
}
