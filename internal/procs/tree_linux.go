package procs

import (
	"bytes"
	"os"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// pids lists the process ids /proc holds now.
func pids() ([]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(names))
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil {
			out = append(out, pid)
		}
	}
	return out, nil
}

// All reads every process in /proc, the process table. Processes that exit while it reads are
// left out.
func All() ([]Proc, error) {
	return each(func(int) bool { return true })
}

// Group lists the processes of group pgid, its leader and zombies included, by reading /proc.
func Group(pgid int) ([]Proc, error) {
	ps, err := each(func(pid int) bool {
		// getpgid is one cheap system call; reading a process's stat costs more, the more threads
		// it has, so only the group's members are read.
		g, err := unix.Getpgid(pid)
		return err == nil && g == pgid
	})
	return slices.DeleteFunc(ps, func(p Proc) bool { return p.PGID != pgid }), err
}

// Marked lists the live processes whose environment holds entry (a NAME=value line), that rein
// may read (its own user's). A program's descendants inherit its environment whatever session,
// group or parent they end up in, so an entry given to a program finds all of them.
func Marked(entry string) ([]Proc, error) {
	want := append([]byte(entry), 0)
	self := os.Getpid()
	ps, err := each(func(pid int) bool {
		if pid == self {
			return false
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		return err == nil && (bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...)))
	})
	return slices.DeleteFunc(ps, func(p Proc) bool { return p.Zombie }), err
}

// each reads the processes whose id pick accepts; one that exits meanwhile is left out.
func each(pick func(pid int) bool) ([]Proc, error) {
	ids, err := pids()
	if err != nil {
		return nil, err
	}
	var ps []Proc
	for _, pid := range ids {
		if !pick(pid) {
			continue
		}
		if p, err := Read(pid); err == nil {
			ps = append(ps, p)
		}
	}
	return ps, nil
}
