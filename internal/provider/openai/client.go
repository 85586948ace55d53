package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/reinhq/rein/internal/provider"
)

// DefaultBaseURL is OpenAI's API root. Any OpenAI-compatible server is reached by its own base URL.
const DefaultBaseURL = "https://api.openai.com/v1"

// OpenRouterBaseURL is OpenRouter's OpenAI-compatible API root.
const OpenRouterBaseURL = "https://openrouter.ai/api/v1"

// maxErrorBody bounds how much of a non-2xx response body is read for classification.
const maxErrorBody = 1 << 20

// Config is how a client reaches its server. The zero value talks to OpenAI with no key.
type Config struct {
	// BaseURL is the API root, e.g. "http://localhost:11434/v1" for Ollama. Empty means
	// DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token. Local servers (Ollama, vLLM, llama.cpp) need none: when
	// it is empty no Authorization header is sent.
	APIKey string
	// HTTPClient sends the requests; nil means a client with no overall timeout (a stream may
	// rightly last minutes; cancellation comes from the context).
	HTTPClient *http.Client
	// Headers are added to every request, e.g. OpenRouterHeaders().
	Headers http.Header
	// Compat adapts Chat Completions requests to older OpenAI-compatible servers.
	Compat Compat
}

// Compat lists the departures from OpenAI's current Chat Completions request shape that some
// OpenAI-compatible servers need. The zero value is OpenAI's shape.
type Compat struct {
	// MaxTokens sends the output limit as max_tokens (deprecated by OpenAI, and refused by its
	// reasoning models) instead of max_completion_tokens, which older servers do not know.
	MaxTokens bool
	// Reasoning sends reasoning settings as OpenRouter's reasoning object ({"effort": ...} or
	// {"max_tokens": budget}) instead of OpenAI's reasoning_effort.
	Reasoning bool
}

// OpenRouterHeaders returns the attribution headers OpenRouter reads to name the calling app
// (HTTP-Referer and X-Title), naming rein. Put them in Config.Headers.
func OpenRouterHeaders() http.Header {
	return http.Header{
		"Http-Referer": {"https://github.com/reinhq/rein"},
		"X-Title":      {"rein"},
	}
}

// client is what the Chat and Responses clients share: one endpoint, its headers, and the
// stream driver.
type client struct {
	endpoint string
	apiKey   string
	headers  http.Header
	http     *http.Client
	drain    *provider.Drainer // shared by the client's copies
}

func newClient(cfg Config, path string) client {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return client{
		endpoint: strings.TrimRight(base, "/") + path,
		apiKey:   cfg.APIKey,
		headers:  cfg.Headers.Clone(),
		http:     hc,
		drain:    &provider.Drainer{},
	}
}

// send posts body and decodes the streamed answer with d. It returns what arrived and nil, or
// what arrived and a *provider.Error. A cancelled ctx ends it at once: the response body is
// closed from outside so that a blocked read returns.
func (c client) send(ctx context.Context, body []byte, d streamDecoder) (provider.Reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, nil)
	if err != nil {
		return provider.Reply{}, &provider.Error{Class: provider.InvalidRequest,
			Message: fmt.Sprintf("build request: %v", err), Err: err}
	}
	b := provider.NewBody(body) // read only until send returns: the bytes are the caller's again
	b.Attach(req)
	defer b.Release(ctx)
	for k, vs := range c.headers {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	c.drain.Wait(ctx) // the last reply's connection, back in the pool
	resp, err := c.http.Do(req)
	if err != nil {
		return provider.Reply{}, transport(ctx, err, false) // the error names the method and the URL
	}
	handed := false // to the drainer, which closes it
	defer func() {
		if !handed {
			resp.Body.Close()
		}
	}()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return provider.Reply{}, provider.Classify(resp.StatusCode, resp.Header, b)
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		// Not a stream: some servers answer a failure that way even with status 200.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return provider.Reply{}, jsonAnswer(b)
	}
	stop := context.AfterFunc(ctx, func() { resp.Body.Close() })
	defer stop()
	reply, err := finish(ctx, d, readStream(ctx, resp.Body, d))
	if err == nil {
		// The reply is whole at its last event: what is left of the body is read behind it, and
		// the connection kept for the next request.
		stop()
		handed = true
		c.drain.Behind(resp.Body)
	}
	return reply, err
}

// jsonAnswer classifies a JSON body that came where a stream was expected: the error it holds,
// nested or flat, or else a network failure (the server did not stream).
func jsonAnswer(b []byte) *provider.Error {
	var body struct {
		Error json.RawMessage `json:"error"`
		wireError
	}
	if json.Unmarshal(b, &body) == nil {
		if kind(body.Error) == "object" {
			var w wireError
			if json.Unmarshal(body.Error, &w) == nil {
				return w.classify()
			}
		}
		if body.Message != "" {
			return body.wireError.classify()
		}
	}
	return provider.ClassifyTransport(fmt.Errorf("expected an event stream, got a JSON body: %s", brief(string(b))), false)
}

// streamDecoder turns one API's stream events into a Reply.
type streamDecoder interface {
	// event consumes one SSE event (its event name, possibly empty, and its data). It returns
	// last when the stream has said its final word, and a *provider.Error for an error the
	// stream reported.
	event(name string, data []byte) (last bool, err error)
	// eof is called when the stream closes before its final word. It settles the reply and
	// reports whether the stream had nonetheless reached a proper end (a Chat finish_reason
	// with no [DONE] after it).
	eof() bool
	// assembled is the reply being built.
	assembled() *assembly
}

// errCut is a stream that ended before it said it was finished.
var errCut = fmt.Errorf("stream ended before its finish: %w", io.ErrUnexpectedEOF)

// readStream feeds every event of r to d until the stream's final word. It returns nil, a
// *provider.Error from the stream, or a transport error (errCut for an early end). Once ctx ends,
// no further event is read, even one already buffered.
func readStream(ctx context.Context, r io.Reader, d streamDecoder) error {
	sse := provider.NewSSEReader(r)
	defer sse.Close()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ev, err := sse.Next()
		if err != nil {
			if err == io.EOF {
				if d.eof() {
					return nil
				}
				return errCut
			}
			if err == io.ErrUnexpectedEOF {
				return errCut
			}
			return fmt.Errorf("read stream: %w", err)
		}
		last, err := d.event(ev.Event, ev.Data)
		if err != nil || last {
			return err
		}
	}
}

// finish settles the reply after readStream returned err: a cancelled ctx wins over whatever
// the read saw, then an error the stream reported, then a transport failure.
func finish(ctx context.Context, d streamDecoder, err error) (provider.Reply, error) {
	a := d.assembled()
	a.seal()
	if err == nil {
		if a.reply.StopReason == provider.StopMaxTokens {
			a.cutCalls()
		}
		return a.reply, nil
	}
	a.cutCalls()
	if ctx.Err() != nil {
		a.reply.StopReason = provider.StopCancelled
		return a.reply, transport(ctx, err, a.began)
	}
	a.reply.StopReason = ""
	var pe *provider.Error
	if errors.As(err, &pe) {
		pe.Partial = a.began
		return a.reply, pe
	}
	return a.reply, transport(ctx, err, a.began)
}

// transport classifies a failure below HTTP. Only the caller's ctx makes it Cancelled: a deadline
// of the HTTP client's own (http.Client.Timeout) is a network failure, so its chain is cut.
func transport(ctx context.Context, err error, partial bool) *provider.Error {
	if cerr := ctx.Err(); cerr != nil {
		return provider.ClassifyTransport(fmt.Errorf("%w (%v)", cerr, err), partial)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		err = errors.New(err.Error())
	}
	return provider.ClassifyTransport(err, partial)
}
