package shell

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/procs"
)

// TestRunningCommandsHoldNoThread: commands started directly (no sandbox that holds them) are
// forked on the launcher's one thread and awaited by goroutines parked on pidfds, so forty
// running commands hold no thread each; each one is still killed by the parent-death signal's
// launcher's thread living on (TestParentDeathSignal).
func TestRunningCommandsHoldNoThread(t *testing.T) {
	const n = 40
	dir := t.TempDir()
	// One command first: the launcher's thread and the keeper are there before counting.
	warm, err := start("bash", dir, os.Environ(), time.Second, "true", newCapture(1<<10, 1<<10), testControl, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-warm.done
	before := threadCount(t)
	var ps []*proc
	for range n {
		p, err := start("bash", dir, os.Environ(), time.Second, "exec sleep 1000", newCapture(1<<10, 1<<10), testControl, nil)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	defer func() {
		for _, p := range ps {
			p.signal(syscall.SIGKILL)
			<-p.done
		}
	}()
	if !eventually(5*time.Second, func() bool {
		for _, p := range ps {
			if countComm(members(p.pgid), "sleep") != 1 {
				return false
			}
		}
		return true
	}) {
		t.Fatal("the sleeps never all started")
	}
	time.Sleep(100 * time.Millisecond) // a thread held per command would be there by now
	if after := threadCount(t); after-before >= n/2 {
		t.Errorf("%d running commands took %d threads more (from %d to %d)", n, after-before, before, after)
	}
}

// threadCount is how many threads this process has.
func threadCount(t *testing.T) int {
	p, err := procs.Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return p.Threads
}

// TestParentDeathSignal: a command's shell started directly dies with rein by the parent-death
// signal alone, its keeper stopped, and not before, whatever threads Go has retired in between
// (the fork happened on the launcher's thread, which lives as long as rein).
func TestParentDeathSignal(t *testing.T) {
	if os.Getenv("REIN_SHELL_PDEATH_HELPER") != "" {
		t.Skip("in the helper")
	}
	helper, dir, out := startHelper(t, "TestHelperParentDeath", "REIN_SHELL_PDEATH_HELPER", "ready")
	shell := readPID(t, filepath.Join(dir, "pgid"))
	keeperPID := readPID(t, filepath.Join(dir, "keeper"))
	defer func() {
		syscall.Kill(keeperPID, syscall.SIGCONT)
		syscall.Kill(-shell, syscall.SIGKILL)
	}()
	if !alive(shell) {
		t.Fatalf("the command's shell %d died before its rein: a parent-death signal came early (a thread exited); the helper said %s", shell, out)
	}
	helper.Process.Signal(syscall.SIGKILL)
	helper.Wait()
	if !eventually(2*time.Second, func() bool { return !alive(shell) }) {
		t.Errorf("the command's shell %d outlived its rein by 2 s with the keeper stopped: no parent-death signal", shell)
	}
}

// TestHelperParentDeath is the helper process of TestParentDeathSignal: it starts a command,
// stops its keeper, lets Go's threads come and go for a while, and waits to be killed.
func TestHelperParentDeath(t *testing.T) {
	dir := os.Getenv("REIN_SHELL_PDEATH_HELPER")
	if dir == "" {
		t.Skip("helper process for TestParentDeathSignal")
	}
	p, err := start("bash", dir, os.Environ(), time.Second, "echo $$ > pgid; exec sleep 1000", newCapture(1<<10, 1<<10), testControl, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = p
	readPID(t, filepath.Join(dir, "pgid"))
	keeper.mu.Lock()
	k := keeper.pid
	keeper.mu.Unlock()
	if err := syscall.Kill(k, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "keeper"), []byte(strconv.Itoa(k)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Threads come and go: goroutines locked to threads that exit, blocking system calls.
	for range 20 {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread() // returns locked: its thread exits
			time.Sleep(time.Millisecond)
			close(done)
		}()
		<-done
	}
	if err := os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {} // wait to be killed
}
