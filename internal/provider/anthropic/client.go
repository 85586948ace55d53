package anthropic

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/reinhq/rein/internal/provider"
)

// Version is the anthropic-version every request is sent with, pinned deliberately (see the
// package doc).
const Version = "2023-06-01"

// DefaultBaseURL is where the Messages API lives.
const DefaultBaseURL = "https://api.anthropic.com"

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 1 << 20

// Config is what a Client needs. Zero fields take the defaults.
type Config struct {
	BaseURL    string       // default DefaultBaseURL; the simulator's URL in tests
	APIKey     string       // sent as x-api-key
	HTTPClient *http.Client // default http.DefaultClient; give it no Timeout, streams are long
	Version    string       // default Version
	Headers    http.Header  // extra headers, e.g. anthropic-beta
}

// Client is the Messages API's provider.Model: it encodes (Encode), validates (Validate) and
// streams requests, one attempt per Send; retries are provider.Policy's.
type Client struct {
	url     string
	key     string
	http    *http.Client
	version string
	headers http.Header
	drain   provider.Drainer
}

var _ provider.Model = (*Client)(nil)

// New returns a client for cfg.
func New(cfg Config) *Client {
	c := &Client{
		url:     strings.TrimRight(cfg.BaseURL, "/") + "/v1/messages",
		key:     cfg.APIKey,
		http:    cfg.HTTPClient,
		version: cfg.Version,
		headers: cfg.Headers.Clone(),
	}
	if cfg.BaseURL == "" {
		c.url = DefaultBaseURL + "/v1/messages"
	}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	if c.version == "" {
		c.version = Version
	}
	return c
}

// ReleasesBody says that Send reads its body only until it returns (provider.BodyReleaser).
func (c *Client) ReleasesBody() {}

// Encode is the package's Encode: the exact bytes of req.
func (c *Client) Encode(req provider.Request) ([]byte, error) { return Encode(req) }

// Validate is the package's Validate: the first rule body breaks, or nil.
func (c *Client) Validate(body []byte) *provider.Violation { return Validate(body) }

// Send posts body, exactly these bytes, to /v1/messages and decodes the streamed reply, publishing
// live events to on (which may be nil). The caller may have validated and recorded body first.
//
// It returns the reply and nil when the stream ended with message_stop. Otherwise it returns what
// arrived and a *provider.Error: a non-2xx response classified by provider.Classify, an error
// event from the stream, a stream cut before message_stop (network), or a cancelled ctx, which
// ends the stream at once (cancelled, StopReason StopCancelled, the partial reply kept).
func (c *Client) Send(ctx context.Context, body []byte, on func(provider.Event)) (provider.Reply, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, nil)
	if err != nil {
		return provider.Reply{}, &provider.Error{Class: provider.InvalidRequest, Message: err.Error(), Err: err}
	}
	b := provider.NewBody(body) // read only until Send returns: the bytes are the caller's again
	b.Attach(hreq)
	defer b.Release(ctx)
	for k, vs := range c.headers {
		hreq.Header[k] = vs
	}
	if c.key != "" {
		hreq.Header.Set("x-api-key", c.key)
	}
	hreq.Header.Set("anthropic-version", c.version)
	hreq.Header.Set("content-type", "application/json")
	hreq.Header.Set("accept", "text/event-stream")
	c.drain.Wait(ctx) // the last reply's connection, back in the pool
	resp, err := c.http.Do(hreq)
	if err != nil {
		return provider.Reply{}, transportError(ctx, err)
	}
	handed := false // to the drainer, which closes it
	defer func() {
		if !handed {
			resp.Body.Close()
		}
	}()
	// However the transport treats ctx, a Stop closes the body so the read below ends at once.
	stop := context.AfterFunc(ctx, func() { resp.Body.Close() })
	defer stop()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if err != nil && ctx.Err() != nil {
			return provider.Reply{}, transportError(ctx, err)
		}
		return provider.Reply{}, provider.Classify(resp.StatusCode, resp.Header, data)
	}
	reply, err := decode(ctx, resp.Body, on)
	if err == nil {
		// The reply is whole at its last event: what is left of the body is read behind it, and
		// the connection kept for the next request.
		stop()
		handed = true
		c.drain.Behind(resp.Body)
	}
	return reply, err
}

// transportError classifies a failure to get a response: cancelled only when the caller's ctx
// ended, a network failure otherwise (even a client timeout that reports DeadlineExceeded).
func transportError(ctx context.Context, err error) *provider.Error {
	if ctx.Err() != nil {
		return provider.ClassifyTransport(ctx.Err(), false)
	}
	e := provider.ClassifyTransport(err, false)
	e.Class = provider.Network
	return e
}
