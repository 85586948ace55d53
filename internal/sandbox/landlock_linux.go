package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// minABI is the least Landlock ABI that confines writes: ABI 3 (Linux 6.2) added truncation,
// without which truncate(2) empties any file the user may write, inside the sandbox or out.
const minABI = 3

// The Landlock access rights rein handles. Reading, executing and device ioctls are not handled,
// so they stay as the user has them: a command reads everywhere.
const (
	// writeRightsV1 are ABI 1's rights to change the filesystem.
	writeRightsV1 = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	// writeRights adds moving and linking across directories (ABI 2) and truncation (ABI 3).
	writeRights = writeRightsV1 | unix.LANDLOCK_ACCESS_FS_REFER | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	// fileRights are the rights a rule on a file (not a directory) may carry: /dev/null's.
	fileRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE
	// netRights are TCP's (ABI 4). UDP is left to the seccomp filter, which refuses its sockets.
	netRights = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
)

// landlockABI asks the kernel which Landlock ABI it offers: 0 and the reason when none.
func landlockABI() (int, string) {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case e == 0:
		return int(v), ""
	case e == unix.ENOSYS:
		return 0, "this kernel was built without Landlock (it needs Linux 6.2 or later with CONFIG_SECURITY_LANDLOCK)"
	case e == unix.EOPNOTSUPP:
		return 0, "Landlock is built into this kernel but not enabled (add landlock to the lsm= boot parameter)"
	default:
		return 0, fmt.Sprintf("the kernel refused to say its Landlock version: %v", e)
	}
}

// rights are what a ruleset handles at a given ABI, for a policy.
type rights struct {
	FS     uint64 `json:"fs"`
	Net    uint64 `json:"net,omitempty"`
	Scoped uint64 `json:"scoped,omitempty"`
}

// rightsFor is what rein asks Landlock to handle at ABI abi (at least minABI) for policy p: every
// right to write, TCP unless the network is allowed (ABI 4), and, from ABI 6, signals to
// processes outside the sandbox (rein's own among them) and, unless the network is allowed,
// abstract Unix sockets outside it.
func rightsFor(abi int, p Policy) rights {
	r := rights{FS: writeRights}
	if abi >= 4 && !p.Network {
		r.Net = netRights
	}
	if abi >= 6 {
		r.Scoped = unix.LANDLOCK_SCOPE_SIGNAL
		if !p.Network {
			r.Scoped |= unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		}
	}
	return r
}

// rulesetAttr is struct landlock_ruleset_attr as far as rein uses it (ABI 6).
type rulesetAttr struct {
	fs, net, scoped uint64
}

// landlock confines the calling thread (and what it executes) to writing dirs and files, with
// the rights r. It sets no_new_privs, which Landlock requires.
func landlock(r rights, dirs, files []string) error {
	attr := rulesetAttr{fs: r.FS, net: r.Net, scoped: r.Scoped}
	// The kernel takes the struct as long as it knows it; a longer one must end in zeros.
	size := unsafe.Sizeof(attr)
	switch {
	case r.Scoped == 0 && r.Net == 0:
		size = 8
	case r.Scoped == 0:
		size = 16
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return fmt.Errorf("create a Landlock ruleset: %w", e)
	}
	defer unix.Close(int(fd))
	add := func(path string, access uint64) error {
		pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %w", path, err)
		}
		defer unix.Close(pfd)
		rule := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(pfd)}
		_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
		if e != 0 {
			return fmt.Errorf("allow writes to %s: %w", path, e)
		}
		return nil
	}
	for _, d := range dirs {
		if err := add(d, r.FS); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := add(f, r.FS&fileRights); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return fmt.Errorf("enforce the Landlock ruleset: %w", e)
	}
	return nil
}
