package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// maxMessage bounds a message taken from a body that is not JSON (an HTML page from a proxy).
const maxMessage = 512

// Classify turns a non-2xx HTTP response into an *Error (DESIGN §11.2). It reads JSON error bodies
// in the nested shape ({"error":{"type","message","code"}}, with or without Anthropic's
// {"type":"error"} envelope), the flat shape ({"code":400,"message":...}) and {"error":"text"};
// a code may be a number or a string. It honours retry-after (seconds or an HTTP date, measured
// from the response's Date header when there is one), retry-after-ms and x-should-retry.
func Classify(status int, header http.Header, body []byte) *Error {
	typ, msg, code := parseErrorBody(body)
	if msg == "" {
		msg = bodyText(body)
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &Error{Status: status, Type: typ, Message: msg}
	by := status
	if by == 0 {
		by = code // a flat body's numeric code stands in when there is no HTTP status
	}
	e.Class = classOf(by, typ, msg)
	if header != nil {
		e.RetryAfter = retryAfter(header, time.Now())
		switch strings.ToLower(strings.TrimSpace(header.Get("x-should-retry"))) {
		case "true":
			e.ShouldRetry = boolPtr(true)
		case "false":
			e.ShouldRetry = boolPtr(false)
		}
	}
	return e
}

// StreamError classifies an error event that arrived inside a stream, by the provider's error type
// (e.g. Anthropic's overloaded_error) and message.
func StreamError(typ, message string) *Error {
	return &Error{Class: classOf(0, typ, message), Type: typ, Message: message}
}

// ClassifyTransport classifies a failure below HTTP: a context error (context.Canceled or
// context.DeadlineExceeded) is Cancelled, anything else Network. partial says whether output had
// begun. A client that can tell its caller's ctx apart from its own timeouts should check ctx.Err()
// first: an http.Client.Timeout also reports context.DeadlineExceeded. A refused connection or an
// unknown host says what to check, as a mistyped base URL or a local server not started causes them.
func ClassifyTransport(err error, partial bool) *Error {
	c := Network
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		c = Cancelled
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		msg += " (nothing listens there: is the server running, and is the base URL right?)"
	case errors.As(err, &dns) && dns.IsNotFound:
		msg += " (no such host: is the base URL right?)"
	}
	return &Error{Class: c, Message: msg, Partial: partial, Err: err}
}

// classOf maps an HTTP status (or 0 inside a stream) and the provider's words onto a class. The
// status decides when there is one; the error type decides inside a stream.
func classOf(status int, typ, msg string) Class {
	clientSide := status == 0 || status >= 400 && status < 500
	if status == 413 || (clientSide && contextLength(typ, msg)) {
		return ContextLength
	}
	switch {
	case status == 429:
		return RateLimited
	case status == 529 || status == 503:
		return Overloaded
	case status >= 500:
		return Server
	case status == 401 || status == 403:
		return Auth
	case status == 408:
		return Network // the server timed out reading the request: a timeout, not a bad request
	case status >= 400:
		return InvalidRequest
	}
	switch typ {
	case "overloaded_error":
		return Overloaded
	case "rate_limit_error", "rate_limit_exceeded", "rate_limited":
		return RateLimited
	case "invalid_request_error", "invalid_request", "not_found_error", "billing_error":
		return InvalidRequest
	case "authentication_error", "permission_error":
		return Auth
	case "request_too_large":
		return ContextLength
	}
	// api_error, server_error, timeout_error and anything unknown: the provider failed.
	return Server
}

// contextLength reports whether an error says the prompt does not fit the context window. The
// phrases are the providers' own.
func contextLength(typ, msg string) bool {
	if typ == "context_length_exceeded" || typ == "request_too_large" {
		return true
	}
	m := strings.ToLower(msg)
	for _, p := range []string{
		"prompt is too long",
		"context_length_exceeded",
		"maximum context length",
		"exceed context limit",
		"exceeds the context window",
		"context window exceeded",
	} {
		if strings.Contains(m, p) {
			return true
		}
	}
	return false
}

// parseErrorBody reads the error type, message and numeric code from a JSON error body of any of
// the known shapes. Fields it cannot find are left empty.
func parseErrorBody(body []byte) (typ, msg string, code int) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return "", "", 0
	}
	fields := top
	if raw, ok := top["error"]; ok {
		var nested map[string]json.RawMessage
		var s string
		switch {
		case json.Unmarshal(raw, &nested) == nil && nested != nil:
			fields = nested
		case json.Unmarshal(raw, &s) == nil:
			msg = s
		}
	}
	typ = str(fields["type"])
	if typ == "error" {
		typ = "" // Anthropic's envelope, not an error type
	}
	if m, ok := fields["message"]; ok && msg == "" {
		msg = str(m)
		if msg == "" {
			msg = string(bytes.TrimSpace(m)) // a message that is not a string: keep its JSON
		}
	}
	if c, ok := fields["code"]; ok {
		var n json.Number
		if json.Unmarshal(c, &n) == nil {
			if i, err := n.Int64(); err == nil {
				code = int(i)
			}
		} else if s := str(c); s != "" && typ == "" {
			typ = s
		}
	}
	return typ, msg, code
}

// str decodes a JSON string, or returns "" when raw is not one.
func str(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// bodyText returns a short, printable excerpt of a body that is not JSON.
func bodyText(body []byte) string {
	b := bytes.TrimSpace(body)
	if len(b) == 0 || b[0] == '{' || b[0] == '[' {
		return ""
	}
	if len(b) > maxMessage {
		b = b[:maxMessage]
		for len(b) > 0 && !utf8.Valid(b) {
			b = b[:len(b)-1]
		}
	}
	return string(b)
}

// retryAfter reads retry-after-ms, then retry-after (seconds or an HTTP date). An HTTP date is
// measured from the response's Date header when it has one, so a skewed local clock does not
// matter, else from now.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if d, err := http.ParseTime(h.Get("date")); err == nil {
		now = d
	}
	if wait := at.Sub(now); wait > 0 {
		return wait
	}
	return 0
}

func boolPtr(b bool) *bool { return &b }
