package shell

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"time"

	"github.com/reinhq/rein/internal/procs"
	"github.com/reinhq/rein/internal/sandbox"
)

// directScript is the bash script a command runs in when it starts directly: the command's own
// shell, rein's child, leading a fresh session and process group. Nothing of the command runs
// before rein has named the group on the lifeline (see keeperScript): the script first reads a
// line from the gate, fd 3, which rein writes once the keeper holds the group, and ends if rein
// closed it or died instead. From then on, rein's death, however it comes, ends the group: the
// keeper SIGKILLs it (and on Linux the parent-death signal SIGKILLs the shell too).
//
// rein learns that the command ended when its shell exits, and its exit status from the exit
// itself (a shell killed by signal n counts as 128+n, as bash counts it), waiting with WNOWAIT so
// that the shell stays unreaped, and the group id rein's, until the group's last SIGKILL.
//
// The shell moves the control file (fd 5, made as the call's control says) to fd 57, and on exit
// appends its working directory there, ending with a NUL; a command that itself redirects or
// closes fd 57 may divert or lose that report (as with heldControl), never the exit status.
// The output pipe is its stdout and stderr; stdin is /dev/null.
const directScript = `__rein_dir=$1 __rein_cmd=$2
read -r -u 3 __rein_go || exit 125
exec 3<&- 57>&5 5>&-
__rein_ctl=/dev/fd/57
trap 'printf "cwd:%s\0" "$PWD" 2>/dev/null >>"$__rein_ctl"' EXIT
cd -- "$__rein_dir" || exit
set --
unset __rein_dir __rein_go
eval "$__rein_cmd"
`

// startDirect runs command in dir as rein's child, held by the lifeline's keeper; see start.
func startDirect(bash, dir string, env []string, grace time.Duration, command string, out *capture, c control, box *sandbox.Sandbox) (*proc, error) {
	ctl, err := c.create()
	if err != nil {
		return nil, fmt.Errorf("create the control file: %w", err)
	}
	p := &proc{grace: grace, ctl: ctl, out: out, direct: true,
		ended: make(chan struct{}), stopping: make(chan struct{}),
		killed: make(chan struct{}), exited: make(chan struct{}), drained: make(chan struct{}), done: make(chan struct{})}
	// Every pipe is created close-on-exec, so no other process rein starts holds an end of it.
	var w, gateR, gateW *os.File
	p.r, w, err = os.Pipe()
	if err == nil {
		gateR, gateW, err = os.Pipe()
	}
	if err != nil {
		p.closeAll(w, gateR, gateW)
		return nil, fmt.Errorf("create pipes: %w", err)
	}
	cmd := exec.Command(bash, "-c", directScript, "rein-bash", dir, command)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = w, w
	cmd.ExtraFiles = []*os.File{gateR, nil, p.ctl} // 3, 4 (closed), 5
	// A new session, not only a new process group: the command has no controlling terminal, so
	// a program that would prompt on /dev/tty (sudo, ssh) fails at once instead of stopping the
	// group or writing over the person's terminal. On Linux, a parent-death signal too.
	cmd.SysProcAttr = directProcAttr()
	// A sandbox that holds its commands starts the shell itself, from its confined thread, in a
	// cgroup of its own; any other confines it through its helper.
	held := box.Holds()
	if held {
		// The keeper knows where the command's cgroup will be before it is made.
		if err := keeper.holdCgroups(bash, box.CgroupRoot()); err != nil {
			p.closeAll(w, gateR, gateW)
			return nil, err
		}
	}
	confirm := func() error { return nil }
	if box != nil && !held {
		// The helper keeps the shell's pid, descriptors and attributes.
		if confirm, err = box.Confine(cmd); err != nil {
			p.closeAll(w, gateR, gateW)
			return nil, err
		}
	}
	p.cmd = cmd

	// Linux sends the parent-death signal when the thread that forked the child exits, not the
	// process; Go may retire a thread. So the fork and the waits happen on one locked thread that
	// outlives the shell (or, held, on the sandbox's confined thread, which lives as long as rein).
	started := make(chan error, 1)
	go func() {
		var err error
		if held {
			p.cg, err = box.Start(cmd)
		} else {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			err = cmd.Start()
		}
		if err != nil {
			started <- err
			return
		}
		started <- nil
		procs.AwaitExit(cmd.Process.Pid)
		close(p.ended)
		<-p.killed
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	err = <-started
	p.refused = confirm()
	if err != nil {
		p.closeAll(w, gateR, gateW)
		if held {
			return nil, err // the sandbox's refusal, or why its start failed
		}
		return nil, fmt.Errorf("start %s: %w", bash, err)
	}
	p.pgid = cmd.Process.Pid
	w.Close()
	gateR.Close()
	if err := keeper.hold(bash, p.pgid); err != nil {
		// Closing the gate unopened ends the shell before it runs anything.
		gateW.Close()
		p.kill()
		<-p.exited
		p.closeAll()
		return nil, err
	}
	_, err = io.WriteString(gateW, "\n")
	gateW.Close()
	go p.read()
	go p.watch()
	if err != nil {
		p.stop() // the shell read end of file instead of the line and ended: nothing ran
	}
	return p, nil
}
