package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A sandbox that holds its commands (Holds) confines one thread of rein, once, and starts every
// command from it. A goroutine locks itself to its OS thread and there, as the helper does for
// itself: takes a mount namespace of its own (the thread's alone: every other thread of rein
// keeps the host's), makes the PID namespace its children start in, and starts that namespace's
// first process (the helper, which mounts the namespace's /proc, then stays, reaping orphans); then applies Landlock, no_new_privs and the seccomp
// filter, which all bind the calling thread only. Every command then starts from that thread
// and inherits all of it, as it would from a helper of its own, at the cost of a fork instead of
// a rein binary's start per command. The thread never runs anything else: Go starts no thread
// from a locked one (the runtime makes new threads from a clean template thread instead), and
// the goroutine never unlocks, so the thread ends with rein, or when the namespace's first
// process died (the next command confines a new thread).
//
// The commands of one sandbox share its PID namespace, so the namespace's end cannot end each
// call's processes: each command starts in a cgroup of its own (CLONE_INTO_CGROUP), whose
// cgroup.kill ends every process the command started, however far it left its process group.
// A command is still rein's own child, with the pid rein sees, so that waiting for it, its
// process group, Stop and the lifeline's keeper work as for a command started directly.
//
// Taking namespaces from one thread needs CAP_SYS_ADMIN (a thread of a process with several
// cannot enter a user namespace), so a sandbox holds its commands only when rein is root; else
// each command has a helper and a PID namespace of its own (Confine).

// launcher is a sandbox's confined thread, started with its first command (and tried again with
// the next when it could not be confined, as the helper is tried for each command).
type launcher struct {
	mu     sync.Mutex
	start  chan launch // nil until the thread is confined
	init   *exec.Cmd   // the first process of the thread's PID namespace
	life   *os.File    // the write end of init's lifeline: rein's death closes it, and init exits
	closed bool
}

// launch asks the confined thread to start cmd, answering on done.
type launch struct {
	cmd  *exec.Cmd
	done chan error
}

// CgroupRoot is the cgroup under which s makes its commands' cgroups (see the package's
// CgroupRoot), "" if it makes none: the lifeline's keeper kills and removes it when rein dies.
func (s *Sandbox) CgroupRoot() string {
	if !s.Holds() {
		return ""
	}
	return CgroupRoot(s.support().Cgroups)
}

// Holds reports whether s starts its commands itself (Start), from a thread confined once, in a
// PID namespace of the sandbox's and each in a cgroup of its own: on Linux, where rein is root,
// may make PID namespaces and may make cgroups, unless .git is to be kept read-only
// (--protect-git): a .git that a command makes is bound read-only for the next command only if
// each command's mount namespace is set up anew.
func (s *Sandbox) Holds() bool {
	return s != nil && s.support().Cgroups != "" && s.support().Contain != "" && !s.support().userNS && !s.Anew()
}

// Start starts cmd confined, in a new cgroup that only its processes are in, and returns the
// cgroup, which the caller kills (Cgroup.Kill) when the command is done and removes once its last
// process is reaped. cmd.Env gets TMPDIR, the sandbox's temporary directory. The process cmd
// starts is rein's child, in the sandbox's PID namespace, whose first process dies with rein
// (its parent-death signal), so that the kernel kills every command then; cmd's own
// SysProcAttr.Pdeathsig is cleared. When this machine cannot enforce the policy, Start returns an *UnsupportedError; when the
// thread could not be confined, a *LaunchError; either way nothing ran.
func (s *Sandbox) Start(cmd *exec.Cmd) (*Cgroup, error) {
	if err := s.support().Enforce(s.policy); err != nil {
		return nil, err
	}
	if !s.Holds() {
		return nil, &LaunchError{Msg: "this sandbox does not start commands itself (no cgroup for them)"}
	}
	s.launch.mu.Lock()
	defer s.launch.mu.Unlock()
	if s.launch.closed {
		return nil, errors.New("the sandbox was closed")
	}
	if s.launch.start == nil {
		if err := s.confineThread(); err != nil {
			return nil, &LaunchError{Msg: err.Error()}
		}
	}
	cg, err := newCgroup(s.support().Cgroups)
	if err != nil {
		return nil, err
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = withEnv(env, "TMPDIR", s.temp)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// No parent-death signal of its own: its parent is outside its PID namespace, where Go's
	// start takes a parent of pid 0 for a dead one and kills the child at once. The namespace's
	// first process has one, and its death ends every process of the namespace.
	cmd.SysProcAttr.Pdeathsig = 0
	cmd.SysProcAttr.UseCgroupFD = true
	cmd.SysProcAttr.CgroupFD = int(cg.fd.Fd())
	done := make(chan error, 1)
	s.launch.start <- launch{cmd, done}
	err = <-done
	cg.fd.Close()
	cg.fd = nil
	if err != nil {
		cg.Remove()
		return nil, err
	}
	return cg, nil
}

// confineThread starts the goroutine of the confined thread, or says why it could not be
// confined. s.launch.mu is held.
func (s *Sandbox) confineThread() error {
	type confined struct {
		init *exec.Cmd
		life *os.File
		err  error
	}
	start, ready := make(chan launch), make(chan confined, 1)
	r := rightsFor(s.support().Landlock, s.policy)
	go func() {
		// Never unlocked: when the goroutine ends, so does its thread, namespaces and all.
		runtime.LockOSThread()
		init, life, err := s.enterNamespaces()
		if err == nil {
			err = landlock(r, s.write, []string{os.DevNull})
		}
		if err == nil {
			err = filter(s.policy.Network)
		}
		if err != nil && init != nil {
			life.Close()
			init.Process.Kill()
			init.Wait()
		}
		ready <- confined{init, life, err}
		if err != nil {
			return
		}
		for l := range start {
			l.done <- l.cmd.Start()
		}
	}()
	c := <-ready
	if c.err != nil {
		return c.err
	}
	s.launch.start, s.launch.init, s.launch.life = start, c.init, c.life
	go func() {
		// Should the namespace's first process die (every command in it dies with it), the thread
		// ends, and the next command confines another.
		c.init.Wait()
		s.launch.mu.Lock()
		defer s.launch.mu.Unlock()
		if s.launch.start == start {
			close(start)
			c.life.Close()
			s.launch.start, s.launch.init, s.launch.life = nil, nil, nil
		}
	}()
	return nil
}

// enterNamespaces gives the calling (locked) thread a mount namespace of its own and a PID
// namespace for its children, and starts that namespace's first process: the helper, which
// mounts its /proc, then stays until end of file on its lifeline, whose write end it returns.
func (s *Sandbox) enterNamespaces() (*exec.Cmd, *os.File, error) {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return nil, nil, fmt.Errorf("take a mount namespace for the sandbox's commands: %w", err)
	}
	if err := unix.Unshare(unix.CLONE_NEWPID); err != nil {
		return nil, nil, fmt.Errorf("make a PID namespace for the sandbox's commands: %w", err)
	}
	b, err := json.Marshal(spec{Contain: true, Init: true, Report: 3, Lifeline: 4})
	if err != nil {
		return nil, nil, err
	}
	// Both pipes are created close-on-exec: no command holds an end of either.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("create the sandbox helper's report pipe: %w", err)
	}
	defer r.Close()
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		w.Close()
		return nil, nil, fmt.Errorf("create the sandbox namespace's lifeline: %w", err)
	}
	cmd := exec.Command(s.exe, helperArg, string(b))
	cmd.ExtraFiles = []*os.File{w, lifeR}
	cmd.Dir = "/"
	cmd.Env = []string{}
	// Its parent is this thread, which lives as long as rein; the lifeline, not a parent-death
	// signal, ends it with rein (Go's start cannot give one to the first process of a new PID
	// namespace: it sees a parent of pid 0 and takes it for a dead one).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	w.Close()
	lifeR.Close()
	if err != nil {
		lifeW.Close()
		return nil, nil, fmt.Errorf("start the sandbox's PID namespace: %w", err)
	}
	msg, _ := io.ReadAll(io.LimitReader(r, 4<<10))
	if len(msg) > 0 {
		lifeW.Close()
		cmd.Process.Kill()
		cmd.Wait()
		return nil, nil, errors.New(string(msg))
	}
	return cmd, lifeW, nil
}

// closeLauncher ends the confined thread, if one was started.
func (s *Sandbox) closeLauncher() {
	s.launch.mu.Lock()
	defer s.launch.mu.Unlock()
	s.launch.closed = true
	if s.launch.start != nil {
		close(s.launch.start)
		s.launch.life.Close()
		s.launch.init.Process.Kill()
		s.launch.start, s.launch.init, s.launch.life = nil, nil, nil
	}
}
