package provider

import (
	"fmt"
	"strings"
	"time"
)

// Class is the kind of a provider failure; callers branch on it, never on messages.
type Class string

// The error classes of DESIGN §11.2.
const (
	RateLimited    Class = "rate_limited"    // 429
	Overloaded     Class = "overloaded"      // 529, 503
	Server         Class = "server"          // other 5xx
	Network        Class = "network"         // connection reset, stream cut, timeout
	ContextLength  Class = "context_length"  // prompt is too long
	Auth           Class = "auth"            // 401, 403
	InvalidRequest Class = "invalid_request" // other 4xx
	Cancelled      Class = "cancelled"       // the caller's context ended it
)

// Retryable reports whether a failure of this class may succeed if tried again unchanged.
func (c Class) Retryable() bool {
	switch c {
	case RateLimited, Overloaded, Server, Network:
		return true
	}
	return false
}

// Error is a classified provider failure. Status, Type and Message are the provider's own; Body
// keeps the raw error body for the record.
type Error struct {
	Class   Class
	Status  int    // HTTP status, 0 for failures inside a stream or below HTTP
	Type    string // the provider's error type or code, e.g. "rate_limit_error"
	Message string // the provider's message, for a person
	// RetryAfter is the wait the provider asked for (retry-after, retry-after-ms), or 0.
	RetryAfter time.Duration
	// ShouldRetry is the provider's x-should-retry header when present.
	ShouldRetry *bool
	// Partial is true when the failure came after output began.
	Partial bool
	Err     error // an underlying transport error, if any
}

func (e *Error) Error() string {
	switch {
	case e.Status != 0 && e.Type != "":
		return fmt.Sprintf("%s (%d %s): %s", e.Class, e.Status, e.Type, e.Message)
	case e.Status != 0:
		return fmt.Sprintf("%s (%d): %s", e.Class, e.Status, e.Message)
	case e.Type != "":
		return fmt.Sprintf("%s (%s): %s", e.Class, e.Type, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Class, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Violation is the first rule a rendered request breaks for one provider's wire format. Message
// is in the provider's own words where they are known, so the simulator can answer with them.
type Violation struct {
	Rule    string // a short stable name, e.g. "tool_use_without_result"
	Message string // the provider's words, or a plain sentence
	Path    string // where in the request, e.g. "messages.3.content.0"
}

func (v *Violation) Error() string {
	if v.Path != "" && !strings.HasPrefix(v.Message, v.Path) {
		return v.Path + ": " + v.Message
	}
	return v.Message
}
