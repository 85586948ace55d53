package shell

import (
	"syscall"

	"github.com/reinhq/rein/internal/procs"
)

// groupAlive reports whether any process of group pgid other than its leader is alive (zombies
// are not). When the group cannot be read it answers true, so that the caller waits the grace.
func groupAlive(pgid int) bool {
	live, err := procs.Live(pgid)
	for _, p := range live {
		if p.PID != pgid {
			return true
		}
	}
	return err != nil
}

// reacting lists the live processes of group pgid that do not ignore sig. (A supervisor, the
// leader of its group, ignores every signal a stop sends.)
func reacting(pgid int, sig syscall.Signal) []int {
	live, _ := procs.Live(pgid)
	var pids []int
	for _, p := range live {
		if !p.Ignores(sig) {
			pids = append(pids, p.PID)
		}
	}
	return pids
}
