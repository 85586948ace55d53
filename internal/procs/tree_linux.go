package procs

import (
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
