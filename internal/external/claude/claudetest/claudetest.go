// Package claudetest finds the real Claude Code for tests and gives it a throwaway home pointed at
// rein's simulator.
package claudetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/external/claude"
	"github.com/reinhq/rein/internal/procs"
)

// Find returns the claude executable tests run: $REIN_CLAUDE, else the one installed under
// /tmp/peers, else claude on PATH. Without one the test is skipped, saying why; under CI with
// REIN_CLAUDE set, an executable that is missing or of an unknown version fails the test.
func Find(t testing.TB) string {
	t.Helper()
	path := os.Getenv("REIN_CLAUDE")
	set := path != ""
	if !set {
		if p := "/tmp/peers/node_modules/.bin/claude"; exists(p) {
			path = p
		} else if p, err := exec.LookPath("claude"); err == nil {
			path = p
		}
	}
	if path == "" {
		t.Skip("Claude Code is not installed: set REIN_CLAUDE to its claude executable (npm install @anthropic-ai/claude-code@" + claude.Known + ")")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := claude.New(claude.Options{Path: path}).Check(ctx); err != nil {
		if set && os.Getenv("CI") != "" {
			t.Fatalf("REIN_CLAUDE=%s: %v", path, err)
		}
		t.Skipf("the Claude Code found is not usable: %v", err)
	}
	return path
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Env is the environment of a Claude Code run against the simulator at simURL with a throwaway
// home: no key of the person's, no update check, no traffic but to the simulator.
func Env(t testing.TB, simURL string) []string {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	return []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"ANTHROPIC_BASE_URL=" + simURL,
		"ANTHROPIC_API_KEY=sim-key",
		"IS_SANDBOX=1",
		"MAX_THINKING_TOKENS=0",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
}

// Watcher keeps every process of Claude Code's it has seen while it ran (a claude the test process
// started, and its descendants), so a test can prove afterwards that none is left — the programs' own processes, and those they started in
// sessions of their own, which outlive their parent's tree once it is gone.
type Watcher struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	seen map[int]procs.Proc
}

// Watch starts looking at the test process's tree every few milliseconds until Left is called.
func Watch(t testing.TB) *Watcher {
	w := &Watcher{stop: make(chan struct{}), done: make(chan struct{}), seen: map[int]procs.Proc{}}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			w.Look()
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() {
		for _, p := range w.Left() {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
	})
	return w
}

// Look looks at the tree now (a test does before it acts on what it just saw start).
func (w *Watcher) Look() {
	ps, _ := procs.Tree(os.Getpid())
	w.mu.Lock()
	defer w.mu.Unlock()
	// Only the program's processes and their descendants: the test's own children (a browser,
	// rein's shell) are not the program's.
	byPID := map[int]procs.Proc{}
	for _, p := range ps {
		byPID[p.PID] = p
	}
	for _, p := range ps {
		for q, ok := p, true; ok && q.PID != os.Getpid(); q, ok = byPID[q.PPID] {
			if q.Comm == "claude" {
				w.seen[p.PID] = p
				break
			}
		}
	}
}

// Seen reports how many processes the watcher has seen.
func (w *Watcher) Seen() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.seen)
}

// Left stops watching and returns the processes seen that are still alive (in the group they
// were seen in: a reused id is not taken for a survivor).
func (w *Watcher) Left() []procs.Proc {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []procs.Proc
	for pid, p := range w.seen {
		if q, err := procs.Read(pid); err == nil && !q.Zombie && q.PGID == p.PGID {
			out = append(out, q)
		}
	}
	return out
}
