package shell

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/procs"
	"github.com/reinhq/rein/internal/sandbox"
)

// directScript is the bash script a command runs in when it starts directly: the command's own
// shell, rein's child, leading a fresh session and process group. Nothing of the command runs
// before rein has named the group on the lifeline (see keeperScript) and given the shell its
// command: the script first reads a line from the gate, fd 3, which rein writes once the keeper
// holds the group and the call file holds the command, and ends if rein closed the gate or died
// instead. From then on, rein's death, however it comes, ends the group: the keeper SIGKILLs it
// (and on Linux the parent-death signal SIGKILLs the shell too).
//
// The call file, fd 4, is a file with no name that rein writes before the gate opens: the
// directory to run in and the command, each ending with a NUL (so a command holds no NUL). It is
// a file, not a pipe, so bash reads it in blocks rather than a byte at a time. Because the shell
// learns its command only at the gate, it can start before the command is known: a spare (see
// Tool.take) is a shell started ahead of the next call, waiting at its gate with its start-up
// already paid. What the command sees does not tell the two apart: it runs in a fresh bash, in
// its directory with OLDPWD the same, SECONDS counting from the gate, no positional parameters.
//
// rein learns that the command ended when its shell exits, and its exit status from the exit
// itself (a shell killed by signal n counts as 128+n, as bash counts it), waiting with WNOWAIT so
// that the shell stays unreaped, and the group id rein's, until the group's last SIGKILL.
//
// The shell moves the control file (fd 5, made as the call's control says) to fd 57, and on exit
// appends its working directory there, ending with a NUL (both set up before the gate, so that
// what follows it is only the command's own); a command that itself redirects or
// closes fd 57 may divert or lose that report (as with heldControl), never the exit status.
// The output pipe is its stdout and stderr; stdin is /dev/null.
const directScript = `exec 57>&5 5>&-
__rein_ctl=/dev/fd/57
trap 'printf "cwd:%s\0" "$PWD" 2>/dev/null >>"$__rein_ctl"' EXIT
read -r -u 3 __rein_go || exit 125
IFS= read -r -d '' -u 4 __rein_dir || exit 125
IFS= read -r -d '' -u 4 __rein_cmd || exit 125
exec 3<&- 4<&-
cd -- "$__rein_dir" || exit
OLDPWD=$PWD SECONDS=0
set --
unset __rein_dir __rein_go
eval "$__rein_cmd"
`

// spawnDirect starts a shell in dir for a command to come, held by the lifeline's keeper and
// confined by box, waiting at its gate; begin gives it its command. See directScript.
func spawnDirect(bash, dir string, env []string, grace time.Duration, c control, box *sandbox.Sandbox) (*proc, error) {
	ctl, err := c.create()
	if err != nil {
		return nil, fmt.Errorf("create the control file: %w", err)
	}
	p := &proc{grace: grace, ctl: ctl, direct: true,
		ended: make(chan struct{}), stopping: make(chan struct{}),
		killed: make(chan struct{}), exited: make(chan struct{}), drained: make(chan struct{}), reported: make(chan struct{}), done: make(chan struct{})}
	if p.call, err = c.create(); err != nil {
		p.closeAll()
		return nil, fmt.Errorf("create the call file: %w", err)
	}
	// Every pipe is created close-on-exec, so no other process rein starts holds an end of it.
	var w, gateR *os.File
	p.r, w, err = os.Pipe()
	if err == nil {
		gateR, p.gate, err = os.Pipe()
	}
	if err != nil {
		p.closeAll(w, gateR)
		return nil, fmt.Errorf("create pipes: %w", err)
	}
	cmd := exec.Command(bash, "-c", directScript, "rein-bash")
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = w, w
	cmd.ExtraFiles = []*os.File{gateR, p.call, p.ctl} // 3, 4, 5
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
			p.closeAll(w, gateR)
			return nil, err
		}
	}
	confirm := func() error { return nil }
	if box != nil && !held {
		// The helper keeps the shell's pid, descriptors and attributes.
		if confirm, err = box.Confine(cmd); err != nil {
			p.closeAll(w, gateR)
			return nil, err
		}
	}
	p.cmd = cmd

	// The fork happens on a thread that lives as long as rein (the launcher's, or, held, the
	// sandbox's confined thread), for the parent-death signal; the wait for the shell's exit is a
	// parked goroutine (procs.AwaitExit), on no thread of its own.
	started := make(chan error, 1)
	go func() {
		var err error
		if held {
			p.cg, err = box.Start(cmd)
		} else {
			err = startLaunched(cmd)
		}
		if err != nil {
			started <- err
			return
		}
		started <- nil
		p.status, p.statusKnown = procs.AwaitExit(cmd.Process.Pid)
		close(p.ended)
		<-p.killed
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	err = <-started
	p.refused = confirm()
	if err != nil {
		p.closeAll(w, gateR)
		if held {
			return nil, err // the sandbox's refusal, or why its start failed
		}
		return nil, fmt.Errorf("start %s: %w", bash, err)
	}
	p.pgid = cmd.Process.Pid
	w.Close()
	gateR.Close()
	if err := keeper.hold(bash, p.pgid); err != nil {
		p.discard(nil) // closing the gate unopened ends the shell before it runs anything
		<-p.done
		return nil, err
	}
	return p, nil
}

// launcher starts, on one thread, the processes whose parent-death signal must not come while
// rein lives: Linux sends it when the thread that forked the child exits, not the process, and Go
// may retire a thread. The thread is locked to a goroutine that never returns, so it lives as
// long as rein, and a thousand commands running hold no thread of theirs (a thread locked per
// command until it was reaped did). (macOS has no such signal; there it is one more thread.)
var launcher struct {
	once   sync.Once
	starts chan launch
}

type launch struct {
	cmd  *exec.Cmd
	done chan error
}

// startLaunched starts cmd on the launcher's thread.
func startLaunched(cmd *exec.Cmd) error {
	launcher.once.Do(func() {
		launcher.starts = make(chan launch)
		go func() {
			runtime.LockOSThread() // never unlocked: the goroutine never returns
			for l := range launcher.starts {
				l.done <- l.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	launcher.starts <- launch{cmd, done}
	return <-done
}

// errGone is begin's error when the shell waiting at the gate is gone: nothing of the command ran.
var errGone = errors.New("the shell ended before it was given its command")

// begin gives a shell that spawn started its command, to run in dir with its output going
// to out, and opens its gate. On errGone the command did not run and p is being discarded.
func (p *proc) begin(dir, command string, out *capture) error {
	_, err := io.WriteString(p.call, dir+"\x00"+command+"\x00")
	if err == nil {
		_, err = p.call.Seek(0, io.SeekStart) // the shell shares the offset: it reads from the start
	}
	if err == nil {
		select {
		case <-p.ended: // it died waiting (someone killed it)
			err = errGone
		default:
			_, err = io.WriteString(p.gate, "\n")
		}
	}
	if err != nil {
		p.discard(nil) // the shell ends at the closed gate, if it still lives: nothing ran
		return errGone
	}
	p.out = out
	p.gate.Close()
	go p.read()
	go p.watch()
	return nil
}

// discard ends a shell that spawn started and no command was given: its gate closes, so it
// exits without running anything, and its life ends as a command's does (done closes). What it
// wrote goes to out, or nowhere if out is nil.
func (p *proc) discard(out *capture) {
	if out == nil {
		out = newCapture(0, 0)
	}
	p.out = out
	p.gate.Close()
	go p.read()
	go p.watch()
}

// hasNUL reports whether command holds a NUL byte, which no bash command line can.
func hasNUL(command string) bool { return strings.IndexByte(command, 0) >= 0 }
