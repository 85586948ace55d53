package procs

import (
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestDescendants finds a grandchild that left its grandparent's group and session for its own,
// and nothing outside the tree.
func TestDescendants(t *testing.T) {
	cmd := startGroup(t, "sh -c 'setsid sleep 1000 & exec sleep 1001' & exec sleep 1002")
	root := cmd.Process.Pid
	var ds []Proc
	// Until both sleeps have started: before that the tree holds the sh and setsid that become
	// them, still in the root's group.
	if !eventually(5*time.Second, func() bool {
		ds, _ = Descendants(root)
		return len(ds) == 2 && !slices.ContainsFunc(ds, func(p Proc) bool { return p.Comm != "sleep" })
	}) {
		t.Fatalf("descendants of %d: %+v; want the two sleeps below it", root, ds)
	}
	own := slices.IndexFunc(ds, func(p Proc) bool { return p.PGID != root })
	if own < 0 {
		t.Errorf("no descendant in a group of its own: %+v", ds)
	}
	for _, p := range ds {
		if p.PID == root {
			t.Errorf("the root is listed among its descendants: %+v", ds)
		}
	}
	t.Cleanup(func() {
		for _, p := range ds {
			syscall.Kill(p.PID, syscall.SIGKILL)
		}
	})
}
