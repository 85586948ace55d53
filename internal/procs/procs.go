//go:build linux || darwin

// Package procs asks the operating system about processes, on the platforms rein runs on: what a
// process is (its parent, its group, whether it has exited, which signals it ignores, its name),
// which processes make up a process group, and when processes have exited. It owns no process:
// it reads and it waits, and it never reaps.
//
// On Linux it reads /proc and waits on pidfds (polling on kernels before 5.3) and on waitid with
// WNOWAIT. On macOS it reads the kern.proc sysctls and waits on kqueue's process filter
// (EVFILT_PROC, NOTE_EXIT). Other systems are refused at build time (see unsupported.go).
package procs

import (
	"errors"
	"io/fs"
	"syscall"
	"time"
)

// Proc is what rein reads of one process.
type Proc struct {
	PID  int
	PPID int
	PGID int
	// Zombie is true once the process has exited: it waits to be reaped, or is being torn down.
	Zombie bool
	// Ignored is the set of signals the process ignores (SIG_IGN): bit n-1 for signal n.
	Ignored uint64
	// Comm is the process's name as the kernel keeps it: at most 15 bytes on Linux, 16 on macOS.
	Comm string
	// Threads is how many threads the process has (Linux; 0 where Read does not say).
	Threads int
}

// Ignores reports whether the process ignores sig.
func (p Proc) Ignores(sig syscall.Signal) bool {
	return sig >= 1 && sig <= 64 && p.Ignored&(1<<(sig-1)) != 0
}

// Alive reports whether pid is a process that has not exited (a zombie has).
func Alive(pid int) bool {
	p, err := Read(pid)
	return err == nil && !p.Zombie
}

// Live lists the processes of group pgid that have not exited, its leader included. When the
// group cannot be read it returns the error, and what it could read.
func Live(pgid int) ([]Proc, error) {
	all, err := Group(pgid)
	live := all[:0]
	for _, p := range all {
		if !p.Zombie {
			live = append(live, p)
		}
	}
	return live, err
}

// gone reports whether pid has exited: there is no such process, or it is a zombie.
func gone(pid int) bool {
	p, err := Read(pid)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	return p.Zombie
}

// pollGone is AwaitGone without a kernel notification: it looks every millisecond.
func pollGone(pids []int, deadline time.Time) {
	for _, pid := range pids {
		for !gone(pid) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
}
