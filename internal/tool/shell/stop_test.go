package shell

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// TestStopThenReinKilled reproduces rein killed with SIGKILL a moment after a Stop began, while
// the command ignores SIGTERM, with gaps from none to half a millisecond between the two. In half
// the rounds the group gets the Stop's signals straight from the test (SIGTERM, then SIGCONT, as
// proc.stop sends them), so the order is exact; in the others the helper is sent SIGINT and Stops
// through Run, as rein does. Rounds run a few at a time, which widens the windows a race needs.
// No process of the group may survive, whatever the interleaving.
func TestStopThenReinKilled(t *testing.T) {
	if os.Getenv("REIN_SHELL_HELPER") != "" {
		t.Skip("in the helper")
	}
	const workers = 4
	rounds := 100
	if testSandbox != "" {
		// Again under each sandbox (TestSandboxedSuites): every gap, both ways, twice.
		rounds = 40
	}
	var (
		mu       sync.Mutex
		survived []string
		wg       sync.WaitGroup
	)
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				gap := time.Duration(i/2%10) * 50 * time.Microsecond
				if left := stopThenKill(t, gap, i%2 == 1); left != "" {
					mu.Lock()
					survived = append(survived, left)
					mu.Unlock()
				}
			}
		})
	}
	for i := range rounds {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, s := range survived {
		t.Log(s)
	}
	if len(survived) > 0 {
		t.Errorf("in %d of %d rounds a process ignoring SIGTERM outlived its rein, killed during a Stop", len(survived), rounds)
	}
}

// stopThenKill runs one round. It returns what outlived the helper, if anything, and kills it.
func stopThenKill(t *testing.T, gap time.Duration, viaRun bool) string {
	dir := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperRunsBash$", "-test.v")
	helper.Env = helperEnv(dir, "REIN_SHELL_HELPER_CMD="+notePID("$$", "pgid")+"; trap '' TERM; sleep 1000 & "+notePID("$!", "sleep.pid")+"; wait")
	out := &output{}
	helper.Stdout, helper.Stderr = out, out
	if err := helper.Start(); err != nil {
		t.Error(err)
		return ""
	}
	defer helper.Process.Kill()
	pgid, sleep := pidIn(filepath.Join(dir, "pgid")), pidIn(filepath.Join(dir, "sleep.pid"))
	if pgid == 0 || sleep == 0 {
		t.Errorf("the helper's command did not start; it said %s", out)
		return ""
	}

	if viaRun {
		helper.Process.Signal(os.Interrupt)
	} else {
		syscall.Kill(-pgid, syscall.SIGTERM)
		syscall.Kill(-pgid, syscall.SIGCONT)
	}
	for start := time.Now(); time.Since(start) < gap; {
	}
	helper.Process.Signal(syscall.SIGKILL)
	helper.Wait()
	if eventually(2*time.Second, func() bool { return len(members(pgid)) == 0 }) {
		return ""
	}
	left := members(pgid)
	for _, p := range left {
		syscall.Kill(p, syscall.SIGKILL)
	}
	return fmt.Sprintf("gap %v, Stop through Run %v: group %d (sleep %d) still had %v", gap, viaRun, pgid, sleep, left)
}

// pidIn waits for a file holding a pid and returns it, or 0 if none appeared.
func pidIn(path string) int {
	pid, ns, ok := pidFile(path)
	if !ok {
		return 0
	}
	if pid, _ = outerPID(pid, ns); pid <= 1 {
		return 0 // never a command's here; and kill(-1) would end every process the test may signal
	}
	return pid
}

// TestStopDoesNotWaitForProcessesIgnoringTERM: a Stop returns as soon as the processes its
// SIGTERM ends are gone; when every process ignores it, there is nothing to wait for.
func TestStopDoesNotWaitForProcessesIgnoringTERM(t *testing.T) {
	const rounds = 20
	var lat []time.Duration
	for range rounds {
		lat = append(lat, stopLatency(t, "trap '' TERM; echo $$ > pgid; sleep 1000 & wait"))
	}
	slices.Sort(lat)
	t.Logf("Stop to Run's return over %d: p50 %v max %v", rounds, lat[rounds/2], lat[rounds-1])
	if lat[rounds/2] >= settle {
		t.Errorf("the median Stop took %v; a command ignoring SIGTERM should not wait the %v settle", lat[rounds/2], settle)
	}
}

// stopLatency runs command (which writes the group's id to pgid), stops it once its sleep runs,
// and returns the time from the Stop to Run's return.
func stopLatency(t testing.TB, command string) time.Duration {
	sh, root := newTool(t, Options{Grace: 200 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tool.Result, 1)
	go func() { done <- sh.Run(ctx, bashCall(command, 0)) }()
	pgid := readPID(t, filepath.Join(root, "pgid"))
	if !eventually(5*time.Second, func() bool { return countComm(members(pgid), "sleep") == 1 }) {
		t.Fatalf("the sleep never started in group %d", pgid)
	}
	stopped := time.Now()
	cancel()
	r := <-done
	d := time.Since(stopped)
	if r.Outcome != record.Interrupted {
		t.Fatalf("outcome %s: %q", r.Outcome, r.Content)
	}
	return d
}

func BenchmarkStopIgnoringTERM(b *testing.B) {
	var lat []time.Duration
	for b.Loop() {
		lat = append(lat, stopLatency(b, "trap '' TERM; echo $$ > pgid; sleep 1000 & wait"))
	}
	slices.Sort(lat)
	p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
	b.ReportMetric(float64(p(0.5).Microseconds())/1000, "stop-p50-ms")
	b.ReportMetric(float64(p(0.99).Microseconds())/1000, "stop-p99-ms")
}

// TestStopKeepsTheGoodbye: the output a process writes as it ends on SIGTERM is kept, even while
// another process, ignoring SIGTERM, holds the output open. It drives proc directly with a long
// settle, so that a slow machine cannot make it flaky: what it checks is that settle waits for
// the right event and then takes in every byte written before it.
func TestStopKeepsTheGoodbye(t *testing.T) {
	for range 20 {
		dir := t.TempDir()
		out := newCapture(1<<10, 1<<10)
		p, err := start("bash", dir, os.Environ(), time.Second,
			"(trap '' TERM; exec sleep 1000) & trap 'echo goodbye; exit 1' TERM; sleep 1000 & wait", out, testControl, boxFor(t, dir))
		if err != nil {
			t.Fatal(err)
		}
		if !eventually(5*time.Second, func() bool { return countComm(members(p.pgid), "sleep") == 2 }) {
			t.Fatalf("the sleeps never started: group %d has %v", p.pgid, members(p.pgid))
		}
		p.stop()
		p.settle(5 * time.Second)
		if got := out.String(); got != "goodbye\n" {
			t.Fatalf("output after settle %q, want the goodbye", got)
		}
		p.signal(syscall.SIGKILL)
		<-p.done
	}
}

// TestStopGivesBackgroundProcessesTheirGrace: when the command's shell ends on SIGTERM at once,
// a background process handling SIGTERM still has the grace period to finish.
func TestStopGivesBackgroundProcessesTheirGrace(t *testing.T) {
	sh, root := newTool(t, Options{Grace: 5 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tool.Result, 1)
	go func() {
		done <- sh.Run(ctx, bashCall(notePID("$$", "pgid")+"; "+
			"(trap 'sleep 0.3; echo finished > graceful; exit' TERM; sleep 1000 & wait) >/dev/null 2>&1 & sleep 1000", 0))
	}()
	pgid := readPID(t, filepath.Join(root, "pgid"))
	if !eventually(5*time.Second, func() bool { return countComm(members(pgid), "sleep") == 2 }) {
		t.Fatalf("the sleeps never started: group %d has %v", pgid, members(pgid))
	}
	stopped := time.Now()
	cancel()
	if r := <-done; r.Outcome != record.Interrupted {
		t.Fatalf("outcome %s: %q", r.Outcome, r.Content)
	}
	if !eventually(5*time.Second, func() bool { return len(members(pgid)) == 0 }) {
		t.Fatalf("group %d still has %v", pgid, members(pgid))
	}
	gone := time.Since(stopped)
	if b, err := os.ReadFile(filepath.Join(root, "graceful")); err != nil || string(b) != "finished\n" {
		t.Errorf("the background process did not finish its SIGTERM handler: %q, %v", b, err)
	}
	if gone > 2*time.Second {
		t.Errorf("the group took %v to go; it should go once its last process finished, not at the end of the grace", gone)
	}
}

// TestStopDuringTimeoutGrace: a Stop while a timed-out command has its grace period returns at
// once, still reporting the timeout.
func TestStopDuringTimeoutGrace(t *testing.T) {
	sh, root := newTool(t, Options{Grace: 10 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tool.Result, 1)
	// The command notes the SIGTERM of its timeout and goes on: it is in its grace period. The
	// trap is set first and the timeout is long enough for bash to start on a loaded machine: a
	// SIGTERM before the trap ends the command before it writes its pid.
	go func() {
		done <- sh.Run(ctx, bashCall("trap 'echo > termed' TERM; "+notePID("$$", "pgid")+"; while :; do sleep 0.05; done", 1000))
	}()
	pgid := readPID(t, filepath.Join(root, "pgid"))
	if !eventually(5*time.Second, func() bool { _, err := os.Stat(filepath.Join(root, "termed")); return err == nil }) {
		t.Fatal("the timeout's SIGTERM never reached the command")
	}
	stopped := time.Now()
	cancel()
	var r tool.Result
	select {
	case r = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the Stop")
	}
	if d := time.Since(stopped); d > time.Second { // at once: the grace is 10 s; room for a loaded machine
		t.Errorf("Run took %v to return after the Stop", d)
	}
	if r.Outcome != record.TimedOut {
		t.Errorf("outcome %s: %q", r.Outcome, r.Content)
	}
	if len(members(pgid)) == 0 {
		t.Errorf("the group is gone; it should have its grace period")
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
}
