package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name    string
		status  int
		header  http.Header
		body    string
		class   Class
		typ     string
		msg     string
		after   time.Duration
		retry   *bool
		noRetry bool
	}{
		{name: "anthropic envelope overloaded", status: 529,
			body:  `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`,
			class: Overloaded, typ: "overloaded_error", msg: "Overloaded"},
		{name: "503 overloaded", status: 503, body: `upstream connect error`, class: Overloaded, msg: "upstream connect error"},
		{name: "rate limited with retry-after seconds", status: 429,
			header: http.Header{"Retry-After": {"7"}, "X-Should-Retry": {"true"}},
			body:   `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`,
			class:  RateLimited, typ: "rate_limit_error", msg: "slow down", after: 7 * time.Second, retry: &yes},
		{name: "retry-after-ms wins", status: 429,
			header: http.Header{"Retry-After": {"7"}, "Retry-After-Ms": {"1500"}},
			body:   `{}`, class: RateLimited, msg: "Too Many Requests", after: 1500 * time.Millisecond},
		{name: "retry-after as HTTP date, from Date header", status: 429,
			header: http.Header{"Retry-After": {"Wed, 21 Oct 2015 07:28:30 GMT"}, "Date": {"Wed, 21 Oct 2015 07:28:00 GMT"}},
			class:  RateLimited, msg: "Too Many Requests", after: 30 * time.Second},
		{name: "retry-after garbage ignored", status: 429, header: http.Header{"Retry-After": {"soon"}},
			class: RateLimited, msg: "Too Many Requests"},
		{name: "x-should-retry false", status: 429, header: http.Header{"X-Should-Retry": {"false"}},
			body:  `{"type":"error","error":{"type":"rate_limit_error","message":"spend limit"}}`,
			class: RateLimited, typ: "rate_limit_error", msg: "spend limit", retry: &no},
		{name: "server 500 api_error", status: 500,
			body:  `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
			class: Server, typ: "api_error", msg: "Internal server error"},
		{name: "502 html", status: 502, body: "<html>bad gateway</html>", class: Server, msg: "<html>bad gateway</html>"},
		{name: "401", status: 401,
			body:  `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`,
			class: Auth, typ: "authentication_error", msg: "invalid x-api-key"},
		{name: "403", status: 403, body: `{"error":{"message":"forbidden"}}`, class: Auth, msg: "forbidden"},
		{name: "413", status: 413,
			body:  `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`,
			class: ContextLength, typ: "request_too_large", msg: "Request exceeds the maximum allowed number of bytes."},
		{name: "anthropic prompt too long", status: 400,
			body:  `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`,
			class: ContextLength, typ: "invalid_request_error", msg: "prompt is too long: 210000 tokens > 200000 maximum"},
		{name: "openai nested with string code", status: 400,
			body:  `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			class: ContextLength, typ: "invalid_request_error", msg: "This model's maximum context length is 128000 tokens."},
		{name: "string code stands in for a missing type", status: 400,
			body:  `{"error":{"message":"too long","code":"context_length_exceeded"}}`,
			class: ContextLength, typ: "context_length_exceeded", msg: "too long"},
		{name: "flat numeric code", status: 400, body: `{"code":400,"message":"bad tools"}`,
			class: InvalidRequest, msg: "bad tools"},
		{name: "nested numeric code (openrouter)", status: 429,
			body:  `{"error":{"message":"Provider returned error","code":429,"metadata":{"raw":"x"}}}`,
			class: RateLimited, msg: "Provider returned error"},
		{name: "flat numeric code without status", status: 0, body: `{"code":503,"message":"busy"}`,
			class: Overloaded, msg: "busy"},
		{name: "error as a string (ollama)", status: 404, body: `{"error":"model \"x\" not found"}`,
			class: InvalidRequest, msg: `model "x" not found`},
		{name: "padded JSON", status: 400, body: "  \n {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"m\"}} \n",
			class: InvalidRequest, typ: "invalid_request_error", msg: "m"},
		{name: "message that is not a string", status: 400, body: `{"error":{"message":{"detail":"x"}}}`,
			class: InvalidRequest, msg: `{"detail":"x"}`},
		{name: "408 is a timeout", status: 408, class: Network, msg: "Request Timeout"},
		{name: "other 4xx", status: 404, body: `{"type":"error","error":{"type":"not_found_error","message":"model: x"}}`,
			class: InvalidRequest, typ: "not_found_error", msg: "model: x"},
		{name: "empty body", status: 500, class: Server, msg: "Internal Server Error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Classify(tc.status, tc.header, []byte(tc.body))
			if e.Class != tc.class || e.Type != tc.typ || e.Message != tc.msg || e.Status != tc.status {
				t.Fatalf("got class=%s type=%q msg=%q status=%d, want class=%s type=%q msg=%q",
					e.Class, e.Type, e.Message, e.Status, tc.class, tc.typ, tc.msg)
			}
			if e.RetryAfter != tc.after {
				t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tc.after)
			}
			if (e.ShouldRetry == nil) != (tc.retry == nil) || e.ShouldRetry != nil && *e.ShouldRetry != *tc.retry {
				t.Errorf("ShouldRetry = %v, want %v", e.ShouldRetry, tc.retry)
			}
		})
	}
}

func TestRetryAfterDateWithoutDateHeader(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	h := http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}
	if got := retryAfter(h, now); got != 90*time.Second {
		t.Fatalf("retryAfter = %v, want 90s", got)
	}
	h.Set("Retry-After", now.Add(-time.Minute).Format(http.TimeFormat))
	if got := retryAfter(h, now); got != 0 {
		t.Fatalf("a date in the past: retryAfter = %v, want 0", got)
	}
}

func TestStreamError(t *testing.T) {
	for _, tc := range []struct {
		typ, msg string
		class    Class
	}{
		{"overloaded_error", "Overloaded", Overloaded},
		{"rate_limit_error", "slow", RateLimited},
		{"api_error", "Internal server error", Server},
		{"invalid_request_error", "bad", InvalidRequest},
		{"invalid_request_error", "prompt is too long: 1 > 0", ContextLength},
		{"authentication_error", "no", Auth},
		{"something_new", "?", Server},
	} {
		e := StreamError(tc.typ, tc.msg)
		if e.Class != tc.class || e.Type != tc.typ || e.Message != tc.msg || e.Status != 0 {
			t.Errorf("StreamError(%q, %q) = %+v, want class %s", tc.typ, tc.msg, e, tc.class)
		}
	}
}

func TestClassifyTransport(t *testing.T) {
	for _, tc := range []struct {
		err   error
		class Class
	}{
		{context.Canceled, Cancelled},
		{fmt.Errorf("read body: %w", context.Canceled), Cancelled},
		{context.DeadlineExceeded, Cancelled},
		{io.ErrUnexpectedEOF, Network},
		{errors.New("connection reset by peer"), Network},
	} {
		e := ClassifyTransport(tc.err, true)
		if e.Class != tc.class || !e.Partial || !errors.Is(e, tc.err) {
			t.Errorf("ClassifyTransport(%v) = %+v, want %s, partial, wrapping", tc.err, e, tc.class)
		}
	}
}

func TestErrorText(t *testing.T) {
	e := Classify(529, nil, []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	if got, want := e.Error(), "overloaded (529 overloaded_error): Overloaded"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

// TestTransportHints: a request to a base URL nothing listens at, or to a host no name server
// knows, says what to check — the usual cause is a local server not started or a mistyped URL —
// and is still a network failure, retried as one.
func TestTransportHints(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, url := range []string{"http://" + addr + "/v1", "http://no-such-host.invalid/v1"} {
		_, err := http.Post(url, "application/json", nil)
		if err == nil {
			t.Fatalf("a request to %s succeeded", url)
		}
		e := ClassifyTransport(err, false)
		if e.Class != Network || !strings.Contains(e.Message, "base URL") {
			t.Errorf("%s: class %s, message %q: want a network failure that says to check the base URL", url, e.Class, e.Message)
		}
	}
}
