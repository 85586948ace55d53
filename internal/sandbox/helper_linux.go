package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// spec is what rein tells the helper to do, as its first argument (JSON). rein decides; the helper
// carries it out and knows nothing of policies.
type spec struct {
	// Write are the directories and Files the files a command may write; Rights what Landlock
	// handles.
	Write  []string `json:"write"`
	Files  []string `json:"files"`
	Rights rights   `json:"rights"`
	// Network: the seccomp filter lets sockets of every family be made.
	Network bool `json:"network,omitempty"`
	// Contain: the helper is the first process of a new PID and mount namespace, in which it
	// mounts a /proc of its own. ReadOnly are paths it then binds read-only.
	Contain  bool     `json:"contain,omitempty"`
	ReadOnly []string `json:"read_only,omitempty"`
	// DropCaps: the helper holds capabilities in a user namespace, for the mounts, which the
	// command must not have.
	DropCaps bool `json:"drop_caps,omitempty"`
	// Report is the descriptor on which the helper says why it failed; end of file with nothing
	// said means it executed the command.
	Report int `json:"report"`
	// Await, in a user namespace, is the descriptor of a pipe on which rein says, with a byte,
	// that it has mapped the namespace (userMap); end of file instead means it could not, or is
	// gone, and the helper exits having done nothing.
	Await int `json:"await,omitempty"`
	// Probe: set up the namespaces, then exit 0 instead of confining and executing anything.
	Probe bool `json:"probe,omitempty"`
	// Init: set up the namespaces, close the report descriptor, then stay, as the first process
	// of the PID namespace a sandbox's confined thread starts its commands in (see Holds), reaping
	// the processes it inherits, until killed.
	Init bool `json:"init,omitempty"`
	// Lifeline, with Init, is the descriptor of a pipe whose only write end rein holds: at its
	// end of file (rein is gone, however it died) the first process exits, and the kernel ends
	// every process of the namespace.
	Lifeline int `json:"lifeline,omitempty"`
}

// helper is the sandbox helper's work: args are the spec, then the path and the arguments of what
// it executes. It returns only on failure, with the exit status, having said why on the report
// descriptor.
func helper(args []string) int {
	// Landlock, no_new_privs and a seccomp filter without TSYNC bind the calling thread; the
	// program it executes inherits them. So everything happens on one thread.
	runtime.LockOSThread()
	var sp spec
	if len(args) < 1 || json.Unmarshal([]byte(args[0]), &sp) != nil || sp.Report < 3 {
		fmt.Fprintln(os.Stderr, "rein: the sandbox helper is started by rein, not by hand")
		return 2
	}
	report := os.NewFile(uintptr(sp.Report), "report")
	unix.CloseOnExec(sp.Report)
	fail := func(err error) int {
		fmt.Fprint(report, err.Error())
		return 126
	}
	if sp.Await >= 3 {
		var b [1]byte
		n, _ := os.NewFile(uintptr(sp.Await), "await").Read(b[:])
		if n != 1 {
			return 126 // rein said why, or is gone
		}
	}
	if sp.Contain {
		if err := namespace(sp.ReadOnly); err != nil {
			return fail(err)
		}
	}
	if sp.Probe {
		return 0
	}
	if sp.Init {
		var life *os.File
		if sp.Lifeline >= 3 {
			life = os.NewFile(uintptr(sp.Lifeline), "lifeline")
		}
		report.Close()
		reapForever(life)
	}
	if len(args) < 3 {
		return fail(errors.New("nothing to execute"))
	}
	if sp.DropCaps {
		if err := dropCaps(); err != nil {
			return fail(err)
		}
	}
	if err := landlock(sp.Rights, sp.Write, sp.Files); err != nil {
		return fail(err)
	}
	if err := filter(sp.Network); err != nil {
		return fail(err)
	}
	err := syscall.Exec(args[1], args[2:], os.Environ())
	return fail(fmt.Errorf("execute %s: %w", args[1], err))
}

// reapForever is the life of a PID namespace's first process: it reaps every process whose
// parent died (they become its children) until end of file on life (nil: until killed), then
// exits, and the kernel kills every process of the namespace.
func reapForever(life *os.File) {
	gone := make(chan struct{})
	if life != nil {
		go func() {
			buf := make([]byte, 64)
			for {
				if _, err := life.Read(buf); err != nil {
					close(gone)
					return
				}
			}
		}()
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGCHLD)
	for {
		for {
			var ws syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
		select {
		case <-sigs:
		case <-gone:
			os.Exit(0)
		}
	}
}

// namespace sets up the mount namespace the helper starts in: nothing it mounts reaches the
// host's, /proc shows the new PID namespace (so that $$ and /proc/$$ agree), and each path of
// readOnly is bound read-only over itself.
func namespace(readOnly []string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mount namespace private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc for the PID namespace: %w", err)
	}
	for _, p := range readOnly {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", p, err)
		}
		// A remount keeps the flags the mount was locked with (in a user namespace it must).
		var st unix.Statfs_t
		if err := unix.Statfs(p, &st); err != nil {
			return fmt.Errorf("read the mount flags of %s: %w", p, err)
		}
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
		for _, f := range []struct{ st, ms uintptr }{
			{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
			{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
		} {
			if uintptr(st.Flags)&f.st != 0 {
				flags |= f.ms
			}
		}
		if err := unix.Mount("", p, "", flags, ""); err != nil {
			return fmt.Errorf("make %s read-only: %w", p, err)
		}
	}
	return nil
}

// dropCaps gives up every capability the helper holds (in its user namespace), ambient and
// inheritable ones included, so that none reaches the command.
func dropCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("drop ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}
