package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/external"
)

// The stream-json lines rein reads, one JSON object a line on the program's standard output.
// Fields rein does not read are ignored: the program adds fields often, and a new field must not
// end a turn. A line rein cannot read at all (not an object, no type) is an error of the line,
// reported as an error item; it does not end the turn either.
//
//	{"type":"system","subtype":"init","session_id":…,"claude_code_version":…}   the session begins
//	{"type":"system","subtype":"api_retry","attempt":…,"retry_delay_ms":…,"error_status":…}
//	{"type":"assistant","message":{"content":[text | thinking | tool_use …]}}
//	{"type":"user","message":{"content":[tool_result …]}}
//	{"type":"control_request","request_id":…,"request":{"subtype":"can_use_tool",…}}
//	{"type":"control_response","response":{"subtype":"success"|"error","request_id":…}}
//	{"type":"result","subtype":…,"is_error":…,"result":…,"errors":[…],"session_id":…}
type line struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`

	// system/init
	Version string `json:"claude_code_version"`
	Model   string `json:"model"`

	// system/api_retry
	Attempt      int             `json:"attempt"`
	MaxRetries   int             `json:"max_retries"`
	RetryDelayMs int64           `json:"retry_delay_ms"`
	ErrorStatus  *int            `json:"error_status"`
	Error        json.RawMessage `json:"error"` // a string on api_retry; other shapes elsewhere

	// assistant, user
	Message *message `json:"message"`

	// control_request, control_response
	RequestID string          `json:"request_id"`
	Request   *controlRequest `json:"request"`
	Response  json.RawMessage `json:"response"`

	// result
	IsError        bool     `json:"is_error"`
	Result         string   `json:"result"`
	Errors         []string `json:"errors"`
	StopReason     string   `json:"stop_reason"`
	TerminalReason string   `json:"terminal_reason"`
	APIErrorStatus *int     `json:"api_error_status"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string, or a list of blocks
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"` // a tool result's: a string, or a list of blocks
	IsError   bool            `json:"is_error"`
}

type controlRequest struct {
	Subtype     string          `json:"subtype"`
	ToolName    string          `json:"tool_name"`
	Input       json.RawMessage `json:"input"`
	Description string          `json:"description"`
	ToolUseID   string          `json:"tool_use_id"`
	BlockedPath string          `json:"blocked_path"`
}

// errNotLine is the error of a line that is not a stream-json message.
var errNotLine = errors.New("not a stream-json message")

// decode reads one line of the program's output.
func decode(b []byte) (line, error) {
	var l line
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return l, fmt.Errorf("%w: %s", errNotLine, clip(string(b), 120))
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return line{}, fmt.Errorf("%w: %v", errNotLine, err)
	}
	if l.Type == "" {
		return line{}, fmt.Errorf("%w: it has no type", errNotLine)
	}
	return l, nil
}

// blocks returns a message's content blocks; a content that is a plain string is one text block.
func (m *message) blocks() []block {
	if m == nil || len(m.Content) == 0 {
		return nil
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []block{{Type: "text", Text: s}}
	}
	var bs []block
	if json.Unmarshal(m.Content, &bs) != nil {
		return nil
	}
	return bs
}

// text returns what a tool result's content says: its string, or its text blocks joined.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bs []block
	if json.Unmarshal(raw, &bs) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range bs {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

// errorText returns the line's error field as words: a string as it is, anything else as JSON.
func (l *line) errorText() string {
	if len(l.Error) == 0 || string(l.Error) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(l.Error, &s) == nil {
		return s
	}
	return string(l.Error)
}

// maxItemText bounds the text an item carries for a person to read; Raw keeps nothing more.
const maxItemText = 4000

// items returns what an assistant or user line says the program did, as items.
func (l *line) items() []external.Item {
	var out []external.Item
	switch l.Type {
	case "assistant":
		for _, b := range l.Message.blocks() {
			switch b.Type {
			case "text":
				if b.Text != "" {
					out = append(out, external.Item{Kind: external.ItemText, Text: b.Text})
				}
			case "thinking":
				if b.Thinking != "" {
					out = append(out, external.Item{Kind: external.ItemThinking, Text: b.Thinking})
				}
			case "tool_use", "server_tool_use":
				out = append(out, external.Item{ID: b.ID, Kind: external.ItemToolCall, Name: b.Name, Status: "started",
					Text: clip(summary(b.Name, b.Input), maxItemText), Raw: compact(b.Input)})
			}
		}
	case "user":
		for _, b := range l.Message.blocks() {
			if b.Type != "tool_result" {
				continue
			}
			status := "completed"
			if b.IsError {
				status = "failed"
			}
			out = append(out, external.Item{ID: b.ToolUseID, Kind: external.ItemToolResult, Status: status,
				Text: clip(contentText(b.Content), maxItemText)})
		}
	case "system":
		if l.Subtype == "api_retry" {
			out = append(out, external.Item{Kind: external.ItemRetry, Text: l.retryText()})
		}
	}
	return out
}

func (l *line) retryText() string {
	what := l.errorText()
	if l.ErrorStatus != nil {
		what = fmt.Sprintf("%d %s", *l.ErrorStatus, what)
	}
	return fmt.Sprintf("the provider answered %s; retry %d of %d in %.1fs", strings.TrimSpace(what), l.Attempt, l.MaxRetries, float64(l.RetryDelayMs)/1000)
}

// summary says what a tool call does, for a person: a command line, a path, or the input.
func summary(name string, input json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(input, &in) == nil {
		for _, k := range []string{"command", "file_path", "path", "pattern", "url", "query", "description"} {
			if s, ok := in[k].(string); ok && s != "" {
				return s
			}
		}
	}
	return string(compact(input))
}

func compact(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return nil
	}
	return b.Bytes()
}

// clip cuts s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
