//go:build linux || darwin

package procs

import "slices"

// Descendants lists the processes descended from pid — its children, their children, and so on —
// whatever their process group or session, zombies included, and not pid itself. A process that
// has left the tree (its parent exited and it was adopted) is not listed: read the tree before
// ending its root. When the process table cannot be read it returns the error.
func Descendants(pid int) ([]Proc, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	return Below(all, pid), nil
}

// Below lists the processes of table descended from any of roots, not the roots themselves.
func Below(table []Proc, roots ...int) []Proc {
	children := make(map[int][]Proc)
	for _, p := range table {
		if p.PID != p.PPID {
			children[p.PPID] = append(children[p.PPID], p)
		}
	}
	var out []Proc
	queue := append([]int(nil), roots...)
	seen := make(map[int]bool)
	for _, r := range roots {
		seen[r] = true
	}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		for _, c := range children[parent] {
			if !seen[c.PID] {
				seen[c.PID] = true
				out = append(out, c)
				queue = append(queue, c.PID)
			}
		}
	}
	return out
}

// Tree lists pid and every process descended from it that has not exited, pid first; nothing when
// pid is gone. A program that starts its commands in sessions or groups of their own (Claude
// Code's shell does) leaves them out of its process group, but not out of its tree; read the tree
// before ending the program, since once it is gone its children belong to another parent.
func Tree(pid int) ([]Proc, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(all, func(p Proc) bool { return p.PID == pid })
	if i < 0 {
		return nil, nil
	}
	out := []Proc{}
	if !all[i].Zombie {
		out = append(out, all[i])
	}
	for _, p := range Below(all, pid) {
		if !p.Zombie {
			out = append(out, p)
		}
	}
	return out, nil
}
