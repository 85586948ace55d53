package hook

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// watchdog is the first process of a hook's group: it holds the read end of the lifeline, a pipe
// whose only write end rein holds, and kills its whole group when that pipe reaches end of file —
// when rein is gone, however it died. It ignores the signals a Stop or a timeout sends the group,
// so it outlives the grace period and is ended by rein's SIGKILL of the group, or by the lifeline.
const watchdog = `trap '' HUP INT QUIT TERM PIPE USR1 USR2 ALRM; read -r -u 3 _; kill -KILL 0`

// Output caps: what a hook says beyond them is dropped (and said to be).
const (
	maxStdout = 64 << 10
	maxStderr = 16 << 10
)

// ran is how one hook process ended.
type ran struct {
	stdout, stderr string
	exit           int // the exit status, or -1 when killed by a signal or never started
	signal         string
	startErr       error
	timedOut       bool
	stopped        bool // ctx ended the wait (a Stop)
	duration       time.Duration
}

// execute runs command with bash in dir, payload on its standard input, until it exits, its
// timeout passes or ctx is done, in a process group of its own that is killed once it ends.
func execute(ctx context.Context, bash, dir, command string, env []string, payload []byte, timeout, grace time.Duration, now func() time.Time) (r ran) {
	start := now()
	r.exit = -1
	defer func() { r.duration = now().Sub(start) }()

	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		r.startErr = fmt.Errorf("make the hook's lifeline: %w", err)
		return r
	}
	dog := exec.Command(bash, "-c", watchdog)
	dog.ExtraFiles = []*os.File{lifeR}
	dog.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := dog.Start(); err != nil {
		lifeR.Close()
		lifeW.Close()
		r.startErr = fmt.Errorf("start bash (%s): %w", bash, err)
		return r
	}
	lifeR.Close()
	pgid := dog.Process.Pid
	// The group is killed last of all, and the watchdog reaped only after, so the group id cannot
	// have been reused by then.
	defer func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		lifeW.Close()
		_ = dog.Wait()
	}()

	outR, outW, err := os.Pipe()
	if err != nil {
		r.startErr = err
		return r
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		r.startErr = err
		return r
	}
	cmd := exec.Command(bash, "-c", command)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = bytes.NewReader(payload)
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	var stdout, stderr capped
	stdout.max, stderr.max = maxStdout, maxStderr
	var reading sync.WaitGroup
	reading.Add(2)
	go func() { defer reading.Done(); _, _ = io.Copy(&stdout, outR) }()
	go func() { defer reading.Done(); _, _ = io.Copy(&stderr, errR) }()
	closeReads := func() {
		// Once the group is dead every write end is closed, unless a process left the group; the
		// wait for the readers is bounded so that one cannot hold the hook's answer.
		done := make(chan struct{})
		go func() { reading.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Second):
		}
		outR.Close()
		errR.Close()
		reading.Wait()
		r.stdout, r.stderr = stdout.String(), stderr.String()
	}
	if err := cmd.Start(); err != nil {
		outW.Close()
		errW.Close()
		closeReads()
		r.startErr = fmt.Errorf("start the hook: %w", err)
		return r
	}
	outW.Close()
	errW.Close()

	exited := make(chan *os.ProcessState, 1)
	go func() {
		st, _ := cmd.Process.Wait()
		exited <- st
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var st *os.ProcessState
	select {
	case st = <-exited:
	case <-timer.C:
		r.timedOut = true
	case <-ctx.Done():
		r.stopped = true
	}
	if st == nil {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case st = <-exited:
		case <-time.After(grace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			st = <-exited
		}
	}
	// Whatever the hook left running in its group ends with it.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	closeReads()
	if st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signal = ws.Signal().String()
		} else {
			r.exit = st.ExitCode()
		}
	}
	return r
}

// capped keeps the first max bytes written to it and counts the rest.
type capped struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	max     int
	dropped int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.max - c.buf.Len()
	if room < len(p) {
		if room > 0 {
			c.buf.Write(p[:room])
		}
		c.dropped += int64(len(p) - max(room, 0))
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped > 0 {
		return fmt.Sprintf("%s\n[%d more bytes dropped]", c.buf.String(), c.dropped)
	}
	return c.buf.String()
}
