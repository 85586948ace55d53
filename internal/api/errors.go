package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Code is the code of a refusal: what was wrong, for a client to branch on. Its HTTP status is
// Status's, from the one table below; the message says it for a person.
type Code string

// The codes of the API (docs/api.md lists them with their statuses).
const (
	BadRequest           Code = "bad_request"            // a body or parameter the endpoint does not take
	Unsupported          Code = "unsupported"            // a call this host cannot make (e.g. a model switch)
	Unauthorized         Code = "unauthorized"           // no bearer token, or the wrong one
	BadOrigin            Code = "bad_origin"             // an Origin other than the host's own
	NotFound             Code = "not_found"              // no such conversation, endpoint or waiting call
	OpConflict           Code = "op_conflict"            // an op_id reused for another payload
	Closed               Code = "closed"                 // a send to a closed conversation
	Busy                 Code = "busy"                   // an edit or model switch while working
	Held                 Code = "held"                   // another process writes the conversation
	NotOwner             Code = "not_owner"              // another host owns the conversation; the message names it
	TooLarge             Code = "too_large"              // a body over MaxBody
	BadContentType       Code = "bad_content_type"       // a body that is not application/json
	BadHost              Code = "bad_host"               // a Host header the host does not answer to
	RateLimited          Code = "rate_limited"           // creates faster than the host's rate
	TooManyConversations Code = "too_many_conversations" // a create over the host's cap
	TooManyOpen          Code = "too_many_open"          // a session to open with every open one busy
	TooManyConnections   Code = "too_many_connections"   // a connection over the host's cap
	HostClosed           Code = "host_closed"            // the host is shutting down
	SessionFailed        Code = "session_failed"         // a record could not be written
	Internal             Code = "internal"               // anything else the host could not do
)

// statuses is the HTTP status of every code: the one table every handler answers by.
var statuses = map[Code]int{
	BadRequest:           http.StatusBadRequest,
	Unsupported:          http.StatusBadRequest,
	Unauthorized:         http.StatusUnauthorized,
	BadOrigin:            http.StatusForbidden,
	NotFound:             http.StatusNotFound,
	OpConflict:           http.StatusConflict,
	Closed:               http.StatusConflict,
	Busy:                 http.StatusConflict,
	Held:                 http.StatusConflict,
	NotOwner:             http.StatusConflict,
	TooLarge:             http.StatusRequestEntityTooLarge,
	BadContentType:       http.StatusUnsupportedMediaType,
	BadHost:              http.StatusMisdirectedRequest,
	RateLimited:          http.StatusTooManyRequests,
	TooManyConversations: http.StatusServiceUnavailable,
	TooManyOpen:          http.StatusServiceUnavailable,
	TooManyConnections:   http.StatusServiceUnavailable,
	HostClosed:           http.StatusServiceUnavailable,
	SessionFailed:        http.StatusInternalServerError,
	Internal:             http.StatusInternalServerError,
}

// Status returns the HTTP status a refusal with code c is answered with; a code the table does not
// know is a 400.
func (c Code) Status() int {
	if s, ok := statuses[c]; ok {
		return s
	}
	return http.StatusBadRequest
}

// Codes returns every code the API defines.
func Codes() []Code {
	out := make([]Code, 0, len(statuses))
	for c := range statuses {
		out = append(out, c)
	}
	return out
}

// Error is a refusal, as the host makes it and as a client reads it back. Its JSON is the
// "error" member of an error answer (ErrorBody).
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	// RetryAfter, when set, is how long to wait before trying again (the Retry-After header).
	RetryAfter time.Duration `json:"-"`
	// Status is the HTTP status the refusal was answered with, as a client read it (a host
	// answers Code.Status()); 0 for a refusal not yet sent.
	Status int `json:"-"`
}

// Errorf returns a refusal with code and a message for a person.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error returns the message; a refusal read off an answer also names its code and status, since
// its reader may not know it came from a host.
func (e *Error) Error() string {
	if e.Status == 0 {
		return e.Message
	}
	return fmt.Sprintf("%s (%d): %s", e.Code, e.Status, e.Message)
}

// CodeOf returns the code of the refusal in err's chain, or "".
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// ErrorBody is the JSON of an error answer: {"error":{"code":"not_found","message":"..."}}.
type ErrorBody struct {
	Error *Error `json:"error"`
}
