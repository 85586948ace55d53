package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reinhq/rein/internal/record"
)

// claudeLine is what rein reads of one line of a Claude Code project file.
type claudeLine struct {
	Type              string          `json:"type"`
	Subtype           string          `json:"subtype"`
	UUID              string          `json:"uuid"`
	ParentUUID        *string         `json:"parentUuid"`
	LogicalParentUUID *string         `json:"logicalParentUuid"`
	IsSidechain       bool            `json:"isSidechain"`
	IsMeta            bool            `json:"isMeta"`
	IsCompactSummary  bool            `json:"isCompactSummary"`
	IsAPIError        bool            `json:"isApiErrorMessage"`
	SessionID         string          `json:"sessionId"`
	Cwd               string          `json:"cwd"`
	Version           string          `json:"version"`
	Message           json.RawMessage `json:"message"`

	line int
}

type claudeMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// maxLine bounds one line of a foreign file (a tool result may be large; a line past this is
// counted as malformed).
const maxLine = 64 << 20

// ReadClaude reads a Claude Code project file (~/.claude/projects/<dir>/<uuid>.jsonl): a tree of
// lines linked by uuid and parentUuid. It follows the live branch — from the last message's leaf
// back to the root, leaving side chains out — and turns it into items: assistant lines sharing a
// message id merged, tool results matched by id, compaction summaries and interruption markers
// kept as notes, synthetic lines carrying a provider error dropped.
func ReadClaude(r io.Reader, opts Options) (*Conversation, error) {
	c := &Conversation{Origin: record.Origin{Kind: ClaudeCode}}
	byID := map[string]*claudeLine{}
	var order []*claudeLine
	err := eachLine(r, &c.Notes, func(n int, l *claudeLine) {
		l.line = n
		if c.Origin.ID == "" && l.SessionID != "" {
			c.Origin.ID = l.SessionID
		}
		if l.Version != "" {
			c.Origin.Version = l.Version
		}
		if l.Cwd != "" {
			c.Cwd = l.Cwd
		}
		if l.UUID == "" {
			c.Notes.skip(lineKind(*l))
			return
		}
		byID[l.UUID] = l
		order = append(order, l)
	})
	if err != nil {
		return nil, err
	}
	// The leaf: the last message line of the main chain.
	var leaf *claudeLine
	for i := len(order) - 1; i >= 0; i-- {
		l := order[i]
		if !l.IsSidechain && (l.Type == "user" || l.Type == "assistant") {
			leaf = l
			break
		}
	}
	if leaf == nil {
		return nil, errors.New("the file holds no conversation: no user or assistant line on its main chain")
	}
	live, earlier := walk(leaf, byID)
	for _, l := range order {
		if l.IsSidechain {
			c.Notes.skip("side chain")
		}
	}
	c.Items = claudeItems(live, c)
	if opts.WithHistory {
		c.Earlier = claudeItems(earlier, c)
	}
	if len(c.Items) == 0 {
		return nil, errors.New("the file holds no conversation rein can import: its live branch has no message")
	}
	return c, nil
}

// walk follows parent links from leaf to the root: the live lines, oldest first; a compaction
// boundary ends them, and the lines before it (through its logical parent) are earlier.
func walk(leaf *claudeLine, byID map[string]*claudeLine) (live, earlier []*claudeLine) {
	seen := map[string]bool{}
	cur := leaf
	into := &live
	for cur != nil && !seen[cur.UUID] {
		seen[cur.UUID] = true
		*into = append(*into, cur)
		var next *string
		switch {
		case cur.ParentUUID != nil:
			next = cur.ParentUUID
		case cur.Type == "system" && cur.Subtype == "compact_boundary" && cur.LogicalParentUUID != nil:
			next, into = cur.LogicalParentUUID, &earlier
		}
		if next == nil {
			break
		}
		cur = byID[*next]
	}
	reverse(live)
	reverse(earlier)
	return live, earlier
}

func reverse[T any](s []T) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

func lineKind(l claudeLine) string {
	if l.Type == "" {
		return "untyped"
	}
	if l.Subtype != "" {
		return l.Type + "/" + l.Subtype
	}
	return l.Type
}

// claudeItems turns the lines of a branch into items.
func claudeItems(lines []*claudeLine, c *Conversation) []Item {
	var items []Item
	var cur *Item // the assistant message being assembled
	var curID string
	flush := func() {
		if cur != nil {
			items = append(items, *cur)
			cur, curID = nil, ""
		}
	}
	for _, l := range lines {
		if l.Type != "user" && l.Type != "assistant" {
			c.Notes.skip(lineKind(*l))
			continue
		}
		var m claudeMessage
		if err := json.Unmarshal(l.Message, &m); err != nil {
			c.Notes.malformed(l.line, "its message does not read: "+clip(err.Error()))
			continue
		}
		if l.Type == "assistant" {
			if l.IsAPIError || m.Model == "<synthetic>" {
				c.Notes.repair("synthetic assistant line carrying an error dropped")
				continue
			}
			if m.Model != "" {
				c.Model = m.Model
			}
			parts, repairs := claudeAssistant(m.Content, c)
			if cur != nil && m.ID != "" && m.ID == curID {
				cur.Parts = append(cur.Parts, parts...)
				cur.Repairs = append(cur.Repairs, repairs...)
				c.Notes.repair("split assistant lines merged")
				continue
			}
			flush()
			cur, curID = &Item{Kind: Assistant, Parts: parts, Model: m.Model, Repairs: repairs}, m.ID
			continue
		}
		flush()
		switch {
		case l.IsCompactSummary:
			items = append(items, Item{Kind: Note, Text: textOf(m.Content)})
		case l.IsMeta:
			c.Notes.skip("meta user line")
		default:
			items = append(items, claudeUser(m.Content, c)...)
		}
	}
	flush()
	return items
}

func claudeAssistant(content json.RawMessage, c *Conversation) ([]record.Part, []record.Repaired) {
	var blocks []claudeBlock
	if err := json.Unmarshal(content, &blocks); err != nil {
		if t := textOf(content); t != "" {
			return []record.Part{{Type: record.PartText, Text: t}}, nil
		}
		return nil, nil
	}
	var parts []record.Part
	var repairs []record.Repaired
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, record.Part{Type: record.PartText, Text: b.Text})
		case "thinking":
			if b.Signature == "" {
				c.Notes.repair("unsigned thinking dropped")
				continue
			}
			parts = append(parts, record.Part{Type: record.PartThinking, Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			parts = append(parts, record.Part{Type: record.PartRedacted, Data: b.Data})
		case "tool_use", "server_tool_use":
			a, rep := claudeInput(b.Input)
			if rep != nil {
				rep.What = fmt.Sprintf("tool call %s (%s): %s", b.ID, b.Name, rep.What)
				repairs = append(repairs, *rep)
				c.Notes.repair("non-object tool input replaced by {}")
			}
			parts = append(parts, record.Part{Type: record.PartToolCall, CallID: b.ID, Name: b.Name, Args: a})
		default:
			c.Notes.skip("assistant block " + b.Type)
		}
	}
	return parts, repairs
}

// claudeInput reads a tool_use input; Claude Code keeps one it could not parse as
// {"__unparsedToolInput": {"raw": ...}}.
func claudeInput(raw json.RawMessage) (json.RawMessage, *record.Repaired) {
	var unparsed struct {
		U *struct {
			Raw string `json:"raw"`
		} `json:"__unparsedToolInput"`
	}
	if json.Unmarshal(raw, &unparsed) == nil && unparsed.U != nil {
		orig, _ := json.Marshal(unparsed.U.Raw)
		return json.RawMessage(`{}`), &record.Repaired{What: "its input was not a JSON object: replaced by {}", Original: orig}
	}
	return args(raw)
}

func claudeUser(content json.RawMessage, c *Conversation) []Item {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return userText(s, c)
	}
	var blocks []claudeBlock
	if err := json.Unmarshal(content, &blocks); err != nil {
		c.Notes.skip("unreadable user content")
		return nil
	}
	var items []Item
	var results []Result
	var texts []string
	for _, b := range blocks {
		switch b.Type {
		case "tool_result":
			results = append(results, Result{CallID: b.ToolUseID, Content: textOf(b.Content), IsError: b.IsError})
		case "text":
			texts = append(texts, b.Text)
		default:
			texts = append(texts, "["+b.Type+" content not imported]")
			c.Notes.skip("user block " + b.Type)
		}
	}
	if len(results) > 0 {
		items = append(items, Item{Kind: Results, Results: results})
	}
	for _, t := range texts {
		items = append(items, userText(t, c)...)
	}
	return items
}

// userText sorts what a user line says: the person's words, an interruption marker Claude Code
// wrote (kept as the note the model saw), or a local command's echo (skipped: the model never saw
// it).
func userText(s string, c *Conversation) []Item {
	t := strings.TrimSpace(s)
	switch {
	case t == "":
		return nil
	case strings.HasPrefix(t, "[Request interrupted by user"):
		return []Item{{Kind: Note, Text: t}}
	case strings.HasPrefix(t, "<command-name>"), strings.HasPrefix(t, "<local-command-stdout>"), strings.HasPrefix(t, "<local-command-stderr>"), strings.HasPrefix(t, "<command-message>"):
		c.Notes.skip("local command")
		return nil
	}
	return []Item{{Kind: Prompt, Text: s}}
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
