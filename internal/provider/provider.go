// Package provider owns what every model provider has in common: the neutral request, the stream
// events and the reply a client returns, the Model interface adapters implement, the error classes
// every failure is sorted into (DESIGN §11.2), and the retry policy (§11.3). Vendor wire types
// never leave the adapter packages beneath this one; policy never enters them.
package provider

import (
	"context"
	"encoding/json"

	"github.com/reinhq/rein/internal/record"
)

// Tool is a function tool offered to the model, with a JSON Schema for its arguments.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

// Request is one neutral request: the system prompt, the context's messages in order, the tools.
type Request struct {
	Model     string
	System    string
	Messages  []record.Message
	Tools     []Tool
	MaxTokens int
	// Thinking, when positive, asks for extended thinking with this many budget tokens where the
	// provider supports it.
	Thinking int
	// Effort, when set, is the reasoning effort asked of an OpenAI reasoning model: "low",
	// "medium" or "high". Providers without one ignore it.
	Effort string
}

// EventType names a live stream event.
type EventType int

// The live stream events a client publishes while a reply arrives. They are UI material and are
// not recorded token by token; the Reply is the record of what was said.
const (
	TextDelta     EventType = iota + 1 // Text: a piece of assistant text
	ThinkingDelta                      // Text: a piece of thinking
	ToolCallStart                      // CallID, Name: a tool call began
	ToolArgsDelta                      // CallID, Text: a piece of a tool call's arguments
	Restart                            // the stream failed and is being retried: discard what arrived
)

// Event is one live stream event.
type Event struct {
	Type   EventType
	Index  int // the part index within the reply
	Text   string
	CallID string
	Name   string
}

// Neutral stop reasons. Adapters map their provider's words onto these.
const (
	StopEnd       = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
	StopSequence  = "stop_sequence"
	StopRefusal   = "refusal"
	StopCancelled = "cancelled" // the stream was cut by Stop
	StopOther     = "other"
)

// Reply is what a stream produced, complete or not. Tool-call parts carry their arguments exactly
// as received (Args may be any bytes, even invalid JSON: admission repairs them, DESIGN §6).
// Incomplete lists the indices (into Parts) of tool calls whose arguments were cut off by a
// max-tokens stop or a cut stream.
type Reply struct {
	ID         string
	Model      string
	Parts      []record.Part
	Incomplete []int
	StopReason string
	Usage      record.Usage
}

// Model streams one request. on receives live events in order and may be nil. Stream returns the
// reply and nil on success; on failure it returns what arrived so far and an *Error (a cancelled
// ctx yields Class Cancelled). Stream makes exactly one attempt; retries are the caller's, through
// Policy.
type Model interface {
	Stream(ctx context.Context, req Request, on func(Event)) (Reply, error)
}
