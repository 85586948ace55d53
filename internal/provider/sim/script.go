package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/reinhq/rein/internal/provider"
)

// Script is the behaviour the simulator plays: a list of steps, each consumed by one request. The
// package doc describes the JSON format.
type Script struct {
	Steps []Step `json:"steps"`
	// Strict refuses a request that finds no step left (HTTP 400) instead of playing the policy.
	Strict bool `json:"strict,omitempty"`
}

// Step is one scripted reply or fault. Its fields are described in the package doc.
type Step struct {
	Conversation string `json:"conversation,omitempty"`

	Thinking  *Thinking  `json:"thinking,omitempty"`
	Text      string     `json:"text,omitempty"`
	Chunks    int        `json:"chunks,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	MaxTokens bool       `json:"max_tokens,omitempty"`
	Empty     bool       `json:"empty,omitempty"`

	Status       int    `json:"status,omitempty"`
	RetryAfter   string `json:"retry_after,omitempty"`
	RetryAfterMs int    `json:"retry_after_ms,omitempty"`
	ShouldRetry  *bool  `json:"should_retry,omitempty"`
	ErrorType    string `json:"error_type,omitempty"`
	ErrorCode    string `json:"error_code,omitempty"`
	Message      string `json:"message,omitempty"`

	ErrorEvent *ErrorEvent `json:"error_event,omitempty"`
	Cut        *Cut        `json:"cut,omitempty"`
	DelayMs    int         `json:"delay_ms,omitempty"`

	ContextLimit int `json:"context_limit,omitempty"`

	// WebSearch plays the provider's own web search before the text (websearch.go), where the
	// request offered it.
	WebSearch *WebSearch `json:"web_search,omitempty"`
}

// Thinking is a thinking block: its text and the signature that vouches for it.
type Thinking struct {
	Text      string `json:"text"`
	Signature string `json:"signature,omitempty"`
}

// ToolCall is one scripted tool call. Arguments that are a JSON string are sent as the string's
// raw contents; any other JSON value is sent as its compact text. ID, when set, replaces the
// minted call id.
type ToolCall struct {
	ID        *string         `json:"id,omitempty"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Input, when set, makes the call free-form (a custom tool's): on the Responses wire it is a
	// custom_tool_call carrying this text; elsewhere a function call with the arguments
	// {"input": text}. It excludes Arguments.
	Input *string `json:"input,omitempty"`
}

// ErrorEvent is a mid-stream error sent after AfterDeltas content deltas. Type and Message
// replace the provider's error type and words.
type ErrorEvent struct {
	AfterDeltas int    `json:"after_deltas,omitempty"`
	Type        string `json:"type,omitempty"`
	Message     string `json:"message,omitempty"`
}

// Cut ends a stream without its terminating event: after AfterDeltas content deltas, or after
// AfterBytes bytes of the stream when that is positive. The connection is aborted, unless Clean,
// which ends the body normally at an event boundary.
type Cut struct {
	AfterDeltas int  `json:"after_deltas,omitempty"`
	AfterBytes  int  `json:"after_bytes,omitempty"`
	Clean       bool `json:"clean,omitempty"`
}

// ParseScript reads a script from JSON: an object with "steps", or a bare array of steps. Unknown
// fields are refused, so a misspelt fault does not silently play as text.
func ParseScript(data []byte) (*Script, error) {
	var s Script
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := decodeStrict(trimmed, &s.Steps); err != nil {
			return nil, fmt.Errorf("parse script: %w", err)
		}
	} else if err := decodeStrict(trimmed, &s); err != nil {
		return nil, fmt.Errorf("parse script: %w", err)
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("parse script: %w", err)
	}
	return &s, nil
}

// LoadScript reads a script from a JSON file.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("load script %s: %w", path, err)
	}
	return s, nil
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the script")
	}
	return nil
}

// check refuses steps that cannot be played, naming the step.
func (s *Script) check() error {
	for i, st := range s.Steps {
		if err := st.check(); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
	}
	return nil
}

func (st Step) check() error {
	if st.Status != 0 && (st.Status < 400 || st.Status > 599) {
		return fmt.Errorf("status %d is not an HTTP error status", st.Status)
	}
	for j, c := range st.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("tool call %d has no name", j)
		}
		if c.Input != nil && len(c.Arguments) > 0 {
			return fmt.Errorf("tool call %d has both input (free-form) and arguments; give one", j)
		}
		if len(c.Arguments) > 0 && !json.Valid(c.Arguments) {
			return fmt.Errorf("tool call %d: arguments are not JSON (write raw text as a JSON string)", j)
		}
	}
	if st.Chunks < 0 || st.DelayMs < 0 || st.ContextLimit < 0 || st.RetryAfterMs < 0 {
		return errors.New("chunks, delay_ms, context_limit and retry_after_ms must not be negative")
	}
	if st.ErrorEvent != nil && st.ErrorEvent.AfterDeltas < 0 {
		return errors.New("error_event.after_deltas must not be negative")
	}
	if st.Cut != nil && (st.Cut.AfterDeltas < 0 || st.Cut.AfterBytes < 0) {
		return errors.New("cut.after_deltas and cut.after_bytes must not be negative")
	}
	if st.ErrorEvent != nil && st.Cut != nil {
		return errors.New("a step has either an error_event or a cut, not both")
	}
	return nil
}

// args returns the bytes the stream carries for a call's arguments.
func (c ToolCall) args() string {
	if c.Input != nil {
		return string(provider.FreeformArgs(*c.Input))
	}
	if len(c.Arguments) == 0 {
		return "{}"
	}
	var raw string
	if json.Unmarshal(c.Arguments, &raw) == nil {
		return raw
	}
	var b bytes.Buffer
	if json.Compact(&b, c.Arguments) != nil {
		return string(c.Arguments)
	}
	return b.String()
}

// queue hands out a script's steps; it is guarded by the server's mutex.
type queue struct {
	script *Script
	used   []bool
}

func newQueue(s *Script) queue {
	if s == nil {
		return queue{}
	}
	return queue{script: s, used: make([]bool, len(s.Steps))}
}

// take consumes the first unconsumed step meant for conversation, returning its index, or -1.
func (q *queue) take(conversation string) (Step, int) {
	if q.script == nil {
		return Step{}, -1
	}
	for i, st := range q.script.Steps {
		if q.used[i] || (st.Conversation != "" && st.Conversation != conversation) {
			continue
		}
		q.used[i] = true
		return st, i
	}
	return Step{}, -1
}

func (q *queue) pending() int {
	n := 0
	for _, u := range q.used {
		if !u {
			n++
		}
	}
	return n
}

func (q *queue) strict() bool { return q.script != nil && q.script.Strict }
