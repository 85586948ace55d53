package procs

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
)

// eventually polls cond until it holds or within has passed: there is no event to wait on for
// another process's state.
func eventually(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}

// startGroup runs a shell script as the leader of a new process group, killed when the test ends.
func startGroup(t *testing.T, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return cmd
}

func TestReadSelf(t *testing.T) {
	p, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if p.PID != os.Getpid() || p.PPID != os.Getppid() || p.PGID != syscall.Getpgrp() || p.Zombie || p.Comm == "" {
		t.Errorf("got %+v; want pid %d, parent %d, group %d, alive, named", p, os.Getpid(), os.Getppid(), syscall.Getpgrp())
	}
	if runtime.GOOS == "linux" && p.Threads < 2 { // a Go process runs several
		t.Errorf("Read says %d threads", p.Threads)
	}
}

func TestReadMissing(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	// Reaped, so its pid names no process, unless the system reused it in the instant since.
	if _, err := Read(cmd.Process.Pid); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of a reaped process: %v; want fs.ErrNotExist", err)
	}
	if Alive(cmd.Process.Pid) {
		t.Error("a reaped process is alive")
	}
}

// TestGroup reads a group of two sleeps, one ignoring SIGTERM, and sees one of them die.
func TestGroup(t *testing.T) {
	cmd := startGroup(t, "(trap '' TERM; exec sleep 1000) & exec sleep 1000")
	leader := cmd.Process.Pid
	var live []Proc
	if !eventually(5*time.Second, func() bool {
		live, _ = Live(leader)
		return len(live) == 2 && live[0].Comm == "sleep" && live[1].Comm == "sleep"
	}) {
		t.Fatalf("the group never held two sleeps: %+v", live)
	}
	i := slices.IndexFunc(live, func(p Proc) bool { return p.PID != leader })
	if i < 0 {
		t.Fatalf("no member but the leader: %+v", live)
	}
	bg := live[i]
	if bg.PPID != leader || bg.PGID != leader || !bg.Ignores(syscall.SIGTERM) || bg.Ignores(syscall.SIGUSR1) {
		t.Errorf("the background sleep: %+v; want parent and group %d, SIGTERM ignored and SIGUSR1 not", bg, leader)
	}
	if l := live[1-i]; l.Ignores(syscall.SIGTERM) || l.PPID != os.Getpid() {
		t.Errorf("the leader: %+v; want SIGTERM not ignored, parent %d", l, os.Getpid())
	}

	// Killed, the background sleep is a zombie until its parent, the leader, reaps it; the
	// leader, a sleep, never does.
	syscall.Kill(bg.PID, syscall.SIGKILL)
	if !eventually(5*time.Second, func() bool { return !Alive(bg.PID) }) {
		t.Fatalf("process %d still alive after SIGKILL", bg.PID)
	}
	all, err := Group(leader)
	if err != nil {
		t.Fatal(err)
	}
	if j := slices.IndexFunc(all, func(p Proc) bool { return p.PID == bg.PID }); j < 0 || !all[j].Zombie {
		t.Errorf("the killed sleep, unreaped, should be listed as a zombie: %+v", all)
	}
	if live, _ := Live(leader); len(live) != 1 || live[0].PID != leader {
		t.Errorf("Live lists %+v; want the leader alone", live)
	}
}

func TestAwaitGone(t *testing.T) {
	a := startGroup(t, "exec sleep 1000")
	b := startGroup(t, "exec sleep 1000")
	pids := []int{a.Process.Pid, b.Process.Pid, a.Process.Pid}

	start := time.Now()
	AwaitGone(pids, 100*time.Millisecond)
	if d := time.Since(start); d < 100*time.Millisecond || d > 2*time.Second {
		t.Errorf("with its processes alive, AwaitGone(100ms) returned after %v", d)
	}

	returned := make(chan time.Time, 1)
	go func() {
		AwaitGone(pids, time.Minute)
		returned <- time.Now()
	}()
	a.Process.Kill()
	b.Process.Kill() // neither is reaped: a zombie has exited
	killed := time.Now()
	select {
	case at := <-returned:
		t.Logf("AwaitGone returned %v after the kills", at.Sub(killed))
	case <-time.After(5 * time.Second):
		t.Fatal("AwaitGone did not return 5 s after its processes were killed")
	}

	start = time.Now()
	AwaitGone(pids, time.Minute) // zombies
	AwaitGone(nil, time.Minute)
	a.Wait()
	AwaitGone(pids[:1], time.Minute) // reaped
	if d := time.Since(start); d > time.Second {
		t.Errorf("AwaitGone of processes gone already took %v", d)
	}
}

// TestPollGone is AwaitGone's fallback, shared by every platform.
func TestPollGone(t *testing.T) {
	a := startGroup(t, "exec sleep 1000")
	start := time.Now()
	pollGone([]int{a.Process.Pid}, start.Add(50*time.Millisecond))
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("pollGone returned after %v with its process alive", d)
	}
	go a.Process.Kill()
	start = time.Now()
	pollGone([]int{a.Process.Pid}, start.Add(time.Minute))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("pollGone took %v to see a killed process", d)
	}
}

// TestAwaitExitStatus: the exit status AwaitExit tells is the one a shell would count.
func TestAwaitExitStatus(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux tells the status before the reaping")
	}
	for _, tt := range []struct {
		script string
		want   int
	}{{"exit 0", 0}, {"exit 3", 3}, {"exit 255", 255}, {"kill -KILL $$", 137}, {"kill -SEGV $$", 139}} {
		cmd := startGroup(t, tt.script)
		st, known := AwaitExit(cmd.Process.Pid)
		cmd.Wait()
		if !known || st != tt.want {
			t.Errorf("%s: got %d %v, want %d", tt.script, st, known, tt.want)
		}
	}
}

// TestAwaitExit: AwaitExit returns when the child exits and leaves it to be reaped, so that its
// status is still there for Wait.
func TestAwaitExit(t *testing.T) {
	cmd := startGroup(t, "exec sleep 1000")
	returned := make(chan struct{})
	go func() {
		AwaitExit(cmd.Process.Pid)
		close(returned)
	}()
	select {
	case <-returned:
		t.Fatal("AwaitExit returned while its child ran")
	case <-time.After(50 * time.Millisecond):
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("AwaitExit did not return 5 s after its child was killed")
	}
	if p, err := Read(cmd.Process.Pid); err != nil || !p.Zombie {
		t.Errorf("after AwaitExit the child should be a zombie, unreaped: %+v, %v", p, err)
	}
	// Exited already: at once, with its status where the platform tells it (Linux).
	if st, known := AwaitExit(cmd.Process.Pid); known && st != 128+int(syscall.SIGTERM) || !known && runtime.GOOS == "linux" {
		t.Errorf("AwaitExit's status: %d %v, want 143 (SIGTERM)", st, known)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("Wait after AwaitExit: %v; want the child's death by SIGTERM", err)
	}
}

// TestAwaitExitNotAChild: a pid that is not this process's child is answered at once, unknown.
func TestAwaitExitNotAChild(t *testing.T) {
	done := make(chan bool, 1)
	go func() {
		_, known := AwaitExit(os.Getppid())
		done <- known
	}()
	select {
	case known := <-done:
		if known {
			t.Error("AwaitExit of this process's parent said it knew an exit status")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("AwaitExit of a pid that is not a child waited")
	}
}
