package tui

// The end-to-end test runs the real rein binary's `rein chat` in a pseudo-terminal (a tmux pane
// on a private socket) against the simulator, types into it, and reads the screen as tmux
// renders it. It never sleeps a fixed time: it polls the screen with a deadline.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	binOnce sync.Once
	binDir  string // removed after the run
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// reinBin builds the rein binary once per test run.
func reinBin(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			binErr = err
			return
		}
		if binDir, binErr = os.MkdirTemp("", "rein-tui-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "rein")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/rein")
		cmd.Dir = filepath.Dir(strings.TrimSpace(string(out)))
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/rein: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// pane is one tmux session running a command in a pseudo-terminal of a fixed size.
type pane struct {
	t    testing.TB
	sock string
	name string
}

// needTmux skips the test, saying why, under -short or without tmux; under CI (CI set) a missing
// tmux fails it instead: CI installs it, and a test skipped there proves nothing.
func needTmux(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: skipped with -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("end-to-end: needs tmux, and CI is set: install tmux (apt-get install tmux)")
		}
		t.Skip("end-to-end: needs tmux (apt-get install tmux)")
	}
}

func startPane(t testing.TB, dir string, env []string, w, h int, argv ...string) *pane {
	t.Helper()
	p := &pane{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock"), name: "chat"}
	args := []string{"-S", p.sock, "-f", "/dev/null", "new-session", "-d", "-s", p.name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-c", dir}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	args = append(args, strings.Join(quoteAll(argv), " "))
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", p.sock, "kill-server").Run() })
	return p
}

func quoteAll(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return out
}

// screen is the pane as rendered, or "" once the pane is gone.
func (p *pane) screen() string {
	out, err := exec.Command("tmux", "-S", p.sock, "capture-pane", "-p", "-t", p.name).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

func (p *pane) alive() bool {
	return exec.Command("tmux", "-S", p.sock, "has-session", "-t", p.name).Run() == nil
}

// wait polls the screen until it shows every one of subs.
func (p *pane) wait(timeout time.Duration, subs ...string) string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	var s string
	for time.Now().Before(deadline) {
		s = p.screen()
		ok := true
		for _, sub := range subs {
			ok = ok && strings.Contains(s, sub)
		}
		if ok {
			return s
		}
		time.Sleep(5 * time.Millisecond) // a polling interval, not a wait for something
	}
	p.t.Fatalf("the screen never showed %q:\n%s", subs, s)
	return ""
}

func (p *pane) keys(keys ...string) {
	p.t.Helper()
	if out, err := exec.Command("tmux", append([]string{"-S", p.sock, "send-keys", "-t", p.name}, keys...)...).CombinedOutput(); err != nil {
		p.t.Fatalf("send-keys %q: %v\n%s", keys, err, out)
	}
}

func (p *pane) text(s string) {
	p.t.Helper()
	if out, err := exec.Command("tmux", "-S", p.sock, "send-keys", "-t", p.name, "-l", s).CombinedOutput(); err != nil {
		p.t.Fatalf("send-keys -l: %v\n%s", err, out)
	}
}

// changed polls the screen until it differs from was, and returns it; or "" at the deadline.
func (p *pane) changed(was string, deadline time.Time) string {
	for time.Now().Before(deadline) {
		if s := p.screen(); s != was {
			return s
		}
		time.Sleep(5 * time.Millisecond) // a polling interval, not a wait for something
	}
	return ""
}

func (p *pane) waitGone(timeout time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !p.alive() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.t.Fatalf("rein chat did not exit:\n%s", p.screen())
}

// e2eSandbox is a state root and a workspace.
func e2eSandbox(t testing.TB) (home, ws string, env []string) {
	d := t.TempDir()
	home, ws = filepath.Join(d, "home"), filepath.Join(d, "ws")
	for _, dir := range []string{home, ws} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return home, ws, []string{"REIN_HOME=" + home, "TERM=xterm-256color", "NO_COLOR=", "HOME=" + d}
}

// slowScript is a simulator script: a tool call, then a reply streamed slowly enough to stop.
func slowScript(t testing.TB, dir string) string {
	words := strings.Repeat("streaming words arrive one by one until Stop ends them ", 40)
	script := map[string]any{"steps": []any{
		map[string]any{"text": "Let me look.", "tool_calls": []any{map[string]any{"name": "bash", "arguments": map[string]string{"command": "ls"}}}},
		map[string]any{"text": "Here is a long answer: " + words, "delay_ms": 40},
	}}
	b, _ := json.Marshal(script)
	path := filepath.Join(dir, "script.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEndToEndChatStopAndResume(t *testing.T) {
	needTmux(t)
	bin := reinBin(t)
	home, ws, env := e2eSandbox(t)
	script := slowScript(t, filepath.Dir(ws))

	p := startPane(t, ws, env, 100, 30, bin, "chat", "--provider", "sim", "--sim-delay", "1ms", "--sim-script", script)
	p.wait(10*time.Second, "Send a message", "ready")
	p.text("list the files here")
	p.keys("Enter")
	p.wait(10*time.Second, "› list the files here", "▸ bash ls ✓")
	p.wait(10*time.Second, "Here is a long answer", "working", "Esc stop")
	p.keys("Escape")
	scr := p.wait(10*time.Second, "⏹ stopped: the session is settled", "ready")
	if !strings.Contains(scr, "cut short by Stop") {
		t.Fatalf("the reply was not cut short by the Stop:\n%s", scr)
	}
	p.keys("C-c")
	p.wait(5*time.Second, "Ctrl-C again to quit")
	p.keys("C-c")
	p.waitGone(10 * time.Second)

	// The record is settled: admissible, ready for the next prompt, the exchange quiesced as
	// cancelled.
	id, record := onlySession(t, bin, home, ws)
	out, err := exec.Command(bin, "doctor", record).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "phase ready_for_user") {
		t.Fatalf("rein doctor: %v\n%s", err, out)
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"kind":"quiesced","payload":{"reason":"cancelled"}`) {
		t.Fatalf("no quiesced(cancelled) record:\n%s", data)
	}

	// Resume it: the scrollback is drawn again from the record, and it takes a new prompt.
	p2 := startPane(t, ws, env, 100, 30, bin, "chat", "--provider", "sim", "--sim-delay", "1ms", "--resume", id[:15])
	p2.wait(10*time.Second, "cut short by Stop", "⏹ stopped", "ready")
	// The start of it is above: page up, each time until the screen has moved, until it shows.
	for scr, deadline := p2.screen(), time.Now().Add(10*time.Second); !strings.Contains(scr, "▸ bash ls ✓"); {
		p2.keys("PageUp")
		if scr = p2.changed(scr, deadline); scr == "" {
			t.Fatalf("the resumed scrollback lacks the tool call:\n%s", p2.screen())
		}
	}
	p2.keys("C-l") // back to the bottom (an Escape followed at once by text reads as Alt+key)
	p2.wait(5*time.Second, "⏹ stopped")
	p2.text("hello again")
	p2.keys("Enter")
	p2.wait(10*time.Second, "› hello again", "rein simulator", "ready")
	p2.keys("C-c", "C-c")
	p2.waitGone(10 * time.Second)
}

// onlySession returns the workspace's one session's id and record path.
func onlySession(t testing.TB, bin, home, ws string) (id, path string) {
	t.Helper()
	cmd := exec.Command(bin, "sessions", "--json")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "REIN_HOME="+home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rein sessions: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one session, have:\n%s", out)
	}
	var s struct{ ID, Record string }
	if err := json.Unmarshal([]byte(lines[0]), &s); err != nil {
		t.Fatal(err)
	}
	return s.ID, s.Record
}

// TestStartupToPrompt measures the time from starting `rein chat` to its interactive prompt on
// the screen, as tmux renders it, beside the same measure for a shell that only prints the
// prompt's words (what the pane and the polling cost). REIN_TUI_STARTUP=N runs each N times.
func TestStartupToPrompt(t *testing.T) {
	needTmux(t)
	bin := reinBin(t)
	runs := 3
	if n := os.Getenv("REIN_TUI_STARTUP"); n != "" {
		fmt.Sscan(n, &runs)
	}
	measure := func(argv ...string) (p50, lo, hi time.Duration) {
		var ds []time.Duration
		for i := 0; i < runs; i++ {
			_, ws, env := e2eSandbox(t)
			start := time.Now()
			p := startPane(t, ws, env, 100, 30, argv...)
			p.wait(10*time.Second, "Send a message", "ready")
			ds = append(ds, time.Since(start))
			p.keys("C-c", "C-c")
			p.waitGone(10 * time.Second)
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2], ds[0], ds[len(ds)-1]
	}
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	chat, lo, hi := measure(bin, "chat", "--provider", "sim")
	base, blo, bhi := measure("sh", "-c", "echo Send a message ready; read x")
	t.Logf("rein chat start to prompt, %d runs: p50 %v (min %v, max %v); a shell printing the same words: p50 %v (min %v, max %v)",
		runs, r(chat), r(lo), r(hi), r(base), r(blo), r(bhi))
}

// TestEndToEndApprovalIsNotAnsweredByTyping is the case in a real terminal: in ask mode,
// a sentence typed while a bash call waits for approval — one that begins with "y" — does not
// run the command; Tab, Enter does.
func TestEndToEndApprovalIsNotAnsweredByTyping(t *testing.T) {
	needTmux(t)
	bin := reinBin(t)
	home, ws, env := e2eSandbox(t)
	script := filepath.Join(filepath.Dir(ws), "script.json")
	b, _ := json.Marshal(map[string]any{"steps": []any{
		map[string]any{"text": "I will mark it.", "tool_calls": []any{map[string]any{"name": "bash", "arguments": map[string]string{"command": "touch marker"}}}},
		map[string]any{"text": "Marked."},
	}})
	if err := os.WriteFile(script, b, 0o644); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(ws, "marker")

	p := startPane(t, ws, env, 100, 30, bin, "chat", "--provider", "sim", "--sim-delay", "1ms", "--sim-script", script, "--permission-mode", "ask")
	p.wait(10*time.Second, "Send a message", "ready")
	p.text("mark it")
	p.keys("Enter")
	p.wait(10*time.Second, "$ touch marker", "Tab to answer", "Tab answer · Esc stop")

	// Typed key by key (send-keys -l is keystrokes, not a paste), then sent as a message. The
	// chat's mutations run in order, so once the record holds the message, an answer the typing
	// had made would be in the record before it.
	const typed = "yes, but tell me first why"
	p.text(typed)
	p.wait(5*time.Second, "tell me first why")
	p.keys("Enter")
	_, path := onlySession(t, bin, home, ws)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(strings.Join(recordOrder(t, path, "tell me first why"), ","), "typed"); {
		if time.Now().After(deadline) {
			t.Fatalf("the typed message never reached the record:\n%s", p.screen())
		}
		time.Sleep(5 * time.Millisecond) // a polling interval
	}
	if got := recordOrder(t, path, "tell me first why"); strings.Join(got, ",") != "approval asked,typed" {
		t.Fatalf("typing answered the approval: the record holds %q\n%s", got, p.screen())
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the command ran before it was approved (stat: %v):\n%s", err, p.screen())
	}
	scr := p.wait(5*time.Second, typed+" · waiting: steering at the next step")
	if !strings.Contains(scr, "$ touch marker") || strings.Contains(scr, "✓ allowed") {
		t.Fatalf("the approval is no longer shown:\n%s", scr)
	}

	// The explicit answer runs it.
	p.keys("Tab")
	p.wait(5*time.Second, "❯ Allow once", "Enter answer · Esc stop")
	p.keys("Enter")
	p.wait(10*time.Second, "✓ allowed bash", "▸ bash touch marker ✓")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
	p.wait(10*time.Second, "ready")
	p.keys("C-c", "C-c")
	p.waitGone(10 * time.Second)

	// The record says the same, in order: asked, the typed message, then the one answer.
	if got := recordOrder(t, path, typed); strings.Join(got, ",") != "approval asked,typed,approval allowed" {
		t.Fatalf("the record's order is %q, want [approval asked typed approval allowed]", got)
	}
}

// recordOrder lists a record's approvals (by state) and the submissions whose text contains
// typed ("typed"), in the record's order.
func recordOrder(t testing.TB, path, typed string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r struct {
			Kind    string
			Payload struct{ State, Text string }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			continue // a line being written
		}
		switch {
		case r.Kind == "approval":
			order = append(order, "approval "+r.Payload.State)
		case r.Kind == "submission" && r.Payload.Text != "" && strings.Contains(r.Payload.Text, typed):
			order = append(order, "typed")
		}
	}
	return order
}
