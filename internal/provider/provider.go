// Package provider owns what every model provider has in common: the neutral request, the stream
// events and the reply a client returns, the Model interface every adapter implements, the error
// classes every failure is sorted into (DESIGN §11.2), and the retry policy (§11.3). Vendor wire
// types never leave the adapter packages beneath this one; policy never enters them. What each
// adapter knows of its vendor's models (the default model, context windows) is the adapter's.
package provider

import (
	"context"
	"encoding/json"

	"github.com/reinhq/rein/internal/record"
)

// Tool is a tool offered to the model: a function with a JSON Schema for its arguments, unless
// Type or Grammar says otherwise (freeform.go). Schema is always set: it is what every wire
// that does not know the tool's own form is sent, and what a call's arguments are checked against.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	// Type, when set, offers the tool as a client tool type its provider defines, on that
	// provider's wire only (Anthropic's "text_editor_20250728", "bash_20250124"): the model knows
	// its input, and the definition sent is the type and the name alone.
	Type string `json:"type,omitempty"`
	// Grammar, when set, offers the tool as a free-form custom tool on the wires that have them
	// (OpenAI Responses): the model writes its input as text in this Lark grammar, and the call's
	// arguments are recorded as {"input": text} (FreeformArgs). Elsewhere the tool is a function
	// taking that one string.
	Grammar string `json:"grammar,omitempty"`
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
	// WebSearch offers the provider's own server-side web search tool: Anthropic's web search
	// tool, the Responses API's web_search. Chat Completions has none and ignores it.
	WebSearch bool
	// Memo, when set, keeps the conversation's message encodings for the next request (Memo); the
	// bytes are the same with it or without it.
	Memo *Memo
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

// DefaultContextWindow is the context window, in tokens, assumed for a model no adapter knows.
const DefaultContextWindow = 128_000

// Model is one provider's client, the one interface between the loop and a provider (DESIGN
// §11.1). Every adapter implements it — anthropic.Client (which the simulator speaks too),
// openai.Chat and openai.Responses — and passes the conformance suite
// (internal/provider/conformance); the loop holds nothing else of a provider.
//
// The three steps are apart so that what is sent is exactly what was judged and recorded:
//
//   - Encode turns a neutral request into the exact bytes that will be sent.
//   - Validate judges those bytes by the rules the provider refuses requests for, and returns the
//     first rule they break (DESIGN §6), or nil.
//   - Send posts body, exactly as given, and streams the reply: on receives live events in order
//     and may be nil. It returns the reply and nil on success; on failure what arrived so far and
//     an *Error (a cancelled ctx yields Class Cancelled). Send makes exactly one attempt; retries
//     are Policy's.
type Model interface {
	Encode(req Request) ([]byte, error)
	Validate(body []byte) *Violation
	Send(ctx context.Context, body []byte, on func(Event)) (Reply, error)
}

// Stream encodes req with m and sends it once, unvalidated: a request in one call, for a caller
// that neither records nor retries it. A request that does not encode is an InvalidRequest error.
func Stream(ctx context.Context, m Model, req Request, on func(Event)) (Reply, error) {
	body, err := m.Encode(req)
	if err != nil {
		return Reply{}, &Error{Class: InvalidRequest, Message: err.Error(), Err: err}
	}
	return m.Send(ctx, body, on)
}
