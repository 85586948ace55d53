package claude

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"syscall"
	"time"

	"github.com/reinhq/rein/internal/procs"
)

// tree is what rein has seen of a program's process tree. Claude Code starts each shell command
// in a session of its own, outside the program's process group, and a command the program leaves
// behind belongs to another parent once the program exits: so rein looks at the tree while the
// program runs (at its start, at each tool call, at each permission prompt, at the turn's end)
// and ends every process and group it has seen, not only the program's group.
//
// A process id is reused once its process is gone, so nothing is signalled on memory alone: a
// process only while it still has the group it was seen in, a group only while it has members
// (a group's id is not reused while it has any), and both are forgotten once gone.
type tree struct {
	root int
	mark string // an environment entry only this turn's program has, inherited by its descendants
	own  int    // rein's own group, never ended
	mu   sync.Mutex
	pids map[int]int // seen process → the group it was seen in
	pgs  map[int]bool
}

// newMark returns an environment entry to give one turn's program.
func newMark() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "REIN_EXTERNAL_TURN=" + hex.EncodeToString(b[:])
}

func newTree(pid int, mark string) *tree {
	return &tree{root: pid, mark: mark, own: syscall.Getpgrp(), pids: map[int]int{pid: pid}, pgs: map[int]bool{pid: true}}
}

// look adds the tree's processes now, and their groups, to what is to be ended, and forgets
// what is gone.
func (t *tree) look() { t.add(procs.Tree(t.root)) }

// add adds processes and their groups to what is to be ended, and forgets what is gone.
func (t *tree) add(ps []procs.Proc, _ error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range ps {
		if p.PGID > 1 && p.PGID != t.own {
			t.pids[p.PID] = p.PGID
			t.pgs[p.PGID] = true
		}
	}
	t.prune()
}

// prune forgets the processes and groups that are gone; it returns the live ones' pids.
func (t *tree) prune() []int {
	var live []int
	for pid, pg := range t.pids {
		if p, err := procs.Read(pid); err != nil || p.Zombie || p.PGID != pg {
			delete(t.pids, pid)
		} else {
			live = append(live, pid)
		}
	}
	for pg := range t.pgs {
		g, err := procs.Live(pg)
		if err == nil && len(g) == 0 {
			delete(t.pgs, pg)
			continue
		}
		for _, p := range g {
			live = append(live, p.PID)
		}
	}
	return live
}

// end kills every live process and group seen, and whatever the tree holds now, until none is
// left, and waits for them to be gone (at most a few seconds).
func (t *tree) end() {
	deadline := time.Now().Add(5 * time.Second)
	for {
		t.look()
		// What left the tree (a command in a session of its own, orphaned when the program died
		// before rein saw it) still carries the program's environment.
		t.add(procs.Marked(t.mark))
		t.mu.Lock()
		for pg := range t.pgs {
			_ = syscall.Kill(-pg, syscall.SIGKILL)
		}
		for pid := range t.pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		live := t.prune()
		t.mu.Unlock()
		if len(live) == 0 || time.Now().After(deadline) {
			return
		}
		procs.AwaitGone(live, 100*time.Millisecond)
	}
}
