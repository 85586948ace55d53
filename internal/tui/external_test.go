package tui

import (
	"encoding/json"
	"testing"

	"github.com/reinhq/rein/internal/record"
)

// A conversation run by Claude Code shows what the program did, and its reply as an import.
func TestExternalItemsShowInTheScrollback(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	sendFirst(t, d, "go")
	var s stream
	f.push(s.rec(started()),
		s.rec(&record.Backend{Name: "claude"}),
		s.rec(&record.UserPrompt{Turn: 1, Text: "go"}),
		s.rec(&record.ExternalSession{Program: "claude", ID: "cc-session-1", Version: "2.1.328"}),
		s.rec(&record.ExternalItem{Item: "tool_call", ID: "t1", Name: "Bash", Text: "ls -la", Status: "started", Raw: json.RawMessage(`{"command":"ls -la"}`)}),
		s.rec(&record.ExternalItem{Item: "tool_result", ID: "t1", Text: "a.txt", Status: "completed"}),
		s.rec(&record.ExternalItem{Item: "retry", Text: "the provider answered 429 rate_limit; retry 1 of 10 in 5.0s"}),
		s.rec(&record.Import{Turn: 2, Source: "claude", External: "cc-session-1", Message: record.Message{Role: record.Assistant, Parts: []record.Part{{Type: record.PartText, Text: "One file, a.txt."}}}}))
	d.waitScreen("this conversation runs in claude")
	d.waitScreen("claude 2.1.328 · session cc-session-1")
	d.waitScreen("⏺ Bash ls -la")
	d.waitScreen("⎿ completed a.txt")
	d.waitScreen("retry: the provider answered 429")
	d.waitScreen("One file, a.txt.")
}
