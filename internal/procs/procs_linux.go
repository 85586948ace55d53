package procs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Read returns what /proc/<pid>/stat says of pid. When there is no such process the error
// satisfies errors.Is(err, fs.ErrNotExist).
func Read(pid int) (Proc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, err
	}
	// The name is in parentheses and may hold anything, so it ends at the last ')'. The fields
	// after it are numbered from 3 (state); num_threads is field 20, sigignore 33.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return Proc{}, fmt.Errorf("read process %d: malformed /proc stat", pid)
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 31 {
		return Proc{}, fmt.Errorf("read process %d: malformed /proc stat", pid)
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	ignored, _ := strconv.ParseUint(f[30], 10, 64)
	threads, _ := strconv.Atoi(f[17])
	return Proc{PID: pid, PPID: ppid, PGID: pgrp, Zombie: f[0] == "Z" || f[0] == "X",
		Ignored: ignored, Comm: string(b[open+1 : end]), Threads: threads}, nil
}

// AwaitGone returns once every process of pids has exited, or after within. It waits on pidfds,
// which become readable when their process exits; without them (Linux before 5.3) it polls.
func AwaitGone(pids []int, within time.Duration) {
	deadline := time.Now().Add(within)
	var fds []unix.PollFd
	defer func() {
		for _, f := range fds {
			unix.Close(int(f.Fd))
		}
	}()
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		switch {
		case err == nil:
			fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
		case errors.Is(err, unix.ESRCH): // gone already
		default:
			pollGone(pids, deadline)
			return
		}
	}
	for len(fds) > 0 {
		left := time.Until(deadline)
		if left <= 0 {
			return
		}
		n, err := unix.Poll(fds, int((left+time.Millisecond-1)/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		live := fds[:0]
		for _, f := range fds {
			if f.Revents != 0 {
				unix.Close(int(f.Fd))
			} else {
				live = append(live, f)
			}
		}
		fds = live
	}
}

// AwaitExit returns once pid, a child of this process, has exited, leaving it to be reaped. It
// returns the child's exit status as a shell counts it (its exit code, or 128+n for a child killed
// by signal n) and true, or false where the kernel's answer does not say.
//
// It waits in Go's network poller, on a pidfd, which becomes readable when its process exits: the
// goroutine is parked, not a thread held in a blocking wait, so while commands run no processor
// sits in a system call and the runtime's monitor can rest, and the exit wakes whichever thread
// polls rather than one kept for it. Without pidfds (Linux before 5.3) it blocks in waitid.
func AwaitExit(pid int) (status int, known bool) {
	var info unix.Siginfo
	if !pollExit(pid, &info) {
		var err error = unix.EINTR
		for err == unix.EINTR {
			err = unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		}
		if err != nil {
			return 0, false
		}
	}
	return exitStatus(pid, &info)
}

// pollExit waits for pid's exit on a pidfd in the network poller and fills info as waitid does.
// It returns false, having waited for nothing, when it cannot: the caller then blocks in waitid.
func pollExit(pid int, info *unix.Siginfo) bool {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), "pidfd") // non-blocking, so it joins the poller
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	err = rc.Read(func(fd uintptr) bool {
		*info = unix.Siginfo{}
		for {
			err := unix.Waitid(unix.P_PID, pid, info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
			switch {
			case err == unix.EINTR:
				continue
			case err != nil:
				return true // no such child: the caller's waitid says so
			}
			return info.Signo != 0 // zero: it has not exited yet; wait for the pidfd again
		}
	})
	return err == nil && info.Signo != 0 // Read returns nil only once the function said so
}

// exitStatus reads the status of pid's exit from what waitid filled in.
func exitStatus(pid int, info *unix.Siginfo) (int, bool) {
	if info.Signo != int32(unix.SIGCHLD) {
		return 0, false
	}
	// For SIGCHLD the union after the header holds si_pid, si_uid and si_status (linux's
	// siginfo_t: three ints of header, padding to 8 on 64-bit, then the union).
	raw := (*[unsafe.Sizeof(*info)]byte)(unsafe.Pointer(info))
	off := unsafe.Sizeof(uintptr(0)) * 2 // the header: signo, errno, code, padded
	if unsafe.Sizeof(uintptr(0)) == 4 {
		off = 12
	}
	if got := *(*int32)(unsafe.Pointer(&raw[off])); int(got) != pid {
		return 0, false
	}
	code := *(*int32)(unsafe.Pointer(&raw[off+8]))
	switch info.Code {
	case 1: // CLD_EXITED
		return int(code), true
	case 2, 3: // CLD_KILLED, CLD_DUMPED
		return 128 + int(code), true
	}
	return 0, false
}
