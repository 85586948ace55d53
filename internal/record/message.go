package record

import "encoding/json"

// Role is who speaks a message: the person (or the harness in the person's voice) or the model.
type Role string

// The two roles of the context. There is no system role in history: the system prompt travels in a
// request's system field (DESIGN §5).
const (
	User      Role = "user"
	Assistant Role = "assistant"
)

// PartType names what a Part carries.
type PartType string

// The part types of a neutral message.
const (
	PartText       PartType = "text"
	PartThinking   PartType = "thinking"
	PartRedacted   PartType = "redacted_thinking"
	PartToolCall   PartType = "tool_call"
	PartToolResult PartType = "tool_result"
	PartImage      PartType = "image"
	PartServerTool PartType = "server_tool"
)

// The wires a server tool part can come from (Part.Wire).
const (
	WireAnthropic = "anthropic"
	WireResponses = "responses"
)

// Part is one block of a neutral, provider-agnostic message. Which fields are set depends on Type:
//
//   - text: Text
//   - thinking: Text and Signature, kept byte for byte (Anthropic's extended thinking); or, for
//     reasoning an OpenAI Responses server returned, Text (its summary, for people) and Data (the
//     reasoning item exactly as received, encrypted content and all, sent back only to that API).
//     Thinking with neither a Signature nor Data is reasoning no provider takes back: it is kept
//     as evidence and never sent.
//   - redacted_thinking: Data, opaque
//   - tool_call: CallID, Name and Args (always a JSON object once admitted)
//   - tool_result: CallID, Text (the content), IsError and Outcome; and Images, the pictures the
//     result carries after its text (a read_file of an image), each an image part
//   - image: MediaType and Data (base64); Name, when it came from a file, the file's path
//   - server_tool: a block a provider's own tool made on its side (web search): Wire names the
//     API it came from and the only one it is sent back to; Data is the block or item exactly as
//     received (raw JSON); Name is the tool ("web_search"); CallID pairs a call with its result;
//     Text says in a few words what it did, for people. Another wire never sees it.
type Part struct {
	Type      PartType        `json:"type"`
	Text      string          `json:"text,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	MediaType string          `json:"media_type,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
	Outcome   Outcome         `json:"outcome,omitempty"`
	Images    []Part          `json:"images,omitempty"`
	Wire      string          `json:"wire,omitempty"`
}

// Message is one neutral message of a context: a role and its parts. Provider adapters translate it
// to and from their wire formats; vendor types never leave the adapter.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
}

// Outcome is the truthful fate of one tool call (DESIGN §3.5).
type Outcome string

// The outcomes of a tool call. They are distinct on purpose: a model told "denied" for a call that
// was merely never started, or "ok" for one cut short, is told a lie.
const (
	OK          Outcome = "ok"
	Failed      Outcome = "error"
	Denied      Outcome = "denied"
	NotExecuted Outcome = "not_executed"
	Interrupted Outcome = "interrupted"
	TimedOut    Outcome = "timed_out"
)

// Valid reports whether o is one of the known outcomes.
func (o Outcome) Valid() bool {
	switch o {
	case OK, Failed, Denied, NotExecuted, Interrupted, TimedOut:
		return true
	}
	return false
}

// Usage is what a provider reported a request cost, in tokens.
type Usage struct {
	Input      int64 `json:"input,omitempty"`
	Output     int64 `json:"output,omitempty"`
	CacheRead  int64 `json:"cache_read,omitempty"`
	CacheWrite int64 `json:"cache_write,omitempty"`
}

// Attachment is a file a person sent with a prompt: text is inlined, anything else travels as data.
type Attachment struct {
	Name      string `json:"name"`
	MediaType string `json:"media_type"`
	Text      string `json:"text,omitempty"`
	Data      string `json:"data,omitempty"` // base64
}

// Locus is where one line lies in a record file: its sequence number, byte offset and length (the
// newline included), and its checksum (the line's own crc field), which read-back compares before
// parsing so that bytes measured in one file are never read from another.
type Locus struct {
	Seq int64  `json:"seq"`
	Off int64  `json:"off"`
	Len int64  `json:"len"`
	Sum uint32 `json:"sum"`
}

// Pointer names a record file and the loci of one turn's records in it.
type Pointer struct {
	File string  `json:"file"`
	Loci []Locus `json:"loci"`
}
