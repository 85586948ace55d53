package procs

import (
	"bytes"
	"os"
	"strconv"
)

// All reads every process in /proc, the process table. Processes that exit while it reads are
// left out.
func All() ([]Proc, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	ps := make([]Proc, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if p, err := Read(pid); err == nil {
			ps = append(ps, p)
		}
	}
	return ps, nil
}

// Marked lists the live processes whose environment holds entry (a NAME=value line), that rein
// may read (its own user's). A program's descendants inherit its environment whatever session,
// group or parent they end up in, so an entry given to a program finds all of them.
func Marked(entry string) ([]Proc, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	want := append([]byte(entry), 0)
	var out []Proc
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + n + "/environ")
		if err != nil || !(bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...))) {
			continue
		}
		if p, err := Read(pid); err == nil && !p.Zombie {
			out = append(out, p)
		}
	}
	return out, nil
}
