package sandbox

import (
	"fmt"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompWhy is "" when the kernel takes seccomp filters, or why it does not.
func seccompWhy() string {
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return fmt.Sprintf("this kernel takes no seccomp filters (%v)", err)
	}
	return ""
}

// kernelCalls are system calls that reach into the kernel itself, refused in the sandbox whatever
// the user: loading a module or a new kernel, BPF programs, rebooting, swap, port I/O, and opening
// a file by handle (which goes round paths). They matter when rein runs as root.
var kernelCalls = []string{"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"bpf", "reboot", "swapon", "swapoff", "iopl", "ioperm", "open_by_handle_at"}

// ringCalls are io_uring's: its requests are not system calls, so a filter would not see a socket
// or a connect made through it.
var ringCalls = []string{"io_uring_setup", "io_uring_enter", "io_uring_register"}

// filterPolicy is the seccomp policy of a sandbox: it allows every system call but ringCalls,
// kernelCalls and, unless network is allowed, a socket of any family but AF_UNIX. Refused calls
// fail with EPERM. Names the architecture does not have are left out.
func filterPolicy(a *arch.Info, network bool) seccomp.Policy {
	var names []string
	for _, n := range append(append([]string{}, ringCalls...), kernelCalls...) {
		if _, ok := a.SyscallNames[n]; ok {
			names = append(names, n)
		}
	}
	groups := []seccomp.SyscallGroup{{Names: names, Action: seccomp.ActionErrno}}
	if !network {
		notUnix := seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.NotEqual, Value: unix.AF_UNIX}}
		groups = append(groups, seccomp.SyscallGroup{Action: seccomp.ActionErrno, NamesWithCondtions: []seccomp.NameWithConditions{
			{Name: "socket", Conditions: notUnix},
			{Name: "socketpair", Conditions: notUnix},
		}})
	}
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups}
}

// archGuard is a filter that refuses (ENOSYS) every system call made with another architecture's
// convention than the native one: a 64-bit process can make 32-bit calls (int 0x80 on x86-64),
// whose numbers the policy's filter, written for the native table, does not check.
func archGuard(a *arch.Info) ([]bpf.RawInstruction, error) {
	return bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(a.ID), SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
	})
}

// filter installs the sandbox's seccomp filters on the calling thread, which passes them on to
// what it executes. It sets no_new_privs, which an unprivileged filter requires.
func filter(network bool) error {
	a, err := arch.GetInfo("")
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	guard, err := archGuard(a)
	if err != nil {
		return fmt.Errorf("seccomp: assemble the architecture guard: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	prog := make([]unix.SockFilter, len(guard))
	for i, in := range guard {
		prog[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp: install the architecture guard: %w", e)
	}
	if err := seccomp.LoadFilter(seccomp.Filter{Policy: filterPolicy(a, network)}); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}
