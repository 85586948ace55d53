package codex

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/external"
)

// The app-server's notifications rein reads (protocol v2, Codex 0.169). schema_test.go checks
// each field read here against the schema the installed Codex generates.
const (
	noteTurnStarted    = "turn/started"
	noteTurnCompleted  = "turn/completed"
	noteItemStarted    = "item/started"
	noteItemCompleted  = "item/completed"
	noteMessageDelta   = "item/agentMessage/delta"
	noteError          = "error"
	noteServerResolved = "serverRequest/resolved"
)

// The turn statuses of turn/completed.
const (
	turnCompleted   = "completed"
	turnInterrupted = "interrupted"
	turnFailed      = "failed"
)

// turnNote is the params of turn/started and turn/completed.
type turnNote struct {
	ThreadID string `json:"threadId"`
	Turn     struct {
		ID     string     `json:"id"`
		Status string     `json:"status"`
		Error  *turnError `json:"error"`
	} `json:"turn"`
}

// turnError is Codex's TurnError: what went wrong, in its words.
type turnError struct {
	Message           string          `json:"message"`
	AdditionalDetails *string         `json:"additionalDetails"`
	CodexErrorInfo    json.RawMessage `json:"codexErrorInfo"`
}

func (e *turnError) String() string {
	if e == nil {
		return ""
	}
	s := e.Message
	if e.AdditionalDetails != nil && *e.AdditionalDetails != "" {
		s += ": " + *e.AdditionalDetails
	}
	return s
}

// itemNote is the params of item/started and item/completed.
type itemNote struct {
	ThreadID string          `json:"threadId"`
	TurnID   string          `json:"turnId"`
	Item     json.RawMessage `json:"item"`
}

// threadItem is the part of Codex's ThreadItem rein reads; the item itself travels in Item.Raw.
type threadItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	Text             string          `json:"text"`             // agentMessage, plan
	Summary          []string        `json:"summary"`          // reasoning
	Content          json.RawMessage `json:"content"`          // reasoning: strings; userMessage: inputs
	Command          string          `json:"command"`          // commandExecution
	Status           string          `json:"status"`           // commandExecution, fileChange, tool calls
	AggregatedOutput *string         `json:"aggregatedOutput"` // commandExecution
	ExitCode         *int            `json:"exitCode"`         // commandExecution
	Changes          []struct {      // fileChange
		Path string `json:"path"`
		Diff string `json:"diff"`
		Kind struct {
			Type string `json:"type"`
		} `json:"kind"`
	} `json:"changes"`
	Server string `json:"server"` // mcpToolCall
	Tool   string `json:"tool"`   // mcpToolCall, dynamicToolCall
	Query  string `json:"query"`  // webSearch
}

// errorNote is the params of the error notification: an error of the turn's, which Codex may be
// about to retry.
type errorNote struct {
	ThreadID  string    `json:"threadId"`
	TurnID    string    `json:"turnId"`
	Error     turnError `json:"error"`
	WillRetry bool      `json:"willRetry"`
}

// deltaNote is the params of item/agentMessage/delta.
type deltaNote struct {
	TurnID string `json:"turnId"`
	ItemID string `json:"itemId"`
	Delta  string `json:"delta"`
}

// tracker follows one turn's notifications and says, as a person reads them, what the program
// did. It is pure: it neither reads nor writes the program, so the decoder's fuzz target drives it.
type tracker struct {
	thread string
	turn   string // the turn's id, once turn/start's response or turn/started has said it
	// started is set once turn/started arrived: Codex refuses an interrupt before it.
	started bool
	// done is set by turn/completed, with the turn's status and error.
	done   bool
	status string
	err    *turnError

	reply   string                      // the text of the last agent message completed
	partial map[string]*strings.Builder // agent messages begun and not completed, by item id
	order   []string                    // their ids, in the order they began
	files   map[string]string           // file changes begun, said, by item id (for approvals)
}

// note takes one notification and returns the items it makes. Notifications of another thread or
// turn, and those rein does not read, make none. A notification whose params do not decode is an
// error, said in words a person can pass on.
func (t *tracker) note(m message) ([]external.Item, error) {
	switch m.Method {
	case noteTurnStarted, noteTurnCompleted:
		var n turnNote
		if err := json.Unmarshal(m.Params, &n); err != nil {
			return nil, fmt.Errorf("read %s: %w", m.Method, err)
		}
		if n.ThreadID != t.thread || (t.turn != "" && n.Turn.ID != t.turn) {
			return nil, nil
		}
		t.turn = n.Turn.ID
		if m.Method == noteTurnStarted {
			t.started = true
			return nil, nil
		}
		t.done, t.status, t.err = true, n.Turn.Status, n.Turn.Error
		return t.unfinished(), nil
	case noteItemStarted, noteItemCompleted:
		var n itemNote
		if err := json.Unmarshal(m.Params, &n); err != nil {
			return nil, fmt.Errorf("read %s: %w", m.Method, err)
		}
		if !t.mine(n.ThreadID, n.TurnID) {
			return nil, nil
		}
		var it threadItem
		if err := json.Unmarshal(n.Item, &it); err != nil {
			return nil, fmt.Errorf("read %s: item: %w", m.Method, err)
		}
		if m.Method == noteItemStarted {
			return t.begun(it, n.Item), nil
		}
		return t.completed(it, n.Item), nil
	case noteMessageDelta:
		var n deltaNote
		if err := json.Unmarshal(m.Params, &n); err != nil {
			return nil, fmt.Errorf("read %s: %w", m.Method, err)
		}
		if t.turn != "" && n.TurnID != t.turn {
			return nil, nil
		}
		t.part(n.ItemID).WriteString(n.Delta)
		return nil, nil
	case noteError:
		var n errorNote
		if err := json.Unmarshal(m.Params, &n); err != nil {
			return nil, fmt.Errorf("read %s: %w", m.Method, err)
		}
		if !t.mine(n.ThreadID, n.TurnID) {
			return nil, nil
		}
		kind := external.ItemError
		if n.WillRetry {
			kind = external.ItemRetry
		}
		return []external.Item{{Kind: kind, Text: n.Error.String(), Raw: m.Params}}, nil
	}
	return nil, nil
}

// mine reports whether a notification of thread and turn belongs to the turn followed.
func (t *tracker) mine(thread, turn string) bool {
	return thread == t.thread && (t.turn == "" || turn == t.turn)
}

func (t *tracker) part(id string) *strings.Builder {
	if t.partial == nil {
		t.partial = make(map[string]*strings.Builder)
	}
	b := t.partial[id]
	if b == nil {
		b = new(strings.Builder)
		t.partial[id] = b
		t.order = append(t.order, id)
	}
	return b
}

// begun says what an item's start makes: a command or a tool call under way. Messages and
// reasoning are said once complete.
func (t *tracker) begun(it threadItem, raw json.RawMessage) []external.Item {
	switch it.Type {
	case "agentMessage":
		t.part(it.ID)
	case "commandExecution":
		return []external.Item{{ID: it.ID, Kind: external.ItemCommand, Text: it.Command, Status: "started", Raw: raw}}
	case "fileChange":
		if t.files == nil {
			t.files = make(map[string]string)
		}
		t.files[it.ID] = changes(it)
		return []external.Item{{ID: it.ID, Kind: external.ItemFileChange, Text: changes(it), Status: "started", Raw: raw}}
	case "mcpToolCall", "dynamicToolCall", "webSearch", "imageView", "collabAgentToolCall", "imageGeneration":
		return []external.Item{{ID: it.ID, Kind: external.ItemToolCall, Name: toolName(it), Text: it.Query, Status: "started", Raw: raw}}
	}
	return nil
}

// completed says what a completed item makes.
func (t *tracker) completed(it threadItem, raw json.RawMessage) []external.Item {
	switch it.Type {
	case "userMessage", "hookPrompt", "contextCompaction", "enteredReviewMode", "exitedReviewMode", "sleep":
		return nil // rein keeps the prompt itself; the rest is Codex's housekeeping
	case "agentMessage":
		if _, ok := t.partial[it.ID]; ok {
			delete(t.partial, it.ID)
		}
		t.reply = it.Text
		return []external.Item{{ID: it.ID, Kind: external.ItemText, Text: it.Text, Raw: raw}}
	case "reasoning":
		text := strings.Join(it.Summary, "\n")
		var content []string
		if json.Unmarshal(it.Content, &content) == nil && len(content) > 0 {
			text = strings.TrimSpace(text + "\n" + strings.Join(content, "\n"))
		}
		if text == "" {
			return nil // encrypted reasoning only: nothing a person can read
		}
		return []external.Item{{ID: it.ID, Kind: external.ItemThinking, Text: text, Raw: raw}}
	case "plan":
		return []external.Item{{ID: it.ID, Kind: external.ItemText, Name: "plan", Text: it.Text, Raw: raw}}
	case "commandExecution":
		items := []external.Item{{ID: it.ID, Kind: external.ItemCommand, Text: it.Command, Status: callStatus(it.Status), Raw: raw}}
		if it.AggregatedOutput != nil || it.ExitCode != nil {
			out := ""
			if it.AggregatedOutput != nil {
				out = *it.AggregatedOutput
			}
			if it.ExitCode != nil && *it.ExitCode != 0 {
				out = strings.TrimSuffix(out, "\n") + fmt.Sprintf("\n(exit status %d)", *it.ExitCode)
			}
			items = append(items, external.Item{ID: it.ID, Kind: external.ItemToolResult, Text: out, Status: callStatus(it.Status)})
		}
		return items
	case "fileChange":
		return []external.Item{{ID: it.ID, Kind: external.ItemFileChange, Text: changes(it), Status: callStatus(it.Status), Raw: raw}}
	}
	return []external.Item{{ID: it.ID, Kind: external.ItemToolCall, Name: toolName(it), Text: it.Query, Status: callStatus(it.Status), Raw: raw}}
}

// unfinished says, at the turn's end, the agent messages that began and never completed (a Stop
// mid-stream): their text so far, marked incomplete.
func (t *tracker) unfinished() []external.Item {
	var items []external.Item
	for _, id := range t.order {
		if b, ok := t.partial[id]; ok && b.Len() > 0 {
			items = append(items, external.Item{ID: id, Kind: external.ItemText, Text: b.String(), Status: "incomplete"})
		}
	}
	t.partial, t.order = nil, nil
	return items
}

// callStatus names Codex's item status in rein's words (started, completed, failed, declined).
func callStatus(s string) string {
	switch s {
	case "inProgress":
		return "started"
	case "":
		return "completed"
	}
	return s
}

func toolName(it threadItem) string {
	switch {
	case it.Server != "" && it.Tool != "":
		return it.Server + "." + it.Tool
	case it.Tool != "":
		return it.Tool
	}
	return it.Type
}

// changes says a file change as a person reads it: each path with what happens to it.
func changes(it threadItem) string {
	var b strings.Builder
	for i, c := range it.Changes {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Kind.Type + " " + c.Path)
	}
	return b.String()
}
