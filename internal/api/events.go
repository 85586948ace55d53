package api

import "encoding/json"

// The events stream (GET /api/conversations/{id}/events) is server-sent events of two names:
// "record", one per record appended, with the record's seq as its id and an Event as its data; and
// "live", unrecorded material, with a Live as its data and no id.
const (
	EventRecord = "record"
	EventLive   = "live"
)

// Event is one event of a conversation's stream: a record (Seq > 0) with the conversation's state
// as of that record or later, or a live event that is not recorded (Live != nil, and nothing
// else set). A record event's JSON is its data; Live is carried by its own event name.
type Event struct {
	Seq  int64  `json:"seq"`
	Kind string `json:"kind"` // the record's kind (record.Kind)
	// Payload is the record's payload, as the record encodes it (record.New makes the value to
	// decode it into).
	Payload json.RawMessage `json:"payload"`
	State   State           `json:"state"`
	Live    *Live           `json:"-"`
}

// Live is a live, unrecorded event: streamed text and thinking, a tool call's arguments as they
// stream, a tool's start, its output as it runs (paced and capped; never what the model reads) and
// its end, a restarted stream, a status line (a retry, a wait).
type Live struct {
	// Kind is "text", "thinking", "tool_call", "tool_args", "tool_start", "tool_output", "tool_end", "restart"
	// or "status".
	Kind   string `json:"kind"`
	Text   string `json:"text,omitempty"`
	CallID string `json:"call_id,omitempty"`
	Name   string `json:"name,omitempty"`
}
