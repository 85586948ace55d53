package main

// These tests run the real rein binary as a child process: built once per test run, given its own
// REIN_HOME and workspace, and judged by what it leaves in its record and by `rein doctor`.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/procs"
	"github.com/reinhq/rein/internal/record"
	osbox "github.com/reinhq/rein/internal/sandbox"
)

var (
	binDir   string // a temporary directory removed after the run
	binOnce  sync.Once
	binPath  string
	binErr   error
	buildDur time.Duration
)

func TestMain(m *testing.M) {
	osbox.Main() // the sandbox's probe runs this binary as its helper, as it runs rein
	if path := os.Getenv(writerEnv); path != "" {
		os.Exit(lockWriter(path)) // this binary is a child of TestWriterRaceStress
	}
	code := m.Run()
	stopPG()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// reinBin builds the rein binary once, from the module root, and returns its path.
func reinBin(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		start := time.Now()
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			binErr = fmt.Errorf("go env GOMOD: %w", err)
			return
		}
		root := filepath.Dir(strings.TrimSpace(string(out)))
		if binDir, binErr = os.MkdirTemp("", "rein-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "rein")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/rein")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/rein: %v\n%s", err, out)
		}
		buildDur = time.Since(start)
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// sandbox is one isolated place to run rein: a state root and a workspace.
type sandbox struct {
	home string // REIN_HOME
	ws   string // the workspace, and the child's working directory
	env  []string
}

func newSandbox(t testing.TB) *sandbox {
	t.Helper()
	d := t.TempDir()
	sb := &sandbox{home: filepath.Join(d, "home"), ws: filepath.Join(d, "ws")}
	for _, p := range []string{sb.home, sb.ws} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sb.env = childEnv("REIN_HOME="+sb.home, "HOME="+d)
	return sb
}

// childEnv is this process's environment without anything that would choose a provider or a state
// directory for rein, plus extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "REIN_HOME", "HOME",
			"XDG_STATE_HOME", "XDG_CONFIG_HOME":
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// result is how one rein process ended.
type result struct {
	code   int
	stdout string
	stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// rein runs the binary to completion in the sandbox's workspace (bounded by a minute).
func (sb *sandbox) rein(t testing.TB, args ...string) result {
	t.Helper()
	return runBin(t, sb.ws, sb.env, args...)
}

func runBin(t testing.TB, dir string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, reinBin(t), args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ctx.Err() != nil {
			t.Fatalf("rein %s did not end within a minute\n%s", strings.Join(args, " "), r)
		}
	default:
		t.Fatalf("rein %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// records returns the record paths under the sandbox's state root.
func (sb *sandbox) records(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(sb.home, "sessions", "*", "*", "record.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// writeScript writes a simulator script and returns its path.
func writeScript(t testing.TB, dir string, steps ...map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"steps": steps})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "script.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func bash(command string) map[string]any {
	return map[string]any{"name": "bash", "arguments": map[string]any{"command": command}}
}

// ---- reading records back -----------------------------------------------------------------------

// splitComplete splits a record file's bytes into its complete lines and its torn tail.
func splitComplete(b []byte) (complete, torn []byte) {
	i := bytes.LastIndexByte(b, '\n')
	return b[:i+1], b[i+1:]
}

// lines returns the complete lines of b, without their newlines.
func lines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		out = append(out, b[:i])
		b = b[i+1:]
	}
	return out
}

// replay decodes and folds complete lines (a torn tail must have been split off). Decode checks
// that every sequence number equals its line number, so a gap or repeat is an error here.
func replay(b []byte) ([]record.Record, *fold.State, error) {
	st := fold.New()
	var recs []record.Record
	for i, line := range lines(b) {
		r, err := record.Decode(line, int64(i+1))
		if err != nil {
			return recs, st, err
		}
		if err := st.Step(r); err != nil {
			return recs, st, err
		}
		recs = append(recs, r)
	}
	return recs, st, nil
}

// checkCalls checks that every tool call in recs has a unique id and is answered exactly once,
// by a later tool_results, and that no result answers a call never made. With settled, every call
// must be answered; otherwise the newest batch may still be owed.
func checkCalls(recs []record.Record, settled bool) error {
	calls := map[string]int64{}   // call id → the seq that made it
	answered := map[string]bool{} // call id → answered
	var order []string
	for _, r := range recs {
		switch b := r.Body.(type) {
		case *record.AssistantMessage:
			for _, p := range b.Parts {
				if p.Type != record.PartToolCall {
					continue
				}
				if at, dup := calls[p.CallID]; dup {
					return fmt.Errorf("record %d makes call %q, already made by record %d", r.Seq, p.CallID, at)
				}
				calls[p.CallID] = r.Seq
				order = append(order, p.CallID)
			}
		case *record.ToolResults:
			for _, res := range b.Results {
				if _, ok := calls[res.CallID]; !ok {
					return fmt.Errorf("record %d answers call %q, which no record made", r.Seq, res.CallID)
				}
				if answered[res.CallID] {
					return fmt.Errorf("record %d answers call %q a second time", r.Seq, res.CallID)
				}
				answered[res.CallID] = true
			}
		}
	}
	if settled {
		for _, id := range order {
			if !answered[id] {
				return fmt.Errorf("call %q (record %d) is never answered", id, calls[id])
			}
		}
	}
	return nil
}

// ---- processes ----------------------------------------------------------------------------------

// waitGone waits up to d for pid to exit and reports whether it is gone: no such process, or a
// zombie waiting for init to reap it.
func waitGone(pid int, d time.Duration) bool {
	procs.AwaitGone([]int{pid}, d)
	return !procs.Alive(pid)
}

// child is a rein process started by startRun.
type child struct {
	cmd    *exec.Cmd
	lines  chan map[string]any
	done   chan struct{}
	stderr *logBuf
	status syscall.WaitStatus
}

// logBuf collects a child's output safely while it runs, and lets a test wait for a phrase.
type logBuf struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newLogBuf() *logBuf { return &logBuf{changed: make(chan struct{})} }

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	close(l.changed)
	l.changed = make(chan struct{})
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor waits up to d for s to appear in the output.
func (l *logBuf) waitFor(s string, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		l.mu.Lock()
		found, changed := strings.Contains(l.b.String(), s), l.changed
		l.mu.Unlock()
		if found {
			return true
		}
		select {
		case <-changed:
		case <-timer.C:
			return false
		}
	}
}

// startRun starts rein with args in the sandbox without waiting for it. The child's lines carry
// the JSON objects it prints (closed at end of file; lines nobody takes in time are dropped) and
// done is closed once it has been waited for. A test's end kills a child still running.
func (sb *sandbox) startRun(t testing.TB, args ...string) *child {
	t.Helper()
	return sb.startVia(t, nil, args...)
}

// startVia is startRun through a wrapper: wrap's command is run with rein's path and args after
// its own (a shell's -c script execs "$0" "$@"), so that rein inherits what the wrapper set.
func (sb *sandbox) startVia(t testing.TB, wrap []string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(reinBin(t), args...)
	if len(wrap) > 0 {
		cmd = exec.Command(wrap[0], append(append(wrap[1:], reinBin(t)), args...)...)
	}
	cmd.Dir, cmd.Env = sb.ws, sb.env
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, lines: make(chan map[string]any, 1024), done: make(chan struct{}), stderr: newLogBuf()}
	cmd.Stdout, cmd.Stderr = w, c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	go func() {
		defer close(c.lines)
		defer r.Close()
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				m = map[string]any{"type": "unparsed", "text": sc.Text()}
			}
			select {
			case c.lines <- m:
			default: // nobody is listening this far ahead; keep draining
			}
		}
	}()
	go func() {
		cmd.Wait()
		c.status = cmd.ProcessState.Sys().(syscall.WaitStatus)
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// wait waits for the child to end, up to d.
func (c *child) wait(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(d):
		t.Fatalf("rein did not exit within %s\nstderr:\n%s", d, c.stderr)
	}
}

// readFIFO makes a named pipe at path and returns a channel that receives the first line written
// to it: a way for a tool's command to tell the test something the moment it happens.
func readFIFO(t testing.TB, path string) <-chan string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	ch := make(chan string, 1)
	t.Cleanup(func() {
		// Unblock a reader still waiting in open: O_RDWR never blocks and counts as a writer.
		if f, err := os.OpenFile(path, os.O_RDWR, 0); err == nil {
			f.Close()
		}
	})
	go func() {
		f, err := os.Open(path) // blocks until the writer opens it
		if err != nil {
			close(ch)
			return
		}
		defer f.Close()
		line, _ := bufio.NewReader(f).ReadString('\n')
		ch <- strings.TrimSpace(line)
	}()
	return ch
}
