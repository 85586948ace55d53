package tui

import (
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var updateScreens = flag.Bool("update-screens", false, "write the screen captures of docs/screens/ (tmux capture-pane)")

// richReply is a reply with a table and highlighted code, as models write them.
const richReply = "## Plan\n\n| file | lines |\n|---|---:|\n| a.go | 12 |\n| b.go | 7 |\n\n" +
	"```go\nfunc main() {\n\treturn 42 // answer\n}\n```\n\n- one\n- two with `code`\n"

// writeScript writes a simulator script of replies and returns its path.
func writeScript(t testing.TB, dir string, steps ...map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"steps": steps})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "script.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// escScreen is the pane with its colours, as escape sequences.
func (p *pane) escScreen() string {
	out, err := exec.Command("tmux", "-S", p.sock, "capture-pane", "-e", "-p", "-t", p.name).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// history is the pane's scrollback and screen, as text.
func (p *pane) history() string {
	out, err := exec.Command("tmux", "-S", p.sock, "capture-pane", "-p", "-S", "-", "-t", p.name).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// saveScreen writes a capture to docs/screens/ under -update-screens.
func saveScreen(t testing.TB, name, text string) {
	t.Helper()
	if !*updateScreens {
		return
	}
	dir := filepath.Join("..", "..", "docs", "screens")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEndToEndMarkdownAndScrollback: in a real terminal a reply's table is drawn with rules and
// its code coloured by token, and when the chat ends the conversation is left on the normal
// screen, in the terminal's scrollback.
func TestEndToEndMarkdownAndScrollback(t *testing.T) {
	needTmux(t)
	bin := reinBin(t)
	_, ws, env := e2eSandbox(t)
	script := writeScript(t, filepath.Dir(ws), map[string]any{"text": richReply})
	// A shell runs the chat and then says so, so the pane outlives the chat and its scrollback
	// can be read.
	p := startPane(t, ws, env, 90, 30, "sh", "-c", strings.Join(quoteAll([]string{bin, "chat", "--provider", "sim", "--sim-delay", "1ms", "--sim-script", script}), " ")+"; echo chat-ended; exec sleep 600")
	p.wait(20*time.Second, "Send a message", "ready")
	p.text("show me the plan")
	p.keys("Enter")
	scr := p.wait(20*time.Second, "› show me the plan", "lines", "┼", "func main() {", "ready")
	for _, want := range []string{"Plan", " a.go", "12", "• two with code"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the screen lacks %q:\n%s", want, scr)
		}
	}
	esc := p.escScreen()
	// The keyword and the number are coloured (the sixteen colours' codes, as tmux reports
	// them), and the comment is not drawn in the keyword's colour.
	if !strings.Contains(esc, "func") || !strings.Contains(esc, "\x1b[34m") || !strings.Contains(esc, "\x1b[35m") {
		t.Errorf("the code is not highlighted:\n%q", esc)
	}
	saveScreen(t, "chat-markdown.txt", scr)

	p.keys("C-c")
	p.wait(15*time.Second, "Ctrl-C again to quit")
	p.keys("C-c")
	p.wait(20*time.Second, "chat-ended")
	hist := p.history()
	at := strings.Index(hist, "chat-ended")
	for _, want := range []string{"› show me the plan", "┼", "func main() {", "rein chat --resume "} {
		if i := strings.LastIndex(hist, want); i < 0 || i > at {
			t.Errorf("after the chat ended, the terminal's scrollback lacks %q:\n%s", want, hist)
		}
	}
	saveScreen(t, "chat-after-exit.txt", hist[:at])
}

// TestEndToEndHistoryAndCompletion: a prompt sent in one run of the chat comes back with Up in
// the next run in the same workspace, Ctrl+R finds it, and Tab completes a slash command and an
// @-mention of a file git does not ignore.
func TestEndToEndHistoryAndCompletion(t *testing.T) {
	needTmux(t)
	bin := reinBin(t)
	home, ws, env := e2eSandbox(t)
	if err := os.WriteFile(filepath.Join(ws, "tables.md"), []byte("| a |\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	argv := []string{bin, "chat", "--provider", "sim", "--sim-delay", "1ms"}
	p := startPane(t, ws, env, 90, 24, argv...)
	p.wait(20*time.Second, "Send a message", "ready")
	p.text("remember this prompt")
	p.keys("Enter")
	p.wait(20*time.Second, "› remember this prompt", "rein simulator", "ready")
	p.keys("C-c", "C-c")
	p.waitGone(10 * time.Second)
	if _, err := os.Stat(filepath.Join(home, "history")); err != nil {
		t.Fatalf("no history kept under the state directory: %v", err)
	}

	p = startPane(t, ws, env, 90, 24, argv...)
	p.wait(20*time.Second, "Send a message", "ready")
	p.keys("Up")
	p.wait(15*time.Second, "› remember this prompt")
	p.keys("C-u") // clear the composer
	p.keys("C-r")
	p.text("this")
	p.wait(15*time.Second, `search "this"`, "› remember this prompt")
	p.keys("Enter")
	p.keys("C-u")
	p.text("/ev")
	p.keys("Tab")
	p.wait(15*time.Second, "› /evict")
	p.keys("C-u")
	p.text("read @tab")
	p.keys("Tab")
	scr := p.wait(15*time.Second, "› read @tables.md")
	saveScreen(t, "chat-completion.txt", scr)
	p.keys("C-c", "C-c")
	p.waitGone(10 * time.Second)
}

// TestEndToEndModelsAndUsage: /model lists the provider's known models with the one in use
// marked, /model <n> switches, and /usage shows the exchange's tokens and cost.
func TestEndToEndModelsAndUsage(t *testing.T) {
	needTmux(t)
	bin := reinBin(t)
	_, ws, env := e2eSandbox(t)
	p := startPane(t, ws, env, 100, 30, bin, "chat", "--provider", "sim", "--sim-delay", "1ms")
	p.wait(20*time.Second, "Send a message", "ready")
	p.text("hello")
	p.keys("Enter")
	p.wait(20*time.Second, "rein simulator", "ready", "$0.000")
	p.text("/model")
	p.keys("Enter")
	p.wait(15*time.Second, "● 1  sim-1", "2  sim-2", "/model <n> or /model <name>")
	p.text("/model 2")
	p.keys("Enter")
	p.wait(20*time.Second, "sim-2")
	p.text("/usage")
	p.keys("Enter")
	scr := p.wait(15*time.Second, "Usage", "1  hello", " in · ", " out · $0.000", "prices as of ")
	saveScreen(t, "chat-model-usage.txt", scr)
	p.keys("C-c", "C-c")
	p.waitGone(10 * time.Second)
}
