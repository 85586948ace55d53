package shell

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// groupAlive reports whether any process of group pgid other than its leader is alive (zombies
// are not). It reads /proc; when it cannot, it answers true so that the caller waits the grace.
func groupAlive(pgid int) bool {
	alive := false
	err := eachMember(pgid, func(int, procStat) bool {
		alive = true
		return false
	})
	return alive || err != nil
}

// reacting lists the live processes of group pgid, its leader aside, that do not ignore sig.
func reacting(pgid int, sig syscall.Signal) []int {
	var pids []int
	eachMember(pgid, func(pid int, st procStat) bool {
		if st.ignored&(1<<(sig-1)) == 0 {
			pids = append(pids, pid)
		}
		return true
	})
	return pids
}

// eachMember calls f with each live process of group pgid but its leader, until f returns false.
func eachMember(pgid int, f func(pid int, st procStat) bool) error {
	d, err := os.Open("/proc")
	if err != nil {
		return err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return err
	}
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == pgid {
			continue
		}
		// getpgid is one cheap system call; reading a process's stat costs more, the more threads
		// it has, so only the group's members are read.
		if g, err := unix.Getpgid(pid); err != nil || g != pgid {
			continue
		}
		st, err := readStat(pid)
		if err == nil && st.pgrp == pgid && st.state != 'Z' && st.state != 'X' && !f(pid, st) {
			return nil
		}
	}
	return nil
}

// awaitGone returns once every process of pids has exited, or after within. It waits on pidfds,
// which become readable when their process exits; without them (Linux before 5.3) it polls.
func awaitGone(pids []int, within time.Duration) {
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

func pollGone(pids []int, deadline time.Time) {
	for _, pid := range pids {
		for {
			st, err := readStat(pid)
			if err != nil || st.state == 'Z' || st.state == 'X' || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// procStat is the part of /proc/<pid>/stat rein reads.
type procStat struct {
	state   byte
	ppid    int
	pgrp    int
	ignored uint64 // the bitmap of ignored signals: bit n-1 for signal n
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	// The command name is in parentheses and may hold anything, so parse after the last ')'.
	// The fields after it are numbered from 3 (state); sigignore is field 33.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 31 {
		return procStat{}, errors.New("malformed stat")
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	ignored, _ := strconv.ParseUint(f[30], 10, 64)
	return procStat{state: f[0][0], ppid: ppid, pgrp: pgrp, ignored: ignored}, nil
}
