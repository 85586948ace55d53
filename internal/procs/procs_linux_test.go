package procs

import (
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestAwaitExitHoldsNoThread: on Linux a command's wait is a goroutine parked on a pidfd, not a
// thread blocked in waitid, so many running commands hold no thread each (and while they run no
// processor sits in a system call). Fifty waits on fifty sleeping children: a blocking waitid
// would hold fifty threads.
func TestAwaitExitHoldsNoThread(t *testing.T) {
	const n = 50
	before := threads(t)
	var cmds []int
	for range n {
		cmds = append(cmds, startGroup(t, "exec sleep 1000").Process.Pid)
	}
	var wg sync.WaitGroup
	statuses := make([]int, n)
	waiting := make(chan struct{}, n)
	for i, pid := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			waiting <- struct{}{}
			statuses[i], _ = AwaitExit(pid)
		}()
	}
	for range n {
		<-waiting
	}
	// Each goroutine is about to wait or waiting; give a blocking wait the moment it needs to
	// hold its thread, then count.
	time.Sleep(100 * time.Millisecond)
	if after := threads(t); after-before >= n/2 {
		t.Errorf("%d waits on running children took %d threads more (from %d to %d): they block in a system call", n, after-before, before, after)
	}
	for _, pid := range cmds {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	wg.Wait()
	for i, st := range statuses {
		if st != 128+int(syscall.SIGKILL) {
			t.Errorf("child %d: status %d, want 137", i, st)
		}
	}
}

// threads is how many threads this process has.
func threads(t *testing.T) int {
	p, err := Read(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return p.Threads
}
