package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// capture saves the pane's screen as docs/screens/live-<name>.txt when REIN_SCREENSHOTS names the
// directory to write to.
func (p *pane) capture(name string) {
	p.t.Helper()
	dir := os.Getenv("REIN_SCREENSHOTS")
	if dir == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, "live-"+name+".txt"), []byte(p.screen()), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// TestEndToEndApprovalDiffAndScope: in ask mode an edit waits with the diff it would make to the
// file as it is; Allow once runs it and the scrollback shows the edit as a diff; a command offers
// Allow for this conversation, which lets the same command run again unasked.
func TestEndToEndApprovalDiffAndScope(t *testing.T) {
	needTmux(t)
	bin := reinBin(t)
	_, ws, env := e2eSandbox(t) // notes.txt holds "hello\n"
	script := filepath.Join(filepath.Dir(ws), "script.json")
	bash := func(cmd string) map[string]any {
		return map[string]any{"tool_calls": []any{map[string]any{"name": "bash", "arguments": map[string]string{"command": cmd}}}}
	}
	b, _ := json.Marshal(map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"name": "edit_file", "arguments": map[string]string{"path": "notes.txt", "old": "hello\n", "new": "hello world\nsecond line\n"}}}},
		bash("echo same-cmd"),
		bash("echo same-cmd"),
		map[string]any{"text": "All done."},
	}})
	if err := os.WriteFile(script, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := startPane(t, ws, env, 100, 40, bin, "chat", "--provider", "sim", "--sim-delay", "1ms", "--sim-script", script, "--permission-mode", "ask")
	p.wait(10*time.Second, "Send a message", "ready")
	p.text("edit the notes")
	p.keys("Enter")
	p.wait(10*time.Second, "edit_file wants to edit a file", "a/notes.txt → b/notes.txt +2 -1", "│ -hello", "│ +hello world", "│ +second line",
		"Allow once    Allow for this conversation    Deny", "for this conversation: edit_file")
	p.capture("tui-approval-diff")
	p.keys("Tab")
	p.wait(5*time.Second, "❯ Allow once")
	p.keys("Enter")
	p.wait(10*time.Second, "✓ allowed edit_file", "bash wants to run a command", "$ echo same-cmd", "for this conversation: bash(echo same-cmd)")
	if got, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(got) != "hello world\nsecond line\n" {
		t.Fatalf("notes.txt after the edit: %q", got)
	}
	p.keys("Tab", "Right")
	p.wait(5*time.Second, "❯ Allow for this conversation")
	p.capture("tui-approval-scope")
	p.keys("Enter")
	scr := p.wait(10*time.Second, "✓ allowed bash, and for this conversation: bash(echo same-cmd)", "All done.", "ready")
	if strings.Count(scr, "bash wants to run") != 0 || strings.Count(scr, "▸ bash echo same-cmd ✓") != 2 {
		t.Fatalf("the second command did not run unasked:\n%s", scr)
	}
	// The edit's card in the scrollback is its diff.
	if !strings.Contains(scr, "▸ edit_file notes.txt ✓") || !strings.Contains(scr, "│ +hello world") {
		t.Fatalf("the edit is not drawn as a diff:\n%s", scr)
	}
	p.capture("tui-after")
	p.keys("C-c", "C-c")
	p.waitGone(10 * time.Second)
}
