package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reinhq/rein/internal/record"
)

// codexLine is one line of a Codex rollout (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl).
type codexLine struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// codexItem is a response_item payload (and an entry of a compaction's replacement history).
type codexItem struct {
	Type             string          `json:"type"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	Name             string          `json:"name"`
	Arguments        json.RawMessage `json:"arguments"`
	Input            json.RawMessage `json:"input"`
	CallID           string          `json:"call_id"`
	Output           json.RawMessage `json:"output"`
	Action           json.RawMessage `json:"action"`
	EncryptedContent string          `json:"encrypted_content"`
}

// ReadCodex reads a Codex rollout: session_meta, turn_context, response_items and compactions.
// The live branch is the last compaction's replacement history, then the items after it; with
// WithHistory the items a compaction replaced are kept as earlier items.
func ReadCodex(r io.Reader, opts Options) (*Conversation, error) {
	c := &Conversation{Origin: record.Origin{Kind: Codex}}
	var raw []codexItem // the live branch, as items
	err := eachLine(r, &c.Notes, func(n int, l *codexLine) {
		switch l.Type {
		case "session_meta":
			var m struct {
				ID         string `json:"id"`
				Cwd        string `json:"cwd"`
				CLIVersion string `json:"cli_version"`
			}
			if err := json.Unmarshal(l.Payload, &m); err != nil {
				c.Notes.malformed(n, "its session_meta does not read")
				return
			}
			if c.Origin.ID == "" {
				c.Origin.ID = m.ID
			}
			c.Cwd, c.Origin.Version = m.Cwd, m.CLIVersion
		case "turn_context":
			var t struct {
				Model string `json:"model"`
			}
			if json.Unmarshal(l.Payload, &t) == nil && t.Model != "" {
				c.Model = t.Model
			}
			c.Notes.skip(l.Type)
		case "response_item":
			var it codexItem
			if err := json.Unmarshal(l.Payload, &it); err != nil {
				c.Notes.malformed(n, "its response_item does not read: "+clip(err.Error()))
				return
			}
			raw = append(raw, it)
		case "compacted":
			var p struct {
				Message            string      `json:"message"`
				ReplacementHistory []codexItem `json:"replacement_history"`
			}
			if err := json.Unmarshal(l.Payload, &p); err != nil {
				c.Notes.malformed(n, "its compaction does not read: "+clip(err.Error()))
				return
			}
			c.Notes.repair("compaction followed (its replacement history is the context)")
			if opts.WithHistory {
				c.Earlier = append(c.Earlier, codexItems(raw, c)...)
			}
			raw = p.ReplacementHistory
			if len(raw) == 0 && p.Message != "" {
				raw = []codexItem{{Type: "message", Role: "user", Content: mustJSON(p.Message)}}
			}
		default:
			c.Notes.skip(l.Type)
		}
	})
	if err != nil {
		return nil, err
	}
	c.Items = codexItems(raw, c)
	if len(c.Items) == 0 {
		return nil, errors.New("the file holds no conversation rein can import: no message in its live history")
	}
	return c, nil
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// codexItems turns response items into items: consecutive assistant messages, reasoning and calls
// make one assistant message; outputs make one results item.
func codexItems(raw []codexItem, c *Conversation) []Item {
	var items []Item
	var cur *Item
	var res *Item
	flush := func() {
		if cur != nil {
			items = append(items, *cur)
			cur = nil
		}
		if res != nil {
			items = append(items, *res)
			res = nil
		}
	}
	assistant := func() *Item {
		if res != nil {
			flush()
		}
		if cur == nil {
			cur = &Item{Kind: Assistant, Model: c.Model}
		}
		return cur
	}
	for _, it := range raw {
		switch it.Type {
		case "message":
			text := textOf(it.Content)
			switch it.Role {
			case "assistant":
				if text != "" {
					a := assistant()
					a.Parts = append(a.Parts, record.Part{Type: record.PartText, Text: text})
				}
			case "user":
				flush()
				t := strings.TrimSpace(text)
				switch {
				case strings.HasPrefix(t, "<environment_context>"), strings.HasPrefix(t, "<user_instructions>"), strings.HasPrefix(t, "# AGENTS.md"), strings.HasPrefix(t, "<permissions"):
					c.Notes.repair("environment message dropped")
				case strings.HasPrefix(t, "[Codex's summary preamble") || strings.HasPrefix(t, "Another language model started"):
					items = append(items, Item{Kind: Note, Text: text})
				case strings.HasPrefix(t, "<turn_aborted>"):
					items = append(items, Item{Kind: Note, Text: text})
				case t != "":
					items = append(items, Item{Kind: Prompt, Text: text})
				}
			case "developer", "system":
				c.Notes.repair("developer message dropped")
			default:
				c.Notes.skip("message with role " + it.Role)
			}
		case "reasoning":
			c.Notes.repair("reasoning dropped (encrypted, or a summary)")
		case "function_call":
			var s string
			argText := string(it.Arguments)
			if json.Unmarshal(it.Arguments, &s) == nil {
				argText = s
			}
			a, rep := args(json.RawMessage(argText))
			call := record.Part{Type: record.PartToolCall, CallID: it.CallID, Name: it.Name, Args: a}
			ai := assistant()
			if rep != nil {
				rep.What = fmt.Sprintf("tool call %s (%s): %s", it.CallID, it.Name, rep.What)
				ai.Repairs = append(ai.Repairs, *rep)
				c.Notes.repair("non-object tool input replaced by {}")
			}
			ai.Parts = append(ai.Parts, call)
		case "custom_tool_call":
			var s string
			if json.Unmarshal(it.Input, &s) != nil {
				s = string(it.Input)
			}
			ai := assistant()
			ai.Parts = append(ai.Parts, record.Part{Type: record.PartToolCall, CallID: it.CallID, Name: it.Name, Args: customArgs(s)})
			ai.Repairs = append(ai.Repairs, record.Repaired{What: fmt.Sprintf("tool call %s (%s): its free-form input was wrapped as {\"input\": text}", it.CallID, it.Name), Original: mustJSON(s)})
			c.Notes.repair("free-form tool input wrapped as {\"input\": …}")
		case "local_shell_call":
			a := it.Action
			if len(a) == 0 || !json.Valid(a) || !strings.HasPrefix(strings.TrimSpace(string(a)), "{") {
				a = json.RawMessage(`{}`)
			}
			ai := assistant()
			ai.Parts = append(ai.Parts, record.Part{Type: record.PartToolCall, CallID: it.CallID, Name: "local_shell", Args: a})
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			if cur != nil {
				items = append(items, *cur)
				cur = nil
			}
			if res == nil {
				res = &Item{Kind: Results}
			}
			content, isErr := codexOutput(it.Output)
			res.Results = append(res.Results, Result{CallID: it.CallID, Content: content, IsError: isErr})
		default:
			c.Notes.skip("response item " + it.Type)
		}
	}
	flush()
	return items
}

// codexOutput reads an output: a string, or {"content"|"output": string, "success": bool}, or
// content items.
func codexOutput(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, false
	}
	var o struct {
		Content json.RawMessage `json:"content"`
		Output  json.RawMessage `json:"output"`
		Success *bool           `json:"success"`
	}
	if json.Unmarshal(raw, &o) == nil && (o.Content != nil || o.Output != nil) {
		body := o.Content
		if body == nil {
			body = o.Output
		}
		return textOf(body), o.Success != nil && !*o.Success
	}
	return textOf(raw), false
}
