//go:build linux || darwin

package procs

// Tree lists pid and every process descended from it that has not exited, pid first. A program
// that starts its commands in sessions or groups of their own (Claude Code's shell does) leaves
// them out of its process group, but not out of its tree; read the tree before ending the
// program, since once it is gone its children belong to another parent.
func Tree(pid int) ([]Proc, error) {
	ps, err := all()
	if err != nil {
		return nil, err
	}
	kids := map[int][]Proc{}
	var root *Proc
	for i, p := range ps {
		if p.PID == pid {
			root = &ps[i]
		}
		kids[p.PPID] = append(kids[p.PPID], p)
	}
	if root == nil {
		return nil, nil
	}
	out := []Proc{}
	if !root.Zombie {
		out = append(out, *root)
	}
	queue := []int{pid}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, k := range kids[n] {
			if k.PID == n || k.PID == pid {
				continue
			}
			if !k.Zombie {
				out = append(out, k)
			}
			queue = append(queue, k.PID)
		}
	}
	return out, nil
}
