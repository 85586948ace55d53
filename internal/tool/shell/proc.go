package shell

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// supervisor is the bash script every command runs under. It leads the command's session and
// process group and is rein's direct child, started with a parent-death signal (SIGUSR1), so that
// the group never outlives rein:
//
//   - The command runs in a background subshell while the supervisor sits in the wait builtin. A
//     bash trap runs only between commands, and wait is the one place a trapped signal interrupts
//     at once; a supervisor blocked in a foreground child could not react.
//   - SIGUSR1 (rein died, even by SIGKILL): SIGKILL to the whole group at once.
//   - The command ended: SIGKILL to the rest of the group, so its background jobs end with the call
//     and no process is left for nobody to watch.
//   - SIGTERM (Stop or timeout, sent by rein to the whole group): the supervisor survives it and
//     keeps watch; once its subshell ended it lingers up to the grace period on the lifeline, a
//     pipe rein holds the other end of (end of file means rein is gone or done), then SIGKILLs
//     the group. rein itself escalates to SIGKILL after the grace period too.
//
// The subshell appends its final working directory to the control file on exit, and the
// supervisor appends the command's exit status, each entry ending with a NUL. The control file is
// a memfd held open by the supervisor as fd 5, which no command inherits; the subshell reaches it
// as /proc/<supervisor>/fd/5. Nothing touches the filesystem, so nothing is left behind when rein
// is killed.
//
// File descriptors: 3 is the output pipe (the subshell's stdout and stderr; the supervisor keeps
// none, so end of file means every process of the command closed it), 4 is the lifeline and 5 the
// control file.
const supervisor = `
__rein_ctl=/proc/$$/fd/5 __rein_dir=$1 __rein_grace=$2 __rein_cmd=$3
__rein_stopping=
trap 'kill -KILL 0' USR1
trap '__rein_stopping=1' TERM
(
	trap - TERM USR1 INT QUIT
	exec 3>&- 4<&- 5<&-
	trap 'printf "cwd:%s\0" "$PWD" 2>/dev/null >>"$__rein_ctl"' EXIT
	cd -- "$__rein_dir" || exit
	set --
	unset __rein_dir __rein_grace __rein_stopping
	eval "$__rein_cmd"
) >&3 2>&3 </dev/null &
__rein_pid=$!
exec 3>&-
while :; do
	wait "$__rein_pid"
	__rein_st=$?
	kill -0 "$__rein_pid" 2>/dev/null || break
done
printf 'status:%s\0' "$__rein_st" >>"$__rein_ctl"
if [ -n "$__rein_stopping" ]; then
	read -r -t "$__rein_grace" -u 4 __rein_x
fi
kill -KILL 0
`

// maxArg is the kernel's limit on one argument string (MAX_ARG_STRLEN), less some room.
const maxArg = 128<<10 - 64

// proc is one running command: its supervisor, process group, output and control file.
type proc struct {
	pgid     int
	ctl      *os.File // the control file (a memfd)
	out      *capture
	r        *os.File // the output pipe's read end
	lifeline *os.File // the write end of the supervisor's lifeline

	exited  chan struct{} // closed once the supervisor is reaped
	drained chan struct{} // closed once the output reached end of file (or was cut off)
	done    chan struct{} // closed once a stop finished: the group killed, everything released

	waitErr  error
	stopOnce sync.Once
}

// start runs command in dir under a fresh supervisor.
func start(bash, dir string, env []string, grace time.Duration, command string, out *capture) (*proc, error) {
	fd, err := unix.MemfdCreate("rein-bash-control", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("create the control file: %w", err)
	}
	p := &proc{ctl: os.NewFile(uintptr(fd), "rein-bash-control"), out: out, exited: make(chan struct{}), drained: make(chan struct{}), done: make(chan struct{})}
	var w, lifeR *os.File
	p.r, w, err = os.Pipe()
	if err == nil {
		lifeR, p.lifeline, err = os.Pipe()
	}
	if err != nil {
		p.closeAll(w, lifeR)
		return nil, fmt.Errorf("create pipes: %w", err)
	}
	graceArg := strconv.FormatFloat(grace.Seconds(), 'f', 3, 64)
	cmd := exec.Command(bash, "-c", supervisor, "rein-bash", dir, graceArg, command)
	cmd.Dir = dir
	cmd.Env = env
	cmd.ExtraFiles = []*os.File{w, lifeR, p.ctl}
	// A new session, not only a new process group: the command has no controlling terminal, so
	// a program that would prompt on /dev/tty (sudo, ssh) fails at once instead of stopping the
	// group or writing over the person's terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGUSR1}

	// Linux sends the parent-death signal when the thread that forked the child exits, not the
	// process; Go may retire a thread. So the fork and the wait happen on one locked thread that
	// outlives the supervisor.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if err := <-started; err != nil {
		p.closeAll(w, lifeR)
		return nil, fmt.Errorf("start %s: %w", bash, err)
	}
	p.pgid = cmd.Process.Pid
	w.Close()
	lifeR.Close()
	go p.read()
	return p, nil
}

func (p *proc) closeAll(extra ...*os.File) {
	for _, f := range append(extra, p.r, p.lifeline, p.ctl) {
		if f != nil {
			f.Close()
		}
	}
}

func (p *proc) read() {
	defer close(p.drained)
	io.Copy(p.out, p.r)
}

// finish waits for the output after a normal end. The supervisor killed its group on the way out,
// so end of file follows at once unless a process left the group (setsid) holding the pipe; that
// one gets a moment, then the output is cut off. It returns the control file's report.
func (p *proc) finish() report {
	select {
	case <-p.drained:
	case <-time.After(escapeWait):
		p.r.SetReadDeadline(time.Now())
		<-p.drained
	}
	rep := p.report()
	p.release()
	return rep
}

// escapeWait is how long output is awaited after the supervisor ended, for processes that escaped
// the process group but still hold the output pipe.
const escapeWait = 100 * time.Millisecond

func (p *proc) release() {
	p.r.Close()
	p.lifeline.Close()
	p.ctl.Close()
}

// stop ends the command: SIGTERM to the whole group now, SIGKILL once every process of the group
// but the supervisor has gone or the grace period has passed. It returns at once; done closes
// when the group is gone and everything is released.
func (p *proc) stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		syscall.Kill(-p.pgid, syscall.SIGTERM)
		syscall.Kill(-p.pgid, syscall.SIGCONT) // a stopped process acts on SIGTERM only once continued
		go func() {
			defer close(p.done)
			deadline := time.NewTimer(grace)
			defer deadline.Stop()
			p.awaitGroup(deadline.C)
			syscall.Kill(-p.pgid, syscall.SIGKILL)
			p.lifeline.Close()
			<-p.exited
			p.r.SetReadDeadline(time.Now().Add(escapeWait))
			<-p.drained
			p.release()
		}()
	})
}

// awaitGroup returns when the group holds no live process but the supervisor, or at deadline.
func (p *proc) awaitGroup(deadline <-chan time.Time) {
	select {
	case <-p.drained:
	case <-p.exited:
	case <-deadline:
		return
	}
	// The output is closed, but a process may have closed its output and still be running its
	// SIGTERM handler: look for one.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for groupAlive(p.pgid) {
		select {
		case <-tick.C:
		case <-deadline:
			return
		}
	}
}

// groupAlive reports whether any process of group pgid other than its leader is alive (zombies
// are not). It reads /proc; when it cannot, it answers true so that the caller waits the grace.
func groupAlive(pgid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return true
	}
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == pgid {
			continue
		}
		st, err := readStat(pid)
		if err == nil && st.pgrp == pgid && st.state != 'Z' && st.state != 'X' {
			return true
		}
	}
	return false
}

// procStat is the part of /proc/<pid>/stat rein reads.
type procStat struct {
	state byte
	ppid  int
	pgrp  int
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	// The command name is in parentheses and may hold anything, so parse after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 {
		return procStat{}, errors.New("malformed stat")
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	return procStat{state: f[0][0], ppid: ppid, pgrp: pgrp}, nil
}

// report is what the control file says: the command's last working directory (set if its shell
// exited by itself) and its exit status (set if the supervisor saw it end).
type report struct {
	cwd    string
	status int
	hasCwd bool
	hasSt  bool
}

func (p *proc) report() report {
	var r report
	b, err := io.ReadAll(io.NewSectionReader(p.ctl, 0, 1<<20))
	if err != nil {
		return r
	}
	for _, e := range strings.Split(string(b), "\x00") {
		switch {
		case strings.HasPrefix(e, "cwd:"):
			r.cwd, r.hasCwd = e[len("cwd:"):], true
		case strings.HasPrefix(e, "status:"):
			if n, err := strconv.Atoi(e[len("status:"):]); err == nil {
				r.status, r.hasSt = n, true
			}
		}
	}
	return r
}
