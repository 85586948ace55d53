package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
)

// longTool starts `rein run` on a script whose one tool call backgrounds `sleep 1000`, tells the
// test its pid through a named pipe and waits on it; it returns the child once that pid is known,
// so the call is running (its tool_started is durable before a tool runs).
func longTool(t *testing.T, sb *sandbox, prelude string, wrap ...string) (*child, int) {
	t.Helper()
	pidc := readFIFO(t, filepath.Join(sb.ws, "pid.fifo"))
	script := writeScript(t, t.TempDir(),
		map[string]any{"text": "Running the long command.", "tool_calls": []any{bash(prelude + "sleep 1000 & echo $! > pid.fifo; wait")}},
		map[string]any{"text": "The long command ended."},
	)
	// Without the sandbox: these tests read the tool's pid from inside it, which a PID namespace
	// would make its own (sandbox_test.go holds the same guarantees under the sandbox).
	args := append(append([]string{"run"}, simArgs(script)...), "--json", "--sandbox", "off", "run the long command")
	var c *child
	if len(wrap) > 0 { // rein started through a wrapper command, which execs it with these args
		c = sb.startVia(t, wrap, args...)
	} else {
		c = sb.startRun(t, args...)
	}
	var line string
	select {
	case line = <-pidc:
	case <-c.done:
		t.Fatalf("rein ended before the tool ran\n%s", c.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("the tool did not start within 30s\n%s", c.stderr)
	}
	pid, err := strconv.Atoi(line)
	if err != nil || pid <= 1 {
		t.Fatalf("the tool wrote %q, not a pid", line)
	}
	t.Cleanup(func() {
		if !waitGone(pid, 0) {
			syscall.Kill(pid, syscall.SIGKILL) // the sleep this test started, if a failure left it
		}
	})
	return c, pid
}

// theRecord returns the sandbox's one record, its records and its state, after doctor admitted it.
func theRecord(t *testing.T, sb *sandbox) (string, []record.Record, *fold.State) {
	t.Helper()
	paths := sb.records(t)
	if len(paths) != 1 {
		t.Fatalf("want one record, found %v", paths)
	}
	if res := sb.rein(t, "doctor", paths[0]); res.code != 0 || !strings.HasPrefix(res.stdout, "admissible") {
		t.Fatalf("doctor:\n%s", res)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	complete, torn := splitComplete(b)
	if len(torn) > 0 {
		t.Fatalf("the record has a %d-byte torn tail after doctor", len(torn))
	}
	recs, st, err := replay(complete)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkCalls(recs, st.IsReady()); err != nil {
		t.Fatal(err)
	}
	return paths[0], recs, st
}

// lastQuiesced returns the last quiesced event of recs, and the outcome each call was given.
func lastQuiesced(recs []record.Record) (*record.Quiesced, map[string]record.Outcome) {
	var q *record.Quiesced
	outcomes := map[string]record.Outcome{}
	for _, r := range recs {
		switch b := r.Body.(type) {
		case *record.Quiesced:
			q = b
		case *record.ToolResults:
			for _, res := range b.Results {
				outcomes[res.CallID] = res.Outcome
			}
		}
	}
	return q, outcomes
}

// TestSignalStopsTheTool: Ctrl-C while a tool runs is Stop, and so are SIGTERM (a service
// manager, kill) and SIGHUP (the terminal closed, an ssh connection dropped): rein exits 130,
// the running call is answered interrupted, the exchange quiesced{cancelled}, the tool's process
// is gone, and the session goes on.
func TestSignalStopsTheTool(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			sb := newSandbox(t)
			c, pid := longTool(t, sb, "")
			sent := time.Now()
			c.cmd.Process.Signal(sig)
			c.wait(t, 10*time.Second)
			exited := time.Since(sent)
			if got := c.status.ExitStatus(); got != exitStopped {
				t.Fatalf("rein exited %d (%v) after %v, want %d\n%s", got, c.status, sig, exitStopped, c.stderr)
			}
			if !waitGone(pid, 3*time.Second) {
				t.Errorf("the tool's sleep (pid %d) outlived the Stop by 3s", pid)
			}
			t.Logf("%v mid-tool: rein exited 130 %s after the signal", sig, exited.Round(100*time.Microsecond))

			path, recs, st := theRecord(t, sb)
			if st.InFlight() || !st.IsReady() {
				t.Fatalf("after Stop the session is in flight (phase %s)", st.Phase())
			}
			q, outcomes := lastQuiesced(recs)
			if q == nil || q.Reason != fold.Cancelled {
				t.Fatalf("the exchange ended %+v, want quiesced{cancelled}", q)
			}
			interrupted := 0
			for id, o := range outcomes {
				if o != record.Interrupted {
					t.Errorf("call %s was answered %s, want interrupted", id, o)
				}
				interrupted++
			}
			if interrupted != 1 {
				t.Errorf("want the one running call answered, found %v", outcomes)
			}

			res := sb.rein(t, append([]string{"resume", filepath.Base(filepath.Dir(path)), "continue"}, simArgs("")...)...)
			if res.code != 0 {
				t.Fatalf("resume after Stop:\n%s", res)
			}
			theRecord(t, sb)
		})
	}
}

// TestHangupIgnoredUnderNohup: started with hangups ignored (nohup, a shell's `trap "" HUP`), rein
// keeps them ignored — the exchange goes on when the terminal closes — and Ctrl-C still stops it.
func TestHangupIgnoredUnderNohup(t *testing.T) {
	sb := newSandbox(t)
	c, pid := longTool(t, sb, "", "sh", "-c", `trap '' HUP; exec "$0" "$@"`)
	c.cmd.Process.Signal(syscall.SIGHUP)
	select {
	case <-c.done:
		t.Fatalf("rein, started with SIGHUP ignored, ended on one (%v)\n%s", c.status, c.stderr)
	case <-time.After(time.Second):
	}
	if strings.Contains(c.stderr.String(), "stopping") {
		t.Fatalf("rein, started with SIGHUP ignored, began to stop on one\n%s", c.stderr)
	}
	c.cmd.Process.Signal(os.Interrupt)
	c.wait(t, 10*time.Second)
	if got := c.status.ExitStatus(); got != exitStopped {
		t.Fatalf("rein exited %d after SIGINT, want %d\n%s", got, exitStopped, c.stderr)
	}
	if !waitGone(pid, 3*time.Second) {
		t.Errorf("the tool's sleep (pid %d) outlived the Stop by 3s", pid)
	}
	theRecord(t, sb)
}

// TestSIGINTTwice: a second Ctrl-C within a second exits 130 at once, even with a tool that
// ignores SIGTERM; the record stays admissible and `rein resume` settles it.
func TestSIGINTTwice(t *testing.T) {
	sb := newSandbox(t)
	c, pid := longTool(t, sb, "trap '' TERM; ")
	c.cmd.Process.Signal(os.Interrupt)
	// Signals of one kind do not queue: wait until rein has taken the first before the second.
	if !c.stderr.waitFor("stopping", 5*time.Second) {
		t.Fatalf("rein did not acknowledge the first SIGINT\n%s", c.stderr)
	}
	sent := time.Now()
	c.cmd.Process.Signal(os.Interrupt)
	c.wait(t, 10*time.Second)
	exited := time.Since(sent)
	if got := c.status.ExitStatus(); got != exitStopped {
		t.Fatalf("rein exited %d after two SIGINTs, want %d\n%s", got, exitStopped, c.stderr)
	}
	if exited > time.Second {
		t.Errorf("rein took %s to exit after the second SIGINT, want at once", exited)
	}
	if !waitGone(pid, 3*time.Second) {
		t.Errorf("the tool's sleep (pid %d, ignoring SIGTERM) outlived rein by 3s", pid)
	}
	t.Logf("second SIGINT: rein exited 130 %s after it", exited.Round(100*time.Microsecond))

	path, _, _ := theRecord(t, sb)
	res := sb.rein(t, append([]string{"resume", filepath.Base(filepath.Dir(path))}, simArgs("")...)...)
	if res.code != 0 {
		t.Fatalf("resume after two SIGINTs:\n%s", res)
	}
	_, recs, st := theRecord(t, sb)
	if st.InFlight() || !st.IsReady() {
		t.Fatalf("after resume the session is in flight (phase %s)", st.Phase())
	}
	q, outcomes := lastQuiesced(recs)
	if q == nil || (q.Reason != fold.Crashed && q.Reason != fold.Cancelled) {
		t.Fatalf("the exchange ended %+v, want quiesced{crashed} or quiesced{cancelled}", q)
	}
	t.Logf("after two SIGINTs and a resume the exchange is quiesced{%s}", q.Reason)
	for id, o := range outcomes {
		if o != record.Interrupted {
			t.Errorf("call %s was answered %s, want interrupted", id, o)
		}
	}
	if len(outcomes) != 1 {
		t.Errorf("want the one running call answered, found %v", outcomes)
	}
}

// TestSIGKILLEndsTheToolGroup: a tool's process group does not outlive rein killed with SIGKILL,
// and resume answers the call interrupted.
func TestSIGKILLEndsTheToolGroup(t *testing.T) {
	sb := newSandbox(t)
	c, pid := longTool(t, sb, "")
	killed := time.Now()
	c.cmd.Process.Signal(syscall.SIGKILL)
	c.wait(t, 10*time.Second)
	if !waitGone(pid, 3*time.Second) {
		t.Fatalf("the tool's sleep (pid %d) outlived rein's SIGKILL by 3s", pid)
	}
	t.Logf("SIGKILL mid-tool: the tool's sleep was gone %s after the kill", time.Since(killed).Round(100*time.Microsecond))

	path, _, st := theRecord(t, sb)
	if owed := st.Owed(); len(owed) != 1 || !st.Started(owed[0]) {
		t.Fatalf("at the kill the record owes %v (started %v), want the one running call", owed, len(owed) == 1 && st.Started(owed[0]))
	}
	res := sb.rein(t, append([]string{"resume", filepath.Base(filepath.Dir(path))}, simArgs("")...)...)
	if res.code != 0 {
		t.Fatalf("resume after SIGKILL:\n%s", res)
	}
	_, recs, _ := theRecord(t, sb)
	q, outcomes := lastQuiesced(recs)
	if q == nil || q.Reason != fold.Crashed {
		t.Fatalf("resume settled %+v, want quiesced{crashed}", q)
	}
	for id, o := range outcomes {
		if o != record.Interrupted {
			t.Errorf("call %s was answered %s, want interrupted", id, o)
		}
	}
}

// TestStopThenKill: rein killed with SIGKILL while a Stop is still ending a tool that ignores
// SIGTERM (a server shutting down gracefully) must not leave the tool running: the parent-death
// promise holds during the grace period too.
func TestStopThenKill(t *testing.T) {
	sb := newSandbox(t)
	c, pid := longTool(t, sb, "trap '' TERM; ")
	c.cmd.Process.Signal(os.Interrupt)
	if !c.stderr.waitFor("stopping", 5*time.Second) {
		t.Fatalf("rein did not acknowledge the SIGINT\n%s", c.stderr)
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	c.wait(t, 10*time.Second)
	if !waitGone(pid, 3*time.Second) {
		t.Fatalf("the tool's sleep (pid %d, ignoring SIGTERM) outlived rein, killed during a Stop, by 3s", pid)
	}
	path, _, _ := theRecord(t, sb)
	if res := sb.rein(t, append([]string{"resume", filepath.Base(filepath.Dir(path))}, simArgs("")...)...); res.code != 0 {
		t.Fatalf("resume:\n%s", res)
	}
	theRecord(t, sb)
}
