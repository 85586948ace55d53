package claude_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/external"
	"github.com/reinhq/rein/internal/external/claude/claudetest"
	"github.com/reinhq/rein/internal/procs"
	"github.com/reinhq/rein/internal/provider/sim"
)

// slowCommand is a Bash command that says it has started through a FIFO the test reads (a signal,
// not a sleep) and then runs for 30 s; its sleep's argument is a marker the test finds it by.
func slowCommand(t *testing.T) (cmd, marker string, started <-chan struct{}) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	marker = fmt.Sprintf("30.%06d", rand.IntN(1_000_000))
	ch := make(chan struct{})
	go func() {
		f, err := os.Open(fifo) // blocks until the command opens it to write
		if err == nil {
			f.Close()
		}
		close(ch)
	}()
	t.Cleanup(func() { // unblock the reader if the command never ran
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return fmt.Sprintf("echo started > %s; sleep %s; echo done", fifo, marker), marker, ch
}

func toolStep(command string) string {
	return fmt.Sprintf(`{"text":"Running it.","tool_calls":[{"name":"Bash","arguments":{"command":%q}}]}`, command)
}

// stopCase runs one turn, Stops it when trigger fires, and checks what every Stop must leave:
// the turn interrupted, its session named, no process of its tree alive; then the next turn,
// resuming the session, is answered.
type stopCase struct {
	script  string
	mode    string
	trigger func(f *fixture, s *sink, stop func())
	marker  string
	// before: the Stop came before the program initialised (no session yet).
	before bool
}

func runStop(t *testing.T, c stopCase) (took time.Duration) {
	f := newFixture(t, c.script)
	w := claudetest.Watch(t)
	s := newSink()
	ctx, cancel := context.WithCancel(ctxFor(t, 120*time.Second))
	var at time.Time
	stop := func() { w.Look(); at = time.Now(); cancel() }
	go c.trigger(f, s, stop)
	res := f.turn(ctx, "run the slow thing", "", c.mode, s)
	took = time.Since(at)
	left := w.Left()
	if res.Status != external.StatusInterrupted {
		t.Fatalf("turn ended %s (%v), not interrupted", res.Status, res.Err)
	}
	if len(left) > 0 {
		t.Fatalf("processes of the turn's tree left: %+v", left)
	}
	if c.marker != "" {
		if m := claudetest.Marked(c.marker); len(m) > 0 {
			t.Fatalf("the turn's command is still running: %v", m)
		}
	}
	if w.Seen() == 0 {
		t.Fatal("the watcher saw no process: it proves nothing")
	}
	if c.before {
		if s.session != "" || res.Session != "" {
			t.Fatalf("stopped before init, yet session %q / %q", s.session, res.Session)
		}
		return took
	}
	if res.Session == "" || res.Session != s.session {
		t.Fatalf("the stopped turn names session %q, init said %q", res.Session, s.session)
	}
	s2 := newSink()
	f.sim.SetScript(mustScript(t, `{"steps":[{"text":"Answered after the Stop."}]}`))
	res2 := f.turn(ctxFor(t, 90*time.Second), "are you there?", res.Session, c.mode, s2)
	if res2.Status != external.StatusCompleted || res2.Reply != "Answered after the Stop." || res2.Session != res.Session {
		t.Fatalf("the turn after the Stop: %+v", res2)
	}
	return took
}

func mustScript(t *testing.T, s string) *sim.Script {
	sc, err := sim.ParseScript([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestStopStates(t *testing.T) {
	for _, name := range []string{"starting", "streaming", "mid-tool", "retry", "approval"} {
		t.Run(name, func(t *testing.T) {
			c := stopCases(t)[name]
			took := runStop(t, c)
			t.Logf("Stop to Turn's return: %s", took)
		})
	}
}

func stopCases(t *testing.T) map[string]stopCase {
	cmd, marker, started := slowCommand(t)
	return map[string]stopCase{
		"starting": {before: true, mode: "full", trigger: func(f *fixture, s *sink, stop func()) {
			// The program is running (the watcher's first sighting) and has said nothing yet.
			for !programRunning() {
				time.Sleep(2 * time.Millisecond) // a process's start has no signal to wait on
			}
			stop()
		}},
		"streaming": {mode: "full", script: `{"steps":[{"text":"` + strings.Repeat("word ", 200) + `","chunks":200,"delay_ms":50}]}`,
			trigger: func(f *fixture, s *sink, stop func()) {
				<-s.startedC
				<-f.arrived
				stop()
			}},
		"mid-tool": {mode: "full", marker: marker, script: `{"steps":[` + toolStep(cmd) + `]}`,
			trigger: func(f *fixture, s *sink, stop func()) { <-started; stop() }},
		"retry": {mode: "full", script: `{"steps":[{"status":429,"retry_after":"30","should_retry":true},{"status":429,"retry_after":"30","should_retry":true}]}`,
			trigger: func(f *fixture, s *sink, stop func()) {
				<-s.retried
				stop()
			}},
		"approval": {mode: "ask", script: `{"steps":[` + toolStep("touch made.txt") + `]}`,
			trigger: func(f *fixture, s *sink, stop func()) { <-s.asked; stop() }},
	}
}

// programRunning reports whether the test has a child process (the program a Turn started).
func programRunning() bool {
	ps, _ := procs.Tree(os.Getpid())
	return len(ps) > 1
}

// A program killed mid-turn (SIGKILL, from outside) fails the turn, saying how it died; the
// command it had started, in a session of its own, is ended too.
func TestCrashMidTool(t *testing.T) {
	cmd, marker, started := slowCommand(t)
	f := newFixture(t, `{"steps":[`+toolStep(cmd)+`]}`)
	w := claudetest.Watch(t)
	s := newSink()
	go func() {
		<-started
		ps, _ := procs.Tree(os.Getpid())
		for _, p := range ps {
			if p.PPID == os.Getpid() {
				_ = syscall.Kill(p.PID, syscall.SIGKILL)
			}
		}
	}()
	res := f.turn(ctxFor(t, 120*time.Second), "run the slow thing", "", "full", s)
	if res.Status != external.StatusFailed || res.Err == nil || !strings.Contains(res.Err.Error(), "killed") {
		t.Fatalf("a killed program's turn: %+v", res)
	}
	if res.Session == "" || res.Reply != "" && res.Reply != "Running it." {
		t.Fatalf("the failed turn: session %q reply %q", res.Session, res.Reply)
	}
	if left := w.Left(); len(left) > 0 {
		t.Fatalf("processes left: %+v", left)
	}
	if m := claudetest.Marked(marker); len(m) > 0 {
		t.Fatalf("the command the program started is still running: %v", m)
	}
	t.Logf("reported: %v", res.Err)
}

// Claude Code reports an API error with is_error true under subtype success: the turn failed.
func TestIsErrorUnderSuccess(t *testing.T) {
	f := newFixture(t, `{"strict":true,"steps":[{"status":400,"message":"the request is refused, as scripted"}]}`)
	res := f.turn(ctxFor(t, 120*time.Second), "hello", "", "full", newSink())
	if res.Status != external.StatusFailed || res.Err == nil || !strings.Contains(res.Err.Error(), "subtype success") {
		t.Fatalf("turn: %+v", res)
	}
	t.Logf("reported: %v", res.Err)
}

// An approval the person answers: allow runs the call, deny refuses it, and the turn goes on.
func TestApprovalAnswered(t *testing.T) {
	for _, allow := range []bool{true, false} {
		t.Run(fmt.Sprint(allow), func(t *testing.T) {
			f := newFixture(t, `{"steps":[`+toolStep("touch made.txt")+`,{"text":"Done."}]}`)
			s := newSink()
			s.approve = func(ctx context.Context, a external.Approval) bool { return allow }
			res := f.turn(ctxFor(t, 120*time.Second), "make a file", "", "ask", s)
			if res.Status != external.StatusCompleted || res.Reply != "Done." {
				t.Fatalf("turn: %+v", res)
			}
			a := <-s.asked
			if a.Tool != "Bash" || !strings.Contains(a.Summary, "touch made.txt") || a.ID == "" {
				t.Fatalf("asked %+v", a)
			}
			_, err := os.Stat(filepath.Join(f.ws, "made.txt"))
			if allow != (err == nil) {
				t.Fatalf("allow %v, yet the file's stat says %v", allow, err)
			}
		})
	}
}
