package sandbox

import (
	"fmt"
	"io"
	"sync"
)

// Support is what this machine can enforce, as Check finds it. Each mechanism it lacks comes with
// the reason, in words a person can act on.
type Support struct {
	// Landlock is the Landlock ABI version the kernel offers (Linux), 0 for none; LandlockWhy says
	// why there is none.
	Landlock    int
	LandlockWhy string
	// Seccomp reports whether the kernel takes seccomp filters (Linux); SeccompWhy why not.
	Seccomp    bool
	SeccompWhy string
	// Seatbelt is sandbox-exec's path (macOS), "" when it is missing.
	Seatbelt string
	// Contain says how a command's processes are held so that none outlives its call ("" for
	// not at all), ContainWhy why not. Namespaces reports whether a mount namespace is had with it
	// (what ProtectGit needs).
	Contain    string
	ContainWhy string
	Namespaces bool
	// Cgroups is the cgroup v2 directory in which rein makes a cgroup per command (Linux: rein's
	// own cgroup, where rein may make cgroups that cgroup.kill ends), "" when there is none, and
	// CgroupsWhy why not. Where there is one, Sandbox.Start holds each command in a cgroup of its
	// own, started from a thread confined once, instead of a helper and a PID namespace per
	// command (see Sandbox.Holds).
	Cgroups    string
	CgroupsWhy string
	// Cgroup and Bwrap describe what else the machine has, for the report: the cgroup v2
	// hierarchy rein is in, bubblewrap (not used).
	Cgroup string
	Bwrap  string
	// Forced, when set, is a reason to refuse every confined command: a test switch for the path
	// of a machine that cannot enforce the sandbox.
	Forced string

	userNS bool // containment needs a user namespace: rein is not root (Linux)
}

var (
	checkOnce sync.Once
	checked   Support
)

// Check returns what this machine supports. It asks once per process (it starts a helper process
// to try the namespaces) and remembers the answer.
func Check() Support {
	checkOnce.Do(func() { checked = check() })
	return checked
}

var (
	quickOnce sync.Once
	quicked   Support
)

// Quick returns what this machine supports but for what the probe of the namespaces learns
// (Namespaces, Contain and ContainWhy are left unset), which it starts in the background for
// Check: what Default and the Enforce of a policy that does not keep .git read-only need, without
// waiting for a helper process to start.
func Quick() Support {
	quickOnce.Do(func() {
		quicked = quick()
		go Check()
	})
	return quicked
}

// Enforce reports why policy p cannot be enforced on this machine, or nil if it can.
func (s Support) Enforce(p Policy) error {
	if p.Mode == Off || p.Mode == "" {
		return nil
	}
	reason := s.Forced
	if reason == "" {
		reason = s.lacks(p)
	}
	if reason == "" {
		return nil
	}
	return &UnsupportedError{Policy: p, Reason: reason}
}

// Default is the mode rein takes when the person names none: workspace-write where this machine
// can enforce it, off where it cannot.
func (s Support) Default() Mode {
	if s.Enforce(Policy{Mode: WorkspaceWrite}) == nil {
		return WorkspaceWrite
	}
	return Off
}

// Report writes what this machine supports, one mechanism a line, and what each means for rein.
func (s Support) Report(w io.Writer) {
	if err := s.Enforce(Policy{Mode: WorkspaceWrite}); err != nil {
		fmt.Fprintf(w, "sandbox: not available here, so rein's default is --sandbox off; asking for one refuses every command\n")
	} else {
		fmt.Fprintf(w, "sandbox: available; rein's default is --sandbox workspace-write\n")
	}
	if s.Forced != "" {
		fmt.Fprintf(w, "  forced unsupported: %s\n", s.Forced)
	}
	s.report(w)
	if s.Cgroups != "" {
		fmt.Fprintf(w, "  processes: a cgroup per command, under %s: whatever a command starts, a setsid daemon too, ends with its call and with rein\n", s.Cgroups)
	} else if s.Contain != "" {
		fmt.Fprintf(w, "  processes: %s: whatever a command starts, a setsid daemon too, ends with its call and with rein\n", s.Contain)
	} else {
		fmt.Fprintf(w, "  processes: not contained (%s): a command's process group ends with its call, but a process that leaves the group (setsid, set -m) can outlive it\n", s.ContainWhy)
	}
	if s.Namespaces {
		fmt.Fprintf(w, "  --protect-git: available (a read-only bind mount of .git in the command's mount namespace)\n")
	} else if s.Seatbelt == "" {
		fmt.Fprintf(w, "  --protect-git: not available (it needs a mount namespace: %s)\n", s.ContainWhy)
	}
	switch {
	case s.Cgroups != "":
		fmt.Fprintf(w, "  commands start from one thread of rein confined once, each in a cgroup of its own (with --protect-git, a helper and namespaces per command)\n")
	case s.Cgroup != "":
		fmt.Fprintf(w, "  cgroup v2: %s; not used (%s): rein holds a command's processes with a PID namespace\n", s.Cgroup, s.CgroupsWhy)
	}
	if s.Bwrap != "" {
		fmt.Fprintf(w, "  bubblewrap: %s (not used: rein sets up the namespaces itself)\n", s.Bwrap)
	}
}
