package codex

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/external"
	"github.com/reinhq/rein/internal/procs"
	"github.com/reinhq/rein/internal/provider/sim"
)

func TestMain(m *testing.M) {
	if how := os.Getenv(fakeEnv); how != "" && len(os.Args) > 1 && os.Args[1] == "app-server" {
		fakeServer(how)
		os.Exit(0)
	}
	// Orphans of the tests' processes come to this process rather than to init, so a process
	// that left a Codex tree is still found among this process's descendants (Linux).
	adoptOrphans()
	os.Exit(m.Run())
}

// codexPath finds the Codex CLI: REIN_CODEX, else codex on PATH. Absent, the test is skipped with
// the reason; with CI set, a REIN_CODEX that names no working program fails the test.
func codexPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("REIN_CODEX"); p != "" {
		if _, err := exec.Command(p, "--version").Output(); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("REIN_CODEX=%s does not run: %v", p, err)
			}
			t.Skipf("REIN_CODEX=%s does not run (%v); install Codex: npm install --prefix /tmp/peers @openai/codex@%s", p, err, Pin)
		}
		return p
	}
	p, err := exec.LookPath("codex")
	if err != nil {
		t.Skipf("Codex is not installed (no REIN_CODEX, no codex on PATH); to run: npm install --prefix /tmp/peers @openai/codex@%s and set REIN_CODEX=/tmp/peers/node_modules/.bin/codex", Pin)
	}
	return p
}

// rig is one test's Codex: a throwaway CODEX_HOME and workspace, pointed at an in-process
// simulator that plays script, its steps scoped to the conversation the rig's requests name.
type rig struct {
	t    testing.TB
	b    *backend
	sim  *sim.Server
	ws   string
	env  []string
	conv string

	mu     sync.Mutex
	pid    int // the app-server started last
	starts int // how many app-servers the Turns started
}

func (r *rig) started() (pid, starts int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pid, r.starts
}

// closed ends the back-end's kept app-server and checks its tree is gone.
func (r *rig) closed(t testing.TB) {
	t.Helper()
	if err := r.b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	gone(t, nil)
}

func newRig(t testing.TB, script string, opts sim.Options) *rig {
	t.Helper()
	path := codexPath(t)
	sc, err := sim.ParseScript([]byte(script))
	if err != nil {
		t.Fatalf("script: %v", err)
	}
	opts.Script = sc
	s := sim.New(opts)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	dir := t.TempDir()
	home, ws := filepath.Join(dir, "home"), filepath.Join(dir, "ws")
	for _, d := range []string{filepath.Join(home, ".codex"), ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conv := strings.ReplaceAll(t.Name(), "/", "-")
	config := fmt.Sprintf(`model = "sim-1"
model_provider = "sim"
[model_providers.sim]
name = "sim"
base_url = "%s/v1"
wire_api = "responses"
env_key = "SIM_KEY"
http_headers = { %q = %q }
`, hs.URL, sim.ConversationHeader, conv)
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CODEX_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "OPENAI_") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "CODEX_HOME="+filepath.Join(home, ".codex"), "SIM_KEY=sim-key")
	r := &rig{t: t, sim: s, ws: ws, env: env, conv: conv}
	r.b = New(Options{Path: path}).(*backend)
	r.b.onStart = func(pid int) {
		r.mu.Lock()
		r.pid = pid
		r.starts++
		r.mu.Unlock()
		// Whatever happens to the test, the tree goes with it.
		t.Cleanup(func() { killTree(pid) })
	}
	t.Cleanup(func() { r.b.Close() })
	return r
}

func (r *rig) turn(ctx context.Context, prompt, resume, mode string, sink *sink) external.Result {
	return r.b.Turn(ctx, external.Turn{Prompt: prompt, Resume: resume, Cwd: r.ws, Mode: mode, Env: r.env}, sink)
}

// gone fails the test unless every process of the tree — the app-server's group, whatever was
// read of the tree while the turn ran (seen), and every descendant of this test process — has
// exited.
func gone(t testing.TB, seen []procs.Proc) {
	t.Helper()
	var left []string
	for _, p := range seen {
		if procs.Alive(p.PID) {
			left = append(left, fmt.Sprintf("%d %s", p.PID, p.Comm))
		}
	}
	below, err := procs.Descendants(os.Getpid())
	if err != nil {
		t.Fatalf("read the process table: %v", err)
	}
	for _, p := range below {
		if !p.Zombie {
			left = append(left, fmt.Sprintf("%d %s (group %d, parent %d)", p.PID, p.Comm, p.PGID, p.PPID))
		}
	}
	if len(left) > 0 {
		for _, p := range below {
			stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.PID))
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID))
			t.Logf("%s\n  %q", stat, cmdline)
		}
		t.Errorf("processes of the Codex tree left running: %s", strings.Join(left, ", "))
	}
	reapOrphans()
}

// tree reads the processes below this test process now (the app-server's tree while a turn runs).
func tree(t testing.TB) []procs.Proc {
	t.Helper()
	ps, err := procs.Descendants(os.Getpid())
	if err != nil {
		t.Fatalf("read the process table: %v", err)
	}
	return ps
}

// killTree ends pid's group and what is below it; for cleanup after a failed test.
func killTree(pid int) {
	below, _ := procs.Descendants(pid)
	killGroup(pid)
	for _, p := range below {
		killPID(p.PID)
	}
}

func killGroup(pgid int) { syscall.Kill(-pgid, syscall.SIGKILL) }
func killPID(pid int)    { syscall.Kill(pid, syscall.SIGKILL) }

// sink is a fake Sink: it records what it is told, and answers approvals with approve (nil: it
// waits until the turn ends the wait).
type sink struct {
	approve func(external.Approval) bool

	mu        sync.Mutex
	changed   chan struct{}
	session   string
	version   string
	started   int
	items     []external.Item
	approvals []external.Approval
}

func newSink() *sink { return &sink{changed: make(chan struct{})} }

func (s *sink) note() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *sink) Started(session, version string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.session, s.version = session, version
	s.started++
	s.note()
	return nil
}

func (s *sink) Item(it external.Item) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = append(s.items, it)
	s.note()
	return nil
}

func (s *sink) Approve(ctx context.Context, a external.Approval) bool {
	s.mu.Lock()
	s.approvals = append(s.approvals, a)
	s.note()
	s.mu.Unlock()
	if s.approve != nil {
		return s.approve(a)
	}
	<-ctx.Done()
	return false
}

// await waits until cond holds of the sink, or fails the test after within.
func (s *sink) await(t testing.TB, within time.Duration, what string, cond func(*sink) bool) {
	t.Helper()
	deadline := time.After(within)
	for {
		s.mu.Lock()
		ok, ch := cond(s), s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			s.mu.Lock()
			defer s.mu.Unlock()
			t.Fatalf("waited %v for %s; the sink holds %+v", within, what, s.items)
		}
	}
}

func (s *sink) find(kind, status string) (external.Item, bool) {
	for _, it := range s.items {
		if it.Kind == kind && (status == "" || it.Status == status) {
			return it, true
		}
	}
	return external.Item{}, false
}

func (s *sink) has(kind, status string) bool {
	_, ok := s.find(kind, status)
	return ok
}

// eventually polls cond until it holds or within has passed.
func eventually(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
