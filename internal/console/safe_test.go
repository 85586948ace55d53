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

// TestSafe: what a terminal would act on rather than draw — escape sequences (colours aside, which
// are dropped), other control characters, C1 controls, bytes that are not UTF-8, the format
// characters that reverse text — is made visible; newlines, tabs and every character a person
// reads pass as they are, one Write or many.
func TestSafe(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, ünïcödé, 日本語, emoji 👩‍💻\tand a tab\n", "plain text, ünïcödé, 日本語, emoji 👩‍💻\tand a tab\n"},
		{"\x1b[31mred\x1b[0m and \x1b[1;32mbold green\x1b[m", "red and bold green"},
		{"clipboard \x1b]52;c;aGVsbG8=\x07 title \x1b]0;pwned\x1b\\", `clipboard \x1b]52;c;aGVsbG8=\x07 title \x1b]0;pwned\x1b\`},
		{"clear \x1b[2J\x1b[H home", `clear \x1b[2J\x1b[H home`},
		{"bell\x07 nul\x00 del\x7f", `bell\x07 nul\x00 del\x7f`},
		{"8-bit csi \u009b31m and raw \x9b byte", `8-bit csi \u009b31m and raw \x9b byte`},
		{"rm -rf ~ \u202e sl", `rm -rf ~ \u202e sl`},
		{"progress 10%\rprogress 90%\r\ndone\r\n", "progress 10%\nprogress 90%\ndone\n"},
	} {
		for _, pieces := range []int{1, 3} {
			var out bytes.Buffer
			w := Safe(&out)
			in := tc.in
			for i := range pieces {
				n := len(in) / (pieces - i)
				if i == pieces-1 {
					n = len(in)
				}
				if k, err := w.Write([]byte(in[:n])); err != nil || k != n {
					t.Fatalf("Write = %d, %v; want %d, nil", k, err, n)
				}
				in = in[n:]
			}
			if pieces == 1 && out.String() != tc.want {
				t.Errorf("Safe(%q) = %q, want %q", tc.in, out.String(), tc.want)
			}
			if bytes.ContainsAny(out.Bytes(), "\x1b\x07\x00\x7f\r") || strings.ContainsRune(out.String(), '\u009b') || strings.ContainsRune(out.String(), '\u202e') {
				t.Errorf("Safe(%q) in %d writes let a control through: %q", tc.in, pieces, out.String())
			}
		}
	}
}

// TestPrinterIsSafe: rein run's human output of a hostile exchange — the model's text and a
// command's output carrying escape sequences that would write the clipboard or clear the screen —
// reaches the terminal drawn, not obeyed; its JSON output carries the text exactly.
func TestPrinterIsSafe(t *testing.T) {
	hostile := "done \x1b]52;c;aGVsbG8=\x07\x1b[2J"
	for _, asJSON := range []bool{false, true} {
		s, err := session.Start(filepath.Join(t.TempDir(), "sessions", "ws"), session.Options{}, record.SessionStarted{Provider: "sim", Model: "m"})
		must(t, err)
		var out, errw bytes.Buffer
		p := NewPrinter(&out, &errw, asJSON)
		stop := p.Follow(s)
		next := s.Snapshot().Next()
		must(t, s.Append(&record.UserPrompt{Turn: next, Text: "go"}))
		s.Publish(session.Live{Kind: "text", Text: hostile})
		must(t, s.Append(&record.AssistantMessage{Turn: next + 1, Parts: []record.Part{
			{Type: record.PartText, Text: hostile},
			{Type: record.PartToolCall, CallID: "c1", Name: "bash", Args: json.RawMessage(`{"command":"printf '\u001b[2J'"}`)},
		}}))
		s.Publish(session.Live{Kind: "tool_start", Name: "bash", Text: `{"command":"printf '\u001b[2J'"}`})
		s.Publish(session.Live{Kind: "tool_output", CallID: "c1", Text: hostile + "\n"})
		must(t, s.Append(&record.ToolResults{Results: []record.ToolResult{{CallID: "c1", Outcome: record.OK, Content: hostile}}}))
		stop()
		must(t, s.Close())
		if asJSON {
			if !strings.Contains(out.String(), `done \u001b]52;c;aGVsbG8=\u0007\u001b[2J`) {
				t.Errorf("the JSON output does not carry the text exactly:\n%s", out.String())
			}
			continue
		}
		if bytes.ContainsAny(out.Bytes(), "\x1b\x07") || bytes.ContainsAny(errw.Bytes(), "\x1b\x07") {
			t.Errorf("an escape sequence reached the terminal:\n%q\n%q", out.String(), errw.String())
		}
		if !strings.Contains(out.String(), `\x1b]52`) {
			t.Errorf("the escape sequence is not shown:\n%s", out.String())
		}
	}
}
