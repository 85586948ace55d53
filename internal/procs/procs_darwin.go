package procs

import (
	"fmt"
	"io/fs"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// sZomb is a process's state once it has exited and awaits collection by its parent (SZOMB in
// <sys/proc.h>).
const sZomb = 5

// Read returns what the kern.proc.pid sysctl says of pid. When there is no such process the
// error satisfies errors.Is(err, fs.ErrNotExist).
func Read(pid int) (Proc, error) {
	ks, err := unix.SysctlKinfoProcSlice("kern.proc.pid", pid)
	if err != nil {
		return Proc{}, fmt.Errorf("read process %d: %w", pid, err)
	}
	if len(ks) == 0 {
		return Proc{}, fmt.Errorf("read process %d: %w", pid, fs.ErrNotExist)
	}
	return fromKinfo(&ks[0]), nil
}

// Group lists the processes of group pgid, its leader and zombies included, from the
// kern.proc.pgrp sysctl.
func Group(pgid int) ([]Proc, error) {
	ks, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgid)
	if err != nil {
		return nil, fmt.Errorf("list process group %d: %w", pgid, err)
	}
	ps := make([]Proc, 0, len(ks))
	for i := range ks {
		if p := fromKinfo(&ks[i]); p.PGID == pgid {
			ps = append(ps, p)
		}
	}
	return ps, nil
}

func fromKinfo(k *unix.KinfoProc) Proc {
	return Proc{
		PID:     int(k.Proc.P_pid),
		PPID:    int(k.Eproc.Ppid),
		PGID:    int(k.Eproc.Pgid),
		Zombie:  k.Proc.P_stat == sZomb,
		Ignored: uint64(k.Proc.P_sigignore),
		Comm:    unix.ByteSliceToString(k.Proc.P_comm[:]),
	}
}

// AwaitGone returns once every process of pids has exited, or after within. It waits on a
// kqueue for each process's NOTE_EXIT; a process it cannot watch is polled.
func AwaitGone(pids []int, within time.Duration) {
	deadline := time.Now().Add(within)
	pids = slices.Compact(slices.Sorted(slices.Values(pids))) // one event per process
	kq, err := unix.Kqueue()
	if err != nil {
		pollGone(pids, deadline)
		return
	}
	defer unix.Close(kq)
	watched, unwatched := watch(kq, pids)
	events := make([]unix.Kevent_t, max(watched, 1))
	for watched > 0 {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		ts := unix.NsecToTimespec(int64(left))
		n, err := unix.Kevent(kq, nil, events, &ts)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		for _, e := range events[:n] {
			if e.Filter == unix.EVFILT_PROC && e.Fflags&unix.NOTE_EXIT != 0 {
				watched--
			}
		}
	}
	pollGone(unwatched, deadline)
}

// watch registers a NOTE_EXIT filter for each of pids with kq. It returns how many it watches
// and the processes it could not watch, those gone already aside. A registration fails with
// ESRCH once the process is past the point where it would post its NOTE_EXIT, so an exit is
// either seen as an event or as that refusal, never missed.
func watch(kq int, pids []int) (watched int, unwatched []int) {
	if len(pids) == 0 {
		return 0, nil
	}
	changes := make([]unix.Kevent_t, len(pids))
	for i, pid := range pids {
		// EV_RECEIPT reports each registration's own result, so one refusal ends none of the others.
		unix.SetKevent(&changes[i], pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT|unix.EV_RECEIPT)
		changes[i].Fflags = unix.NOTE_EXIT
	}
	receipts := make([]unix.Kevent_t, len(pids))
	n, err := unix.Kevent(kq, changes, receipts, nil)
	if err != nil {
		return 0, pids
	}
	seen := make(map[int]bool, n)
	for _, r := range receipts[:n] {
		pid := int(r.Ident)
		seen[pid] = true
		switch {
		case r.Flags&unix.EV_ERROR == 0 || r.Data == 0:
			watched++
		case r.Data == int64(unix.ESRCH): // gone already
		default:
			unwatched = append(unwatched, pid)
		}
	}
	for _, pid := range pids {
		if !seen[pid] {
			unwatched = append(unwatched, pid)
		}
	}
	return watched, unwatched
}

// recheck is how often AwaitExit looks at its child's state between kqueue waits: a second line
// of defence, should a NOTE_EXIT ever not arrive.
const recheck = time.Second

// AwaitExit returns once pid, a child of this process, has exited, leaving it to be reaped. Its
// exit status is not known here (known is false): the caller learns it as it reaps.
func AwaitExit(pid int) (status int, known bool) {
	awaitExit(pid)
	return 0, false
}

func awaitExit(pid int) {
	kq, err := unix.Kqueue()
	if err == nil {
		defer unix.Close(kq)
		watched, _ := watch(kq, []int{pid})
		events := make([]unix.Kevent_t, 1)
		for watched > 0 {
			ts := unix.NsecToTimespec(int64(recheck))
			n, err := unix.Kevent(kq, nil, events, &ts)
			switch {
			case n > 0:
				return
			case err != nil && err != unix.EINTR:
				watched = 0
			case gone(pid): // the child cannot vanish before this process reaps it
				return
			}
		}
	}
	for !gone(pid) {
		time.Sleep(10 * time.Millisecond)
	}
}
