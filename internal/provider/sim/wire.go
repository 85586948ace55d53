package sim

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/internal/provider"
)

// Format names a wire format the simulator speaks.
type Format string

// The wire formats.
const (
	Anthropic Format = "anthropic" // Anthropic Messages
	Chat      Format = "chat"      // OpenAI Chat Completions
	Responses Format = "responses" // OpenAI Responses
)

// wire is one format's half of the simulator: reading and judging its requests, and writing its
// streams and error bodies. The server holds the policy; a wire only translates.
type wire interface {
	format() Format
	validate(body []byte) *provider.Violation
	// validator is an incremental validator for one conversation's requests, whose verdicts are
	// exactly validate's; items is the top-level key of the array the conversation is in.
	validator() provider.Validator
	items() string
	// read reads a request the validator accepted; c is what its conversation kept of the last.
	read(body []byte, c *readCache) view
	// frames is the whole stream of a plan, terminating events included.
	frames(p *plan) []frame
	// streamError is the mid-stream error event; seq is the number of frames already sent.
	streamError(p *plan, ev ErrorEvent, seq int) frame
	// errorBody is the body of an HTTP error answer. code is OpenAI's error code ("" for null).
	errorBody(status int, typ, code, msg, param, reqID string) []byte
	// defaultError is the provider's error type, code and words for an HTTP status.
	defaultError(status int) (typ, code, msg string)
	// contextError is the provider's answer to a prompt over the context limit.
	contextError(tokens, limit int, reqID string) []byte
	requestIDHeader() string
}

// verifier is a wire that judges what only the provider itself can: content it issued and a
// client sent back (a Responses reasoning item's encrypted content). verify returns the
// provider's error code and words for the first thing it refuses, or "" for the message.
type verifier interface {
	verify(body []byte) (code, msg string)
}

// frame is one server-sent event. A delta frame carries content: it is what faults count and
// what a slow stream waits before. A head frame opens the stream, before any content.
type frame struct {
	event string // "" writes no event: line
	data  []byte
	delta bool
	head  bool
}

func (f frame) bytes() []byte { return f.appendTo(nil) }

// appendTo appends the event as it goes on the wire.
func (f frame) appendTo(b []byte) []byte {
	if f.event != "" {
		b = append(b, "event: "...)
		b = append(b, f.event...)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	b = append(b, f.data...)
	return append(b, "\n\n"...)
}

// obj is a JSON object whose keys keep the order they are written in (key, value, key, value...),
// so the streams read like the providers' own.
type obj []any

func (o obj) MarshalJSON() ([]byte, error) { return o.appendJSON(nil) }

func errKey(k any) error { return fmt.Errorf("obj key %v is not a string", k) }

// encode marshals v without HTML escaping, so text reaches a reader as it was written.
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// mustJSON encodes the simulator's own values, which always encode.
func mustJSON(v any) []byte {
	b, err := appendJSON(nil, v)
	if err != nil {
		panic("sim: encode: " + err.Error())
	}
	return b
}

// nullable is nil for an empty string, so it encodes as JSON null.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
