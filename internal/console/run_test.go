package console

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// The printer follows a real session: streamed text as it comes, a tool call as one line, its
// result as a preview without the TURN trailer, what the harness did on the error stream; in JSON,
// one object a line, "type" first, each record as recorded.
func TestPrinterFollowsASession(t *testing.T) {
	for _, asJSON := range []bool{false, true} {
		s, err := session.Start(filepath.Join(t.TempDir(), "sessions", "ws"), session.Options{}, record.SessionStarted{Provider: "sim", Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		var out, errw bytes.Buffer
		p := NewPrinter(&out, &errw, asJSON)
		p.Session(s)
		stop := p.Follow(s)
		next := s.Snapshot().Next()
		must(t, s.Append(&record.UserPrompt{Turn: next, Text: "list the files"}))
		s.Publish(session.Live{Kind: "text", Text: "Listing"})
		must(t, s.Append(&record.AssistantMessage{Turn: next + 1, Parts: []record.Part{
			{Type: record.PartText, Text: "Listing"},
			{Type: record.PartToolCall, CallID: "c1", Name: "bash", Args: json.RawMessage(`{"command":"ls -la"}`)},
		}}))
		s.Publish(session.Live{Kind: "tool_start", Name: "bash", Text: `{"command":"ls -la"}`})
		must(t, s.Append(&record.ToolResults{Results: []record.ToolResult{{CallID: "c1", Outcome: record.OK,
			Content: fold.WithTrailer("a\nb\nc\nd\ne", next+1)}}}))
		must(t, s.Append(&record.RetryScheduled{Attempt: 1, DelayMs: 1500, Class: "rate_limited"}))
		stop()
		if !asJSON {
			want := "Listing\n⏺ bash(ls -la)\n  ⎿ a\n    b\n    c\n    … 2 more lines\n"
			if out.String() != want {
				t.Errorf("stdout\n got %q\nwant %q", out.String(), want)
			}
			if e := errw.String(); !strings.Contains(e, "rein: session "+s.ID()) || !strings.Contains(e, "rein: retrying in 1.5s (attempt 2)") {
				t.Errorf("stderr: %q", e)
			}
		} else {
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			kinds := []string{}
			for _, l := range lines {
				if !strings.HasPrefix(l, `{"type":`) {
					t.Errorf("a JSON line does not start with its type: %s", l)
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("not JSON: %s", l)
				}
				if k, ok := m["kind"].(string); ok {
					kinds = append(kinds, k)
				} else {
					kinds = append(kinds, m["type"].(string))
				}
			}
			want := "session user_prompt text assistant_message tool_results retry_scheduled"
			if got := strings.Join(kinds, " "); got != want {
				t.Errorf("JSON lines: %s\nwant %s", got, want)
			}
		}
		must(t, s.Close())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
