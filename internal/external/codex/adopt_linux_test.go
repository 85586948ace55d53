package codex

import "golang.org/x/sys/unix"

// adoptOrphans makes this process the subreaper of its descendants: a process whose parent exits
// is adopted by it, not by init, so it stays among its descendants for gone to find.
func adoptOrphans() {
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// reapOrphans collects the adopted processes that have exited. It is called only between turns,
// when no child of a Turn's is left to be waited for by its own exec.Cmd.
func reapOrphans() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
