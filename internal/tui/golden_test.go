package tui

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/record"
)

var update = flag.Bool("update", false, "rewrite the golden screens in testdata/")

var sizes = []struct {
	name string
	w, h int
}{{"80x24", 80, 24}, {"120x40", 120, 40}}

// golden compares the screen, as plain text with trailing spaces trimmed, with
// testdata/<name>.<size>.golden.
func golden(t *testing.T, d *driver, name string) {
	t.Helper()
	for _, sz := range sizes {
		d.send(tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
		lines := strings.Split(d.screen(), "\n")
		if len(lines) != sz.h {
			t.Errorf("%s at %s: %d lines, want %d", name, sz.name, len(lines), sz.h)
		}
		for i, l := range lines {
			if w := len([]rune(l)); w > sz.w {
				t.Errorf("%s at %s: line %d is %d wide: %q", name, sz.name, i+1, w, l)
			}
			lines[i] = strings.TrimRight(l, " ")
		}
		got := strings.Join(lines, "\n") + "\n"
		path := filepath.Join("testdata", name+"."+sz.name+".golden")
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to write it)", err)
		}
		if got != string(want) {
			t.Errorf("%s at %s differs from %s (go test -update rewrites it):\n--- got\n%s--- want\n%s", name, sz.name, path, got, want)
		}
	}
}

func TestGoldenStart(t *testing.T) {
	d := newDriver(t, newFake(), Options{})
	d.until("capabilities", func() bool { return d.m.capsKnown })
	golden(t, d, "start")
}

func TestGoldenExchange(t *testing.T) {
	f := newFake()
	d, s := withConversation(t, f)
	f.push(
		s.rec(&record.UserPrompt{Turn: 4, Text: "explain the result in a list"}),
		s.rec(&record.AssistantMessage{Turn: 5, Parts: []record.Part{
			{Type: record.PartThinking, Text: "The listing has two files.\nBoth are text.", Signature: "sig"},
			{Type: record.PartText, Text: "## Result\n\n- **a.txt** holds the greeting\n- `b.txt` is empty\n\n```sh\ncat a.txt\n```\n\nSee [the docs](https://example.com/docs) for more."},
		}, StopReason: "end_turn", Usage: record.Usage{Input: 2400, Output: 80}}),
		s.rec(&record.Evicted{From: 1, To: 2, Note: "the listing: a.txt and b.txt, nothing else", By: record.ByModel}),
		s.rec(&record.ProviderError{Class: "overloaded", Status: 529, Message: "Overloaded"}),
		s.rec(&record.RetryScheduled{Attempt: 1, DelayMs: 1500, Class: "overloaded"}),
	)
	d.until("replayed", func() bool { return d.m.seq == s.seq })
	d.m.retryAt = d.now.Add(-1) // the countdown is over: the golden shows none
	golden(t, d, "exchange")
	d.press("ctrl+o")
	golden(t, d, "exchange-unfolded")
}

func TestGoldenStreaming(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	d.until("capabilities", func() bool { return d.m.capsKnown })
	sendFirst(t, d, "fix the failing test in ./parser")
	var s stream
	s.state.Submissions = []api.Submission{{ID: "m-op-2", Op: "op-2", State: api.Delivered, Text: "fix the failing test in ./parser"}}
	f.push(s.rec(started()), s.rec(&record.Submission{ID: "m-op-2", Op: "op-2", State: api.Accepted, Text: "fix the failing test in ./parser"}))
	s.working(true)
	s.state.Turn = 1
	f.push(s.rec(&record.UserPrompt{Turn: 1, Text: "fix the failing test in ./parser"}),
		s.rec(&record.ProviderError{Class: "rate_limited", Status: 429, Message: "rate limit exceeded"}),
		s.rec(&record.RetryScheduled{Attempt: 1, DelayMs: 3200, Class: "rate_limited"}),
		s.rec(&record.TurnStarted{Attempt: 2}),
		liveText("thinking", "The test fails on an empty input."),
		liveText("text", "The parser refuses an **empty** input; the test expects an empty list.\n\nI will"))
	s.state.Submissions = append(s.state.Submissions, api.Submission{ID: "m-op-3", Op: "op-9", State: api.Accepted, Text: "also run go vet"})
	f.push(s.rec(&record.Submission{ID: "m-op-3", Op: "op-9", State: api.Accepted, Text: "also run go vet"}),
		s.rec(&record.RetryScheduled{Attempt: 2, DelayMs: 2000, Class: "rate_limited"}))
	d.until("streamed", func() bool { return d.m.seq == s.seq && strings.Contains(d.screen(), "I will") })
	d.typ("and keep the old beha")
	golden(t, d, "streaming")
}

func TestGoldenContext(t *testing.T) {
	f := newFake()
	f.survey = api.Survey{Bytes: 18_400, SystemBytes: 1400, Rows: []api.Row{
		{From: 1, To: 3, Role: record.User, Kind: api.Residual, Label: "the listing: a.txt and b.txt, nothing else", Bytes: 260},
		{From: 4, To: 4, Role: record.User, Kind: api.Own, Label: "explain the result in a list", Bytes: 90},
		{From: 5, To: 5, Role: record.Assistant, Kind: api.Own, Label: "## Result", Bytes: 18_050},
	}}
	d, _ := withConversation(t, f)
	slashCmd(d, "/context")
	d.waitScreen("Context: 3 items")
	golden(t, d, "context")
}

func TestGoldenPicker(t *testing.T) {
	f := newFake()
	f.convs = []api.View{
		{ID: "20261129-200102-a1b2c3", Title: "list the files", Updated: "2026-11-29T20:01:09Z"},
		{ID: "20261128-093000-0f0f0f", Title: "fix the failing test in ./parser", Updated: "2026-11-28T09:41:00Z", State: api.State{InFlight: true}},
		{ID: "20261127-180000-777777", Title: "", Updated: "2026-11-27T18:00:00Z", Closed: true},
	}
	d := newDriver(t, f, Options{Pick: true})
	d.until("the picker", func() bool { return d.m.picker != nil })
	d.press("down")
	golden(t, d, "picker")
}

func TestGoldenHelp(t *testing.T) {
	d := newDriver(t, newFake(), Options{})
	slashCmd(d, "/help")
	d.waitScreen("Ctrl+O")
	golden(t, d, "help")
}

func TestGoldenApproval(t *testing.T) {
	f := newFake()
	f.caps = append(f.caps, api.CapApprovals)
	d, s := withConversation(t, f)
	askCall(f, s,
		api.Approval{CallID: "c2", Name: "bash", Args: `{"command":"go test ./parser/...\ngit commit -am 'parser: accept an empty input'","description":"test and commit"}`},
		api.Approval{CallID: "c3", Name: "write_file", Args: `{"path":"parser/empty_test.go","content":"package parser\n"}`},
	)
	d.waitScreen("1 more waiting")
	golden(t, d, "approval")
	d.press("tab", "right")
	golden(t, d, "approval-focused")
}
