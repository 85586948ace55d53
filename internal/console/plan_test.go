package console

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// The printer shows the plan each time a todo call sets it: a checklist under the call's result,
// or a {"type":"plan"} line; a refused call shows nothing new.
func TestPrinterShowsThePlan(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		s, err := session.Start(filepath.Join(t.TempDir(), "sessions", "ws"), session.Options{}, record.SessionStarted{Provider: "sim", Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		var out, errw bytes.Buffer
		p := NewPrinter(&out, &errw, asJSON)
		stop := p.Follow(s)
		next := s.Snapshot().Next()
		must(t, s.Append(&record.UserPrompt{Turn: next, Text: "plan it"}))
		call := func(turn int64, id, args string, o record.Outcome) {
			must(t, s.Append(&record.AssistantMessage{Turn: turn, StopReason: "tool_use", Parts: []record.Part{
				{Type: record.PartToolCall, CallID: id, Name: "todo", Args: json.RawMessage(args)},
			}}))
			must(t, s.Append(&record.ToolResults{Results: []record.ToolResult{{CallID: id, Outcome: o, IsError: o != record.OK, Content: "set"}}}))
		}
		call(next+1, "c1", `{"items":[{"content":"Read","status":"in_progress","active_form":"Reading"},{"content":"Fix","status":"pending"}]}`, record.OK)
		call(next+2, "c2", `{"items":[{"content":"Nope","status":"pending"}]}`, record.Failed)
		call(next+3, "c3", `{"items":[{"content":"Read","status":"completed"},{"content":"Fix","status":"in_progress"}]}`, record.OK)
		stop()
		if !asJSON {
			got := out.String()
			want := "  plan:\n    [>] Read (Reading)\n    [ ] Fix\n"
			if !strings.Contains(got, want) || !strings.Contains(got, "  plan:\n    [x] Read\n    [>] Fix\n") || strings.Contains(got, "Nope") {
				t.Errorf("stdout:\n%s", got)
			}
			if strings.Count(got, "plan:") != 2 {
				t.Errorf("want the plan printed twice:\n%s", got)
			}
		} else {
			var plans []string
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				if strings.HasPrefix(l, `{"type":"plan"`) {
					plans = append(plans, l)
				}
			}
			want := []string{
				`{"type":"plan","items":[{"content":"Read","status":"in_progress","active_form":"Reading"},{"content":"Fix","status":"pending"}]}`,
				`{"type":"plan","items":[{"content":"Read","status":"completed"},{"content":"Fix","status":"in_progress"}]}`,
			}
			if strings.Join(plans, "\n") != strings.Join(want, "\n") {
				t.Errorf("plan lines:\n%s\nwant\n%s", strings.Join(plans, "\n"), strings.Join(want, "\n"))
			}
		}
		must(t, s.Close())
	}
}
