package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// selfExe is the helper's executable: rein itself, the very binary running (even if it was
// replaced on disk since).
const selfExe = "/proc/self/exe"

// Confine rewrites cmd, which is to execute a command's supervisor, so that it runs confined:
// rein's helper starts instead, confines itself as s's policy says and executes the supervisor,
// keeping its pid, so that the process cmd.Start starts is the supervisor's still. cmd.Env gets
// TMPDIR, the sandbox's temporary directory; cmd.ExtraFiles a descriptor or two more, after the
// caller's (the second when the helper awaits its user namespace's mapping: userMap).
//
// When this machine cannot enforce the policy, Confine returns an *UnsupportedError and cmd must
// not be started. Otherwise it returns a function to call once cmd.Start returned (whether it
// succeeded or not): it maps the helper's user namespace if it has one, waits until the helper
// executed the supervisor, and returns a *LaunchError if the helper failed instead; the helper
// has exited then, having run nothing.
func (s *Sandbox) Confine(cmd *exec.Cmd) (func() error, error) {
	if err := s.support().Enforce(s.policy); err != nil {
		return nil, err
	}
	// /dev/null is the one file outside the writable directories a command may write. /dev/tty
	// is not granted: a command leads a session of its own and has no terminal to open.
	sp := spec{Write: s.write, Files: []string{os.DevNull}, Rights: rightsFor(s.support().Landlock, s.policy), Network: s.policy.Network}
	if s.support().Contain != "" {
		sp.Contain, sp.DropCaps = true, s.support().userNS
		if s.policy.ProtectGit && s.policy.Mode == WorkspaceWrite {
			git := filepath.Join(s.workspace, ".git")
			if _, err := os.Lstat(git); err == nil {
				sp.ReadOnly = append(sp.ReadOnly, git)
			}
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create the sandbox helper's report pipe: %w", err)
	}
	sp.Report = 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	var mapping *userMap
	if sp.Contain && s.support().userNS {
		if mapping, err = newUserMap(&sp, cmd); err != nil {
			r.Close()
			w.Close()
			return nil, err
		}
	}
	b, err := json.Marshal(sp)
	if err != nil {
		r.Close()
		w.Close()
		mapping.abandon()
		return nil, err
	}
	cmd.Args = append([]string{"rein", helperArg, string(b), cmd.Path}, cmd.Args...)
	cmd.Path = s.exe
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = withEnv(env, "TMPDIR", s.temp)
	if sp.Contain {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		namespaces(cmd.SysProcAttr, s.support().userNS)
	}
	return func() error {
		w.Close()
		defer r.Close()
		if err := mapping.write(cmd.Process); err != nil {
			return &LaunchError{Msg: err.Error()} // the helper exits at the pipe's end, having run nothing
		}
		msg, _ := io.ReadAll(io.LimitReader(r, 4<<10))
		if len(msg) > 0 {
			return &LaunchError{Msg: string(msg)}
		}
		return nil
	}, nil
}

// userMap maps the user namespace of a helper rein started unprivileged, once the helper has
// executed: rein is not dumpable (cmd/rein hardens itself), and neither is a child of it until it
// executes something, so the kernel would give only root the child's /proc files, its uid_map
// and gid_map among them, before that. Once it has executed rein anew it is dumpable, and rein
// writes them (the user maps to itself, setgroups refused), then lets it go on through a pipe;
// the helper waits for that before anything else (spec.Await). rein never becomes dumpable.
type userMap struct {
	r, w *os.File
}

// newUserMap adds the pipe the helper of cmd awaits its mapping on to cmd and sp.
func newUserMap(sp *spec, cmd *exec.Cmd) (*userMap, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create the sandbox helper's mapping pipe: %w", err)
	}
	sp.Await = 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	return &userMap{r: r, w: w}, nil
}

// write maps the user namespace of the helper p (nil: it did not start) and lets it go on.
func (m *userMap) write(p *os.Process) error {
	if m == nil {
		return nil
	}
	m.r.Close()
	defer m.w.Close()
	if p == nil {
		return nil
	}
	for _, f := range []struct{ name, text string }{
		{"setgroups", "deny"},
		{"uid_map", fmt.Sprintf("%d %d 1\n", os.Getuid(), os.Getuid())},
		{"gid_map", fmt.Sprintf("%d %d 1\n", os.Getgid(), os.Getgid())},
	} {
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/%s", p.Pid, f.name), []byte(f.text), 0); err != nil {
			return fmt.Errorf("map the sandbox helper's user namespace: %w", err)
		}
	}
	if _, err := m.w.Write([]byte{1}); err != nil {
		return fmt.Errorf("let the sandbox helper go on: %w", err)
	}
	return nil
}

// abandon closes the pipe of a mapping never to be written.
func (m *userMap) abandon() {
	if m != nil {
		m.r.Close()
		m.w.Close()
	}
}

// namespaces asks for a new PID and mount namespace for the helper; in a user namespace too when
// rein is not root, where the helper keeps CAP_SYS_ADMIN (as an ambient capability, which it
// drops before it executes anything) to mount what the namespace needs. The user namespace maps
// the user to itself, written by rein once the helper has executed (userMap), not by Go's start.
func namespaces(attr *syscall.SysProcAttr, userNS bool) {
	attr.Cloneflags |= syscall.CLONE_NEWPID | syscall.CLONE_NEWNS
	if !userNS {
		return
	}
	attr.Cloneflags |= syscall.CLONE_NEWUSER
	attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
}

// check finds what this Linux machine supports.
func check() Support {
	s := quick()
	if why := probe(selfExe, s.userNS); why != "" {
		s.ContainWhy = why
	} else {
		s.Namespaces = true
		s.Contain = "a PID namespace per command"
		if s.userNS {
			s.Contain += " (in a user namespace)"
		}
	}
	return s
}

// quick is check without the probe of the namespaces, which starts a helper process: what the
// kernel offers (Landlock, seccomp), the cgroups and bubblewrap.
func quick() Support {
	var s Support
	s.Landlock, s.LandlockWhy = landlockABI()
	s.SeccompWhy = seccompWhy()
	s.Seccomp = s.SeccompWhy == ""
	s.userNS = os.Geteuid() != 0
	s.Cgroup, s.Cgroups, s.CgroupsWhy = cgroupV2()
	if p, err := exec.LookPath("bwrap"); err == nil {
		s.Bwrap = p
	}
	return s
}

// lacks says what this machine lacks to enforce p, or "".
func (s Support) lacks(p Policy) string {
	switch {
	case s.Landlock == 0:
		return s.LandlockWhy
	case s.Landlock < minABI:
		return fmt.Sprintf("this kernel's Landlock is ABI %d, and confining writes needs ABI %d (Linux 6.2 or later)", s.Landlock, minABI)
	case !s.Seccomp:
		return s.SeccompWhy
	case p.ProtectGit && p.Mode == WorkspaceWrite && !s.Namespaces:
		return "keeping .git read-only (--protect-git) needs a mount namespace, and " + s.ContainWhy
	}
	return ""
}

// report writes the Linux mechanisms' lines of Support.Report.
func (s Support) report(w io.Writer) {
	switch {
	case s.Landlock == 0:
		fmt.Fprintf(w, "  Landlock: none: %s\n", s.LandlockWhy)
	case s.Landlock < minABI:
		fmt.Fprintf(w, "  Landlock: ABI %d, too old: confining writes needs ABI %d (Linux 6.2)\n", s.Landlock, minABI)
	default:
		fmt.Fprintf(w, "  Landlock: ABI %d: writes confined", s.Landlock)
		if s.Landlock >= 4 {
			fmt.Fprintf(w, "; TCP connect and bind refused")
		}
		if s.Landlock >= 6 {
			fmt.Fprintf(w, "; signals and abstract Unix sockets kept inside the sandbox")
		}
		fmt.Fprintln(w)
	}
	if s.Seccomp {
		fmt.Fprintf(w, "  seccomp: sockets other than Unix ones, io_uring and 32-bit system calls refused\n")
	} else {
		fmt.Fprintf(w, "  seccomp: none: %s\n", s.SeccompWhy)
	}
}

// probes counts the probes started, for the tests.
var probes atomic.Int32

// probeWait is how long the probe's helper may take.
var probeWait = 5 * time.Second

// probe starts the helper in the namespaces a command would get, to learn whether this machine
// grants them: "" if it does, or why not.
func probe(exe string, userNS bool) string {
	probes.Add(1)
	r, w, err := os.Pipe()
	if err != nil {
		return err.Error()
	}
	defer r.Close()
	sp := spec{Contain: true, Probe: true, Report: 3}
	cmd := exec.Command(exe, helperArg)
	cmd.ExtraFiles = []*os.File{w}
	var mapping *userMap
	if userNS {
		if mapping, err = newUserMap(&sp, cmd); err != nil {
			w.Close()
			return err.Error()
		}
	}
	b, _ := json.Marshal(sp)
	cmd.Args = append(cmd.Args, string(b))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	namespaces(cmd.SysProcAttr, userNS)
	err = cmd.Start()
	w.Close()
	what := "a PID namespace"
	if userNS {
		what = "a user namespace with a PID namespace (rein is not root)"
	}
	if err != nil {
		mapping.abandon()
		return fmt.Sprintf("this machine refuses %s: %v", what, err)
	}
	if err := mapping.write(cmd.Process); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Sprintf("this machine grants %s but rein could not map it: %v", what, err)
	}
	// A program whose main does not call Main first would run as itself, not as the helper: it
	// gets a moment, then its namespace, all it started included, ends with it.
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	timer := time.AfterFunc(probeWait, func() { cmd.Process.Kill() })
	msg, _ := io.ReadAll(io.LimitReader(r, 4<<10))
	werr := <-waited
	if !timer.Stop() {
		return fmt.Sprintf("the helper trying %s did not answer within %v (does this program call sandbox.Main first?)", what, probeWait)
	}
	switch {
	case len(msg) > 0:
		return fmt.Sprintf("this machine grants %s but not its setup: %s", what, msg)
	case werr != nil:
		return fmt.Sprintf("the helper trying %s failed: %v", what, werr)
	}
	return ""
}

// cgroupV2 describes the cgroup v2 group this process is in and whether rein could make groups in
// it ("" when there is no cgroup v2 hierarchy); dir is that group's directory when rein can make a
// cgroup in it that cgroup.kill ends (it tries), else why says why not.
func cgroupV2() (desc, dir, why string) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", "", "no /proc/self/cgroup"
	}
	var rel string
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			rel = p
		}
	}
	if rel == "" {
		return "", "", "this process is in no cgroup v2 hierarchy"
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", "no /proc/self/mountinfo"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fs := strings.Fields(pre)
		if !ok || len(fs) < 5 || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		d := filepath.Join(fs[4], rel)
		if unix.Access(d, unix.W_OK) != nil {
			return d + " (not writable by rein)", "", "rein may not make cgroups in " + d
		}
		if why := tryCgroup(d); why != "" {
			return d + " (writable by rein)", "", why
		}
		return d + " (writable by rein)", d, ""
	}
	return "", "", "no cgroup v2 hierarchy is mounted"
}

// tryCgroup makes and removes a cgroup in dir: "" if that works and the kernel has cgroup.kill
// (Linux 5.14), else why not.
func tryCgroup(dir string) string {
	probe := filepath.Join(dir, fmt.Sprintf("rein-probe-%d", os.Getpid()))
	err := os.Mkdir(probe, 0o755)
	if errors.Is(err, fs.ErrExist) {
		// Left by a process of the same pid that was killed while it probed: a probe holds no
		// process, so it can be removed (one that does hold some is not ours, and stays).
		syscall.Rmdir(probe)
		err = os.Mkdir(probe, 0o755)
	}
	if err != nil {
		return fmt.Sprintf("rein may not make cgroups in %s: %v", dir, err)
	}
	defer syscall.Rmdir(probe)
	if _, err := os.Stat(filepath.Join(probe, "cgroup.kill")); err != nil {
		return "this kernel's cgroups have no cgroup.kill (Linux 5.14)"
	}
	return ""
}
