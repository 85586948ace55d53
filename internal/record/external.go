package record

import "encoding/json"

// The events of a conversation whose turns run in another agent program (package external):
// which program, the program's own session, and what it did. They are events: the model's
// context is made only of the prompts and, at each turn's end, the program's reply imported as a
// turn of the harness's (Import with Source "claude" or "codex", External naming the session).
const (
	KindBackend         Kind = "backend"
	KindExternalSession Kind = "external_session"
	KindExternalItem    Kind = "external_item"
)

// Backend records the back-end a conversation's turns run in from here on: "rein" (rein's own
// loop) or an external program's kind ("claude", "codex"). A record with none runs rein's own.
type Backend struct {
	Name string `json:"kind"`
	Op   string `json:"op,omitempty"` // the host operation that chose it
}

// Kind answers KindBackend.
func (*Backend) Kind() Kind { return KindBackend }

func (p *Backend) members() (f fields) {
	f.add("kind", &p.Name)
	f.add("op", &p.Op)
	return f
}

// ExternalSession records the session (Claude Code) or thread (Codex) an external program said it
// runs the conversation's turns in, and the program's version; the next turn resumes it.
type ExternalSession struct {
	Program string `json:"kind"` // external.KindClaude or KindCodex
	ID      string `json:"id"`
	Version string `json:"version,omitempty"`
}

// Kind answers KindExternalSession.
func (*ExternalSession) Kind() Kind { return KindExternalSession }

func (p *ExternalSession) members() (f fields) {
	f.add("kind", &p.Program)
	f.add("id", &p.ID)
	f.add("version", &p.Version)
	return f
}

// ExternalItem records one thing an external program did during a turn, as a person reads it
// (external.Item): its text, a tool call and its result, a command, a retry, an error. Raw is the
// program's own input of a call, when it gave one.
type ExternalItem struct {
	Item   string          `json:"item"` // text, thinking, tool_call, tool_result, command, file_change, retry, error
	ID     string          `json:"id,omitempty"`
	Name   string          `json:"name,omitempty"`
	Text   string          `json:"text,omitempty"`
	Status string          `json:"status,omitempty"`
	Raw    json.RawMessage `json:"raw,omitempty"`
}

// Kind answers KindExternalItem.
func (*ExternalItem) Kind() Kind { return KindExternalItem }

func (p *ExternalItem) members() (f fields) {
	f.add("item", &p.Item)
	f.add("id", &p.ID)
	f.add("name", &p.Name)
	f.add("text", &p.Text)
	f.add("status", &p.Status)
	f.add("raw", &p.Raw)
	return f
}
