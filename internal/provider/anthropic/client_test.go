package anthropic

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/providertest"
	"github.com/reinhq/rein/internal/record"
)

// serveFile answers every request with a testdata stream.
func serveFile(t *testing.T, name string) http.HandlerFunc {
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		w.Write(data)
	}
}

func TestClientSendsEncodeBytes(t *testing.T) {
	req := provider.Request{Model: "claude-test-1", System: "sys", Messages: []record.Message{user(text("hi"))}}
	want, err := Encode(req)
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	var header http.Header
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		header, path = r.Header.Clone(), r.URL.Path
		serveFile(t, "text.sse")(w, r)
	}))
	defer srv.Close()
	c := New(Config{BaseURL: srv.URL + "/", APIKey: "sk-test", Headers: http.Header{"Anthropic-Beta": {"x-2025"}}})
	reply, err := provider.Stream(t.Context(), c, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("sent body differs from Encode:\n got %s\nwant %s", got, want)
	}
	for k, v := range map[string]string{
		"X-Api-Key": "sk-test", "Anthropic-Version": "2023-06-01", "Content-Type": "application/json",
		"Accept": "text/event-stream", "Anthropic-Beta": "x-2025",
	} {
		if header.Get(k) != v {
			t.Errorf("header %s = %q, want %q", k, header.Get(k), v)
		}
	}
	if path != "/v1/messages" {
		t.Errorf("path %s", path)
	}
	if reply.ID != "msg_text" || len(reply.Parts) != 1 || reply.Parts[0].Text != "Hello, world." {
		t.Errorf("reply %+v", reply)
	}
}

func TestClientDefaults(t *testing.T) {
	c := New(Config{})
	if c.url != "https://api.anthropic.com/v1/messages" || c.version != Version || c.http != http.DefaultClient {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestClientHTTPError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("retry-after", "12")
		w.Header().Set("x-should-retry", "true")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"},"request_id":"req_1"}`)
	}))
	defer srv.Close()
	_, err := New(Config{BaseURL: srv.URL}).Send(t.Context(), []byte(body(hi)), nil)
	var e *provider.Error
	if !errors.As(err, &e) || e.Class != provider.RateLimited || e.Status != 429 || e.RetryAfter != 12*time.Second ||
		e.Type != "rate_limit_error" || e.ShouldRetry == nil || !*e.ShouldRetry {
		t.Fatalf("err = %#v", err)
	}
}

func TestClientCutStream(t *testing.T) {
	srv := httptest.NewServer(serveFile(t, "cut_tool.sse"))
	defer srv.Close()
	reply, err := New(Config{BaseURL: srv.URL}).Send(t.Context(), []byte(body(hi)), nil)
	var e *provider.Error
	if !errors.As(err, &e) || e.Class != provider.Network || !e.Partial {
		t.Fatalf("err = %#v, want a partial network error", err)
	}
	if len(reply.Incomplete) != 1 || reply.Parts[reply.Incomplete[0]].CallID != "toolu_cut" {
		t.Fatalf("reply %+v, want the cut call listed incomplete", reply)
	}
}

func TestClientConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := New(Config{BaseURL: url}).Send(t.Context(), []byte(body(hi)), nil)
	var e *provider.Error
	if !errors.As(err, &e) || e.Class != provider.Network || e.Partial {
		t.Fatalf("err = %#v, want network", err)
	}
}

func TestClientEncodeError(t *testing.T) {
	_, err := provider.Stream(t.Context(), New(Config{BaseURL: "http://127.0.0.1:1"}), provider.Request{Messages: []record.Message{user(record.Part{Type: "video"})}}, nil)
	var e *provider.Error
	if !errors.As(err, &e) || e.Class != provider.InvalidRequest {
		t.Fatalf("err = %#v, want invalid_request", err)
	}
}

// TestClientCancelMidStream stops a stream the server keeps open: Send must return at once with
// what was said.
func TestClientCancelMidStream(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_slow\",\"model\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n"+
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"+
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"So far\"}}\n\n")
		w.(http.Flusher).Flush()
		select { // a stalled stream
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	var stopped time.Time
	reply, err := New(Config{BaseURL: srv.URL}).Send(ctx, []byte(body(hi)), func(ev provider.Event) {
		if ev.Type == provider.TextDelta {
			stopped = time.Now()
			cancel()
		}
	})
	lat := time.Since(stopped)
	var e *provider.Error
	if !errors.As(err, &e) || e.Class != provider.Cancelled || !e.Partial {
		t.Fatalf("err = %#v, want partial cancelled", err)
	}
	if reply.StopReason != provider.StopCancelled || len(reply.Parts) != 1 || reply.Parts[0].Text != "So far" {
		t.Fatalf("reply %+v, want the partial text, stopped as cancelled", reply)
	}
	t.Logf("stream stopped %v after cancel", lat)
	if lat > time.Second { // at once (the stream would go on for as long as the test server holds it), with room for a loaded machine
		t.Fatalf("Send returned %v after cancel", lat)
	}
}

// TestClientRetriesThroughPolicy runs the real client under the retry policy: an overloaded
// answer, a stream cut after output began, then a good stream.
func TestClientRetriesThroughPolicy(t *testing.T) {
	cut, _ := os.ReadFile("testdata/cut_tool.sse")
	good, _ := os.ReadFile("testdata/tool_use.sse")
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		switch calls {
		case 1:
			w.WriteHeader(529)
			io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		case 2:
			w.Write(cut)
		default:
			w.Write(good)
		}
	}))
	defer srv.Close()
	var waits []provider.Wait
	restarts := 0
	p := provider.Policy{Rand: func() float64 { return 0 }}
	body, err := Encode(provider.Request{Messages: []record.Message{user(text("hi"))}})
	if err != nil {
		t.Fatal(err)
	}
	reply, err := p.Send(t.Context(), New(Config{BaseURL: srv.URL}), body,
		func(ev provider.Event) {
			if ev.Type == provider.Restart {
				restarts++
			}
		}, func(w provider.Wait) { waits = append(waits, w) })
	if err != nil || reply.ID != "msg_tools" || len(reply.Incomplete) != 0 {
		t.Fatalf("reply %+v, err %v", reply, err)
	}
	if len(waits) != 2 || waits[0].Err.Class != provider.Overloaded || waits[1].Err.Class != provider.Network || restarts != 1 {
		t.Fatalf("waits %+v restarts %d, want overloaded then network, one restart", waits, restarts)
	}
}

// TestClientLetsGoOfBody: once Send returns, the request's body can no longer be read — not by
// the reader the transport was given, nor by one it got again to retry — though a transport may
// go on reading a body after the response arrived (a server that answered before reading it
// all): the bytes are the caller's to write over (provider.BodyReleaser).
func TestClientLetsGoOfBody(t *testing.T) {
	stream, err := os.ReadFile("testdata/text.sse")
	if err != nil {
		t.Fatal(err)
	}
	rt := &providertest.KeptBodies{Stream: stream}
	var c provider.Model = New(Config{BaseURL: "http://rein.invalid", APIKey: "k", HTTPClient: &http.Client{Transport: rt}})
	if _, ok := c.(provider.BodyReleaser); !ok {
		t.Fatal("the client does not say it lets go of the body")
	}
	if _, err := c.Send(t.Context(), []byte("hello"), nil); err != nil {
		t.Fatal(err)
	}
	if err := rt.Readable(); err != nil {
		t.Errorf("after Send returned, %v", err)
	}
}
