package shell

import (
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

	"github.com/reinhq/rein/internal/procs"
	"github.com/reinhq/rein/internal/sandbox"
)

// supervisor is the bash script a command runs under when the sandbox contains it in a PID
// namespace of its own (spawnSupervised; the others start directly, see directScript). It is
// rein's direct child (through the sandbox's helper, which keeps its pid) and leads
// the command's session and process group, and its one job is the lifeline: a pipe whose only
// write end rein holds, so that end of file means rein is gone, however it died. The supervisor
// blocks reading it, then SIGKILLs its whole group. Every catchable signal that could reach it
// is ignored by the kernel (a trap with an empty action is SIG_IGN), not handled by bash, so no
// Stop, timeout or stray signal interrupts that read or races with it. A bash trap is not a
// reliable base (a trapped signal arriving while bash runs another trap can be lost); a blocking
// read on a pipe is.
//
// Like a direct shell, the supervisor starts before its command is known: its waiter and the
// command's subshell too, forked ahead, and the subshell runs nothing of the command before rein
// opens its gate, fd 7, having written the directory and the command to the call file, fd 8 (see
// directScript). So a spare can be a supervisor with the whole of a start paid ahead: the
// helper's, the namespaces, the confinement and both forks (a bash fork is a few milliseconds on
// a slow machine). A gate closed unopened, or rein's death, ends the subshell at once, and the
// waiter after it, having run nothing; rein's death ends the rest through the lifeline.
//
// The supervisor's one child, the waiter, starts the command's subshell, waits for it and
// records its exit status. It alone holds the end pipe: end of file there tells rein the command
// ended. The command's subshell restores the default disposition of the signals the supervisor
// ignores; a Stop in the instant before that is lost on it, and the SIGKILL after the grace
// period ends it instead. What the command sees does not tell a spare from a supervisor started
// for it: its directory with OLDPWD the same, SECONDS counting from the gate, no positional
// parameters.
//
// rein does the rest in Go: it sends a Stop's SIGTERM and SIGKILL to the group, and SIGKILLs the
// group once the command ended, so that a call's background jobs end with it. It reaps the
// supervisor only after that last SIGKILL, so the group id cannot have been reused by then. The
// supervisor's parent-death signal, SIGUSR1, trapped to kill the group, is a second line of
// defence should the lifeline ever be held open by mistake (on Linux: macOS has no such signal).
//
// Under a sandbox that contains processes (package sandbox, on Linux), the supervisor is the first
// process of a PID namespace of its own: the kernel kills every process of the namespace when it
// dies, so a process that left the group dies with the call too. Such a first process is immune
// to a SIGKILL sent from inside its namespace, its own "kill -KILL 0" included, hence the exit
// after it; rein's SIGKILL, sent from outside, ends it as it ends any supervisor.
//
// The command's subshell appends its final working directory to the control file on exit, and
// the waiter appends the command's exit status, each entry ending with a NUL. The control file
// has no name on any filesystem by the time the supervisor starts, so nothing is left behind
// when rein is killed. How the two reach it depends on the platform (see control): on Linux it
// is a memfd the supervisor alone holds, as fd 5, which the others open as
// /proc/<supervisor>/fd/5; on macOS an unlinked file the supervisor moves to fd 57, which the
// others inherit and open as /dev/fd/57. The script's first line says which (control.reach).
//
// File descriptors: 3 is the output pipe (the command's stdout and stderr; neither the supervisor
// nor the waiter keeps it, so end of file means every process of the command closed it), 4 the
// lifeline, 5 the control file, 6 the end pipe, 7 the gate and 8 the call file.
const supervisorBody = `
trap '' HUP INT QUIT TERM USR2 PIPE ALRM TSTP TTIN TTOU XCPU XFSZ VTALRM PROF
trap 'kill -KILL 0; exit' USR1
(
	exec 4<&- 5<&-
	(
		exec 3>&- 6>&-
		read -r -u 7 __rein_go || exit 125
		IFS= read -r -d '' -u 8 __rein_dir || exit 125
		IFS= read -r -d '' -u 8 __rein_cmd || exit 125
		exec 7<&- 8<&-
		trap - HUP INT QUIT TERM USR2 PIPE ALRM TSTP TTIN TTOU XCPU XFSZ VTALRM PROF
		trap 'printf "cwd:%s\0" "$PWD" 2>/dev/null >>"$__rein_ctl"' EXIT
		cd -- "$__rein_dir" || exit
		OLDPWD=$PWD SECONDS=0
		set --
		unset __rein_dir __rein_go
		eval "$__rein_cmd"
	) >&3 2>&3 </dev/null &
	exec 3>&- 7<&- 8<&-
	wait "$!"
	printf 'status:%s\0' "$?" >>"$__rein_ctl"
) &
exec 3>&- 6>&- 7<&- 8<&-
read -r -u 4 __rein_x
kill -KILL 0
`

// supervisor is the script for a control file reached as c says.
func supervisor(c control) string { return c.reach + "\n" + supervisorBody }

// maxArg is Linux's limit on one argument string (MAX_ARG_STRLEN), less some room. macOS has no
// limit of its own on one argument, only ARG_MAX (1 MiB) on them all with the environment.
const maxArg = 128<<10 - 64

// proc is one running command: its group's leader (its supervisor, or its own shell when it
// started directly), process group, output and control file.
//
// Its life: the command ends (ended), or a stop begins (stopping) and the group has its grace;
// then rein SIGKILLs the group (killed), reaps the leader (exited), takes the last of the
// output (drained), reads the control file and releases everything (done). One goroutine, watch,
// walks these steps; signals to the group all happen before the leader is reaped.
type proc struct {
	pgid     int
	grace    time.Duration
	ctl      *os.File // the control file
	out      *capture
	r        *os.File // the output pipe's read end
	lifeline *os.File // the write end of the supervisor's lifeline
	endR     *os.File // the read end of the end pipe
	gate     *os.File // direct: the write end of the shell's gate (see directScript)
	call     *os.File // direct: the call file, where the shell reads its directory and command

	outMu sync.Mutex // held while bytes move from the output pipe into out

	ended    chan struct{} // closed once the command ended (its waiter or, direct, its shell exited)
	dead     chan struct{} // closed once the supervisor exited; it is not reaped yet (nil if direct)
	stopping chan struct{} // closed by stop
	killed   chan struct{} // closed once the group got its last SIGKILL
	exited   chan struct{} // closed once the supervisor is reaped
	drained  chan struct{} // closed once the output reached end of file (or was cut off)
	reported chan struct{} // closed once rep is set; the group is dead, the leader perhaps unreaped
	done     chan struct{} // closed once everything is released

	mu       sync.Mutex // orders signals to the group before the supervisor is reaped
	final    bool       // the last SIGKILL was sent: the group id is no longer ours to signal
	stopOnce sync.Once
	deadline *time.Timer // the end of a stop's grace period; set before stopping closes

	// direct is set when the command's shell is the group's leader, held by the lifeline's keeper
	// (startDirect); cmd is then the shell's, whose end gives the exit status.
	direct bool
	cmd    *exec.Cmd
	// cg is the cgroup a held command runs in (sandbox.Sandbox.Holds): the last SIGKILL goes to
	// it too, which ends the processes that left the group.
	cg *sandbox.Cgroup

	// status is a direct shell's exit status as the kernel told it before the reaping, if
	// statusKnown (procs.AwaitExit); both are set before ended closes.
	status      int
	statusKnown bool

	waitErr error
	rep     report
	// refused is why the sandbox helper did not run the command (a *sandbox.LaunchError), or nil;
	// it exited, and the rest of the life above follows as for a command that ended.
	refused error
}

// spawn starts a shell for a command to come, in dir, with a control file made as c says,
// confined by box unless it is nil, waiting at its gate; begin gives it its command. When box
// cannot confine it, spawn returns box's refusal (a *sandbox.UnsupportedError) and starts
// nothing; when the sandbox failed to apply, nothing runs and p.refused says why.
//
// Under a sandbox that contains processes with a PID namespace per command, the shell is a
// supervisor of the command's own (spawnSupervised); otherwise it is the command's shell, rein's
// child, held by the lifeline's keeper (spawnDirect), which costs one process instead of three.
// A sandbox that holds its commands in cgroups (sandbox.Sandbox.Holds) starts them directly too.
func spawn(bash, dir string, env []string, grace time.Duration, c control, box *sandbox.Sandbox) (*proc, error) {
	if supervisedBy(box) {
		return spawnSupervised(bash, dir, env, grace, c, box)
	}
	return spawnDirect(bash, dir, env, grace, c, box)
}

// supervisedBy reports whether box starts each command under a supervisor of its own: it contains
// commands in PID namespaces of their own through its helper, not from a thread it holds.
func supervisedBy(box *sandbox.Sandbox) bool { return box.Contains() && !box.Holds() }

// start runs command in dir in a shell spawned for it; see spawn.
func start(bash, dir string, env []string, grace time.Duration, command string, out *capture, c control, box *sandbox.Sandbox) (*proc, error) {
	p, err := spawn(bash, dir, env, grace, c, box)
	if err != nil {
		return nil, err
	}
	if p.refused != nil { // the sandbox's helper ran nothing and exited: Run says why
		p.discard(out)
		return p, nil
	}
	if err := p.begin(dir, command, out); err != nil {
		<-p.done
		return nil, err
	}
	return p, nil
}

// spawnSupervised starts a supervisor in dir for a command to come, confined by box, waiting at
// its gate; see spawn and supervisor.
func spawnSupervised(bash, dir string, env []string, grace time.Duration, c control, box *sandbox.Sandbox) (*proc, error) {
	ctl, err := c.create()
	if err != nil {
		return nil, fmt.Errorf("create the control file: %w", err)
	}
	p := &proc{grace: grace, ctl: ctl,
		ended: make(chan struct{}), dead: make(chan struct{}), stopping: make(chan struct{}),
		killed: make(chan struct{}), exited: make(chan struct{}), drained: make(chan struct{}), reported: make(chan struct{}), done: make(chan struct{})}
	if p.call, err = c.create(); err != nil {
		p.closeAll()
		return nil, fmt.Errorf("create the call file: %w", err)
	}
	// Every pipe is created close-on-exec, so no other process rein starts holds an end of it:
	// rein alone holds the lifeline's and the gate's write ends.
	var w, lifeR, endW, gateR *os.File
	p.r, w, err = os.Pipe()
	if err == nil {
		lifeR, p.lifeline, err = os.Pipe()
	}
	if err == nil {
		p.endR, endW, err = os.Pipe()
	}
	if err == nil {
		gateR, p.gate, err = os.Pipe()
	}
	if err != nil {
		p.closeAll(w, lifeR, endW, gateR)
		return nil, fmt.Errorf("create pipes: %w", err)
	}
	cmd := exec.Command(bash, "-c", supervisor(c), "rein-bash")
	cmd.Dir = dir
	cmd.Env = env
	cmd.ExtraFiles = []*os.File{w, lifeR, p.ctl, endW, gateR, p.call} // 3 to 8
	// A new session, not only a new process group: the command has no controlling terminal, so
	// a program that would prompt on /dev/tty (sudo, ssh) fails at once instead of stopping the
	// group or writing over the person's terminal. On Linux, a parent-death signal too.
	cmd.SysProcAttr = sysProcAttr()
	confirm := func() error { return nil }
	if box != nil {
		// The helper keeps the supervisor's pid, descriptors 3 to 8 and attributes: all that
		// follows holds under the sandbox as without it.
		if confirm, err = box.Confine(cmd); err != nil {
			p.closeAll(w, lifeR, endW, gateR)
			return nil, err
		}
	}

	// The fork happens on the launcher's thread, which lives as long as rein, for the
	// parent-death signal (see launcher).
	started := make(chan error, 1)
	go func() {
		if err := startLaunched(cmd); err != nil {
			started <- err
			return
		}
		started <- nil
		procs.AwaitExit(cmd.Process.Pid)
		close(p.dead)
		<-p.killed
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	err = <-started
	// The helper's report pipe is closed either way; after a start, this waits for the helper.
	p.refused = confirm()
	if err != nil {
		p.closeAll(w, lifeR, endW, gateR)
		return nil, fmt.Errorf("start %s: %w", bash, err)
	}
	p.pgid = cmd.Process.Pid
	w.Close()
	lifeR.Close()
	endW.Close()
	gateR.Close()
	go func() {
		io.Copy(io.Discard, p.endR)
		p.endR.Close()
		close(p.ended)
	}()
	return p, nil
}

func (p *proc) closeAll(extra ...*os.File) {
	for _, f := range append(extra, p.r, p.lifeline, p.endR, p.ctl, p.gate, p.call) {
		if f != nil {
			f.Close()
		}
	}
}

// watch walks the command's life to its end; see proc.
func (p *proc) watch() {
	select {
	case <-p.ended:
	case <-p.dead: // the supervisor was killed: nothing watches the lifeline any more
	case <-p.stopping:
	}
	select {
	case <-p.stopping:
		p.awaitGroup()
	default:
	}
	// A command that ended by itself is reported before its leader is reaped: a direct shell
	// whose exit status the kernel told (Linux), or a supervisor's command, whose waiter wrote
	// the status before it ended. The lifeline's release and the reaping follow the report
	// rather than precede it — for a supervisor, that is the end of its PID and mount
	// namespaces, which the kernel tears down before the supervisor can be reaped, in tens of
	// milliseconds where rein is not root.
	early := false
	select {
	case <-p.ended:
		early = p.statusKnown || !p.direct
	default:
	}
	p.lastKill()
	if !early {
		p.letGo()
		<-p.exited
	}
	// Every process of the group is gone, so end of file follows at once unless a process left
	// the group (setsid) holding the pipe; that one gets a moment, then the output is cut off.
	select {
	case <-p.drained:
	case <-time.After(escapeWait):
		p.r.SetReadDeadline(time.Now())
		<-p.drained
	}
	p.rep = p.report()
	if early && !p.rep.hasSt {
		// No status: the supervisor was killed, its waiter with it. How it ended is the news.
		p.letGo()
		<-p.exited
		early = false
	}
	close(p.reported)
	// Run, readied by the report, takes this processor now rather than after the reaping's
	// system calls below (or on another thread, woken for it).
	runtime.Gosched()
	if early {
		p.letGo()
		<-p.exited
	}
	p.release()
	close(p.done)
}

// escapeWait is how long output is awaited after the group was killed, for processes that
// escaped the process group but still hold the output pipe.
const escapeWait = 100 * time.Millisecond

func (p *proc) release() {
	if p.cg != nil {
		p.cg.Remove()
	}
	p.r.Close()
	p.lifeline.Close()
	p.ctl.Close()
	p.gate.Close()
	p.call.Close()
}

// signal sends sig to the group, unless the last SIGKILL was sent.
func (p *proc) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.final {
		syscall.Kill(-p.pgid, sig)
	}
}

// lastKill sends the group its last SIGKILL (and its cgroup's, which reaches the processes that
// left the group); no signal goes to the group after it.
func (p *proc) lastKill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	syscall.Kill(-p.pgid, syscall.SIGKILL)
	if p.cg != nil {
		p.cg.Kill()
	}
	p.final = true
}

// letGo lets the leader be reaped, once the lifeline's keeper no longer holds the group: after
// lastKill, so that the group id is no longer rein's to signal when it may be reused.
func (p *proc) letGo() {
	if p.direct {
		keeper.release(p.pgid)
	}
	close(p.killed)
}

// stop ends the command: SIGTERM to the whole group now, SIGKILL once every process of the group
// but the supervisor has gone or the grace period has passed. It returns at once; done closes
// when the group is gone and everything is released.
func (p *proc) stop() {
	p.stopOnce.Do(func() {
		// stopping closes first: watch must not take the command's end the SIGTERM causes for
		// an end of its own, which would cut the other processes' grace period short.
		p.deadline = time.NewTimer(p.grace)
		close(p.stopping)
		p.signal(syscall.SIGTERM)
		p.signal(syscall.SIGCONT) // a stopped process acts on SIGTERM only once continued
	})
}

// awaitGroup returns when the group holds no live process but the supervisor, when the
// supervisor died, or when the grace period is over.
func (p *proc) awaitGroup() {
	// While the waiter lives, the command's shell does.
	select {
	case <-p.ended:
	case <-p.dead:
		return
	case <-p.deadline.C:
		return
	}
	// Background processes may live on, reparented away: look for one.
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for groupAlive(p.pgid) {
		select {
		case <-tick.C:
		case <-p.dead:
			return
		case <-p.deadline.C:
			return
		}
	}
}

// readBuffers keeps the output readers' buffers between commands.
var readBuffers = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// read copies the output pipe into out until end of file. Each chunk moves under outMu, so that
// catchUp can take in what the pipe holds knowing no byte is in flight.
func (p *proc) read() {
	defer close(p.drained)
	rc, err := p.r.SyscallConn()
	if err != nil {
		return
	}
	buf := readBuffers.Get().(*[32 << 10]byte)
	defer readBuffers.Put(buf)
	rc.Read(func(fd uintptr) bool {
		for {
			p.outMu.Lock()
			n, err := unix.Read(int(fd), buf[:])
			if n > 0 {
				p.out.Write(buf[:n])
			}
			p.outMu.Unlock()
			switch {
			case n > 0 || err == unix.EINTR:
			case err == unix.EAGAIN:
				return false
			default: // end of file, or an error
				return true
			}
		}
	})
}

// catchUp moves into out what the output pipe holds now. Output written later, by processes
// still running, is left to read.
func (p *proc) catchUp() {
	rc, err := p.r.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		p.outMu.Lock()
		defer p.outMu.Unlock()
		n, err := unix.IoctlGetInt(int(fd), fionread) // the bytes the pipe holds
		if err != nil || n <= 0 {
			return
		}
		buf := make([]byte, min(n, 64<<10))
		for n > 0 {
			k, err := unix.Read(int(fd), buf[:min(n, len(buf))])
			if err == unix.EINTR {
				continue
			}
			if k <= 0 {
				return
			}
			p.out.Write(buf[:k])
			n -= k
		}
	})
}

// settle is called once a stop was sent. It waits, at most max, for the processes that the
// SIGTERM ends to end (the processes of the group that do not ignore it), then takes in the
// output they left. A command that ignores SIGTERM costs no wait at all.
func (p *proc) settle(max time.Duration) {
	select {
	case <-p.killed: // the group id may no longer be ours to look up
	default:
		procs.AwaitGone(reacting(p.pgid, syscall.SIGTERM), max)
	}
	p.catchUp()
}

// report is what the control file says: the command's last working directory (set if its shell
// exited by itself) and its exit status (set if the waiter saw it end).
type report struct {
	cwd    string
	status int
	hasCwd bool
	hasSt  bool
}

func (p *proc) report() report {
	var r report
	if p.direct && p.statusKnown {
		r.status, r.hasSt = p.status, true
	} else if p.direct && p.cmd.ProcessState != nil {
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Exited():
				r.status, r.hasSt = ws.ExitStatus(), true
			case ws.Signaled():
				r.status, r.hasSt = 128+int(ws.Signal()), true
			}
		}
	}
	b, err := io.ReadAll(io.NewSectionReader(p.ctl, 0, 1<<20))
	if err != nil {
		return r
	}
	for _, e := range strings.Split(string(b), "\x00") {
		switch {
		case strings.HasPrefix(e, "cwd:"):
			r.cwd, r.hasCwd = e[len("cwd:"):], true
		case strings.HasPrefix(e, "status:") && !p.direct: // a direct command's is its shell's exit
			if n, err := strconv.Atoi(e[len("status:"):]); err == nil {
				r.status, r.hasSt = n, true
			}
		}
	}
	return r
}
