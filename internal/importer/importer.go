// Package importer brings a Claude Code or Codex session into rein. It reads the foreign file
// leniently — every line it cannot read is counted and named, never fatal unless the file holds no
// conversation at all — into a neutral conversation, then writes a rein session through the
// normal strict path: each record judged by the fold as a live one would be, every repair recorded
// as a repaired event keeping the original, and nothing harness-authored recorded in the person's
// voice.
package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/reinhq/rein/internal/record"
)

// Sources.
const (
	ClaudeCode = "claude-code"
	Codex      = "codex"
)

// Conversation is a foreign session as read: its origin, its live branch as neutral items, the
// items before its last compaction (when asked for), and what reading it noticed.
type Conversation struct {
	Origin record.Origin
	Cwd    string
	Model  string
	Items  []Item
	// Earlier are the items a compaction replaced, oldest first (ReadOptions.WithHistory).
	Earlier []Item
	Notes   Notes
}

// Kind is what an item is.
type Kind int

// Item kinds.
const (
	Prompt    Kind = iota + 1 // the person's words
	Assistant                 // a model's message: text, thinking, tool calls
	Results                   // tool results
	Note                      // harness-authored text the model saw (a compaction summary, an interruption marker)
)

// Item is one message of the foreign session, in rein's vocabulary.
type Item struct {
	Kind    Kind
	Text    string        // Prompt, Note
	Parts   []record.Part // Assistant
	Model   string        // Assistant
	Results []Result      // Results
	// Repairs made while reading this item (a custom tool's free text wrapped, say).
	Repairs []record.Repaired
}

// Result is one tool result as the source recorded it.
type Result struct {
	CallID  string
	Content string
	IsError bool
}

// Notes is what reading noticed: lines skipped by type, malformed lines by number, repairs by
// kind.
type Notes struct {
	Lines     int
	Skipped   map[string]int
	Malformed []string
	Repairs   map[string]int
}

func (n *Notes) skip(kind string) {
	if n.Skipped == nil {
		n.Skipped = map[string]int{}
	}
	n.Skipped[kind]++
}

func (n *Notes) malformed(line int, why string) {
	if len(n.Malformed) < 20 {
		n.Malformed = append(n.Malformed, fmt.Sprintf("line %d: %s", line, why))
	} else if len(n.Malformed) == 20 {
		n.Malformed = append(n.Malformed, "… (more)")
	}
}

func (n *Notes) repair(kind string) {
	if n.Repairs == nil {
		n.Repairs = map[string]int{}
	}
	n.Repairs[kind]++
}

// Options says how to read.
type Options struct {
	// WithHistory also brings the turns a compaction replaced, as an evicted span.
	WithHistory bool
}

// Report is what an import did, for the person.
type Report struct {
	Session string
	Turns   int
	Calls   int
	Notes   Notes
}

func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "imported as session %s: %d turns, %d tool calls", r.Session, r.Turns, r.Calls)
	if len(r.Notes.Repairs) > 0 {
		fmt.Fprintf(&b, "\nrepairs: %s", counts(r.Notes.Repairs))
	}
	if len(r.Notes.Skipped) > 0 {
		fmt.Fprintf(&b, "\nskipped lines: %s", counts(r.Notes.Skipped))
	}
	if len(r.Notes.Malformed) > 0 {
		fmt.Fprintf(&b, "\nmalformed lines (left out): %s", strings.Join(r.Notes.Malformed, "; "))
	}
	return b.String()
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// textOf reads a content value that is a string, or an array of blocks with text.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Text != "" {
				parts = append(parts, b.Text)
			} else if b.Type != "" && b.Type != "text" && b.Type != "input_text" && b.Type != "output_text" {
				parts = append(parts, "["+b.Type+" content not imported]")
			}
		}
		return strings.Join(parts, "\n")
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// args turns a tool input as the source stored it into a JSON object, saying what it repaired.
func args(raw json.RawMessage) (json.RawMessage, *record.Repaired) {
	if strings.HasPrefix(strings.TrimSpace(string(raw)), "{") && json.Valid(raw) {
		return raw, nil
	}
	orig, _ := json.Marshal(string(raw))
	if json.Valid(raw) {
		orig = raw
	}
	return json.RawMessage(`{}`), &record.Repaired{What: "its arguments were not a JSON object: replaced by {}", Original: orig}
}

// customArgs wraps a free-form tool input (a custom tool's text) as the object every wire takes.
func customArgs(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"input": text})
	return b
}

// eachLine reads r as JSON lines leniently: each non-blank line that decodes into a T is handed
// to fn with its line number; one that does not, or one past maxLine, is counted as malformed.
// notes.Lines is set to the lines read. Only a read error ends it with an error.
func eachLine[T any](r io.Reader, notes *Notes, fn func(n int, v *T)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	n := 0
	for sc.Scan() {
		n++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		v := new(T)
		if err := json.Unmarshal(raw, v); err != nil {
			notes.malformed(n, "not a JSON object: "+clip(err.Error()))
			continue
		}
		fn(n, v)
	}
	notes.Lines = n
	if err := sc.Err(); err != nil {
		if !errors.Is(err, bufio.ErrTooLong) {
			return err
		}
		notes.malformed(n+1, fmt.Sprintf("longer than %d MiB; it and the rest of the file were not read", maxLine>>20))
	}
	return nil
}
