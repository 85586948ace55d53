//go:build linux || darwin

package procs

// Descendants lists the processes descended from pid — its children, their children, and so on —
// whatever their process group or session, zombies included, and not pid itself. A process that
// has left the tree (its parent exited and it was adopted) is not listed: read the tree before
// ending its root. When the process table cannot be read it returns the error.
func Descendants(pid int) ([]Proc, error) {
	all, err := all()
	if err != nil {
		return nil, err
	}
	children := make(map[int][]Proc)
	for _, p := range all {
		if p.PID != p.PPID {
			children[p.PPID] = append(children[p.PPID], p)
		}
	}
	var out []Proc
	queue := []int{pid}
	seen := map[int]bool{pid: true}
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
	return out, nil
}
