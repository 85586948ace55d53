package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/providertest"
	"github.com/reinhq/rein/internal/record"
)

// serveFile answers every request with a testdata stream, after handing the request to check.
func serveFile(t *testing.T, file string, check func(r *http.Request, body []byte)) *httptest.Server {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		check(r, body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestChatSendsExactBytesAndHeaders(t *testing.T) {
	req := provider.Request{Model: "gpt-4.1", Messages: []record.Message{{Role: record.User, Parts: []record.Part{text("hi")}}}}
	want, _ := EncodeChat(req)
	srv := serveFile(t, "chat/text.sse", func(r *http.Request, body []byte) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			t.Errorf("request %s %s, want POST /v1/chat/completions", r.Method, r.URL.Path)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("Authorization = %q", got)
		}
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Accept") != "text/event-stream" {
			t.Errorf("content headers = %v", r.Header)
		}
		if r.Header.Get("HTTP-Referer") == "" || r.Header.Get("X-Title") != "rein" {
			t.Errorf("OpenRouter headers missing: %v", r.Header)
		}
		if string(body) != string(want) {
			t.Errorf("body =\n%s\nwant\n%s", body, want)
		}
	})
	m := NewChat(Config{BaseURL: srv.URL + "/v1/", APIKey: "sk-test", Headers: OpenRouterHeaders()})
	reply, err := provider.Stream(context.Background(), m, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.Parts) != 1 || reply.Parts[0].Text != "Hello, world! é😀" || reply.StopReason != provider.StopEnd {
		t.Errorf("reply = %+v", reply)
	}
}

func TestNoKeyNoAuthorization(t *testing.T) {
	srv := serveFile(t, "responses/text.sse", func(r *http.Request, body []byte) {
		if r.URL.Path != "/responses" {
			t.Errorf("path = %s, want /responses", r.URL.Path)
		}
		if _, ok := r.Header["Authorization"]; ok {
			t.Error("an Authorization header was sent with no key")
		}
		if string(body) != `{"exact":"bytes"}` {
			t.Errorf("Send changed the body: %s", body)
		}
	})
	reply, err := NewResponses(Config{BaseURL: srv.URL}).Send(context.Background(), []byte(`{"exact":"bytes"}`), nil)
	if err != nil || reply.Parts[0].Text != "Hello, world." {
		t.Fatalf("reply = %+v, err = %v", reply, err)
	}
}

func TestHTTPErrorIsClassified(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
	}))
	defer srv.Close()
	_, err := NewChat(Config{BaseURL: srv.URL}).Send(context.Background(), []byte(`{}`), nil)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Class != provider.RateLimited || pe.Status != 429 || pe.Partial {
		t.Fatalf("err = %#v, want rate_limited 429", err)
	}
}

// TestJSONInsteadOfStream: a server that answers 200 with a JSON error body has its error read.
func TestJSONInsteadOfStream(t *testing.T) {
	for body, want := range map[string]provider.Class{
		`{"error":{"code":429,"message":"slow down"}}`:                           provider.RateLimited,
		`{"object":"error","message":"bad","type":"BadRequestError","code":400}`: provider.InvalidRequest,
		`{"id":"chatcmpl-1","choices":[]}`:                                       provider.Network,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, body)
		}))
		_, err := NewChat(Config{BaseURL: srv.URL}).Send(context.Background(), []byte(`{}`), nil)
		srv.Close()
		var pe *provider.Error
		if !errors.As(err, &pe) || pe.Class != want {
			t.Errorf("%s: err = %v, want class %s", body, err, want)
		}
	}
}

func TestTransportErrorIsNetwork(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := NewChat(Config{BaseURL: url}).Send(context.Background(), []byte(`{}`), nil)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Class != provider.Network || pe.Partial {
		t.Fatalf("err = %#v, want network, not partial", err)
	}
}

// TestCancelReturnsPartialAtOnce cancels while the server holds the stream open. The handler
// never ends on its own, so the test finishes only if the client returns by itself.
func TestCancelReturnsPartialAtOnce(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"Hel"}}]}`+"\n\n")
		io.WriteString(w, `data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"ls","arguments":"{\"d"}}]}}]}`+"\n\n")
		io.WriteString(w, `data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"buffered, never published"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		<-release
	}))
	defer srv.Close()
	defer close(release)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelled := false
	on := func(e provider.Event) {
		if cancelled {
			t.Errorf("event %+v published after the cancel", e)
		}
		if e.Type == provider.ToolArgsDelta {
			cancel()
			cancelled = true
		}
	}
	reply, err := NewChat(Config{BaseURL: srv.URL}).Send(ctx, []byte(`{}`), on)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Class != provider.Cancelled || !pe.Partial {
		t.Fatalf("err = %#v, want cancelled, partial", err)
	}
	if reply.StopReason != provider.StopCancelled || len(reply.Parts) != 2 || reply.Parts[0].Text != "Hel" {
		t.Errorf("reply = %+v, want the text so far and a cancelled stop", reply)
	}
	if len(reply.Incomplete) != 1 || reply.Incomplete[0] != 1 {
		t.Errorf("Incomplete = %v, want [1]: the call's arguments were cut", reply.Incomplete)
	}
}

// TestClientTimeoutIsNetwork: the HTTP client's own deadline is not the caller's Stop.
func TestClientTimeoutIsNetwork(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"Hel"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		<-release
	}))
	defer srv.Close()
	defer close(release)
	// Long enough for the answer's headers and first chunk on a loaded machine (at 50 ms a loaded
	// CI run timed out before the headers): the timeout is to strike mid-stream.
	hc := &http.Client{Timeout: time.Second}
	reply, err := NewChat(Config{BaseURL: srv.URL, HTTPClient: hc}).Send(context.Background(), []byte(`{}`), nil)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Class != provider.Network || !pe.Partial {
		t.Fatalf("err = %#v, want network, partial", err)
	}
	if reply.StopReason != "" || reply.Parts[0].Text != "Hel" {
		t.Errorf("reply = %+v", reply)
	}
}

func TestCancelBeforeSending(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewResponses(Config{BaseURL: "http://127.0.0.1:1"}).Send(ctx, []byte(`{}`), nil)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Class != provider.Cancelled || pe.Partial {
		t.Fatalf("err = %#v, want cancelled, not partial", err)
	}
}

// TestClientsLetGoOfBody: once Send returns, the request's body can no longer be read (see the
// anthropic package's TestClientLetsGoOfBody).
func TestClientsLetGoOfBody(t *testing.T) {
	for _, tc := range []struct {
		file string
		new  func(Config) provider.Model
	}{
		{"chat/text.sse", func(c Config) provider.Model { return NewChat(c) }},
		{"responses/text.sse", func(c Config) provider.Model { return NewResponses(c) }},
	} {
		stream, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		rt := &providertest.KeptBodies{Stream: stream}
		c := tc.new(Config{BaseURL: "http://rein.invalid/v1", APIKey: "k", HTTPClient: &http.Client{Transport: rt}})
		if _, ok := c.(provider.BodyReleaser); !ok {
			t.Fatalf("%s: the client does not say it lets go of the body", tc.file)
		}
		if _, err := c.Send(t.Context(), []byte("hello"), nil); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if err := rt.Readable(); err != nil {
			t.Errorf("%s: after Send returned, %v", tc.file, err)
		}
	}
}
