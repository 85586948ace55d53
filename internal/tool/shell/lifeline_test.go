package shell

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestKilledKeeperIsReplaced: when the lifeline's keeper dies while rein lives, a new one takes
// over the groups held, so that rein's SIGKILL still ends a command's whole group.
func TestKilledKeeperIsReplaced(t *testing.T) {
	if os.Getenv("REIN_SHELL_KEEPER_HELPER") != "" {
		t.Skip("in the helper")
	}
	helper, dir, out := startHelper(t, "TestHelperLosesItsKeeper", "REIN_SHELL_KEEPER_HELPER", "replaced")
	pgid := readPID(t, filepath.Join(dir, "pgid"))
	var pids []int
	if !eventually(5*time.Second, func() bool { pids = members(pgid); return countComm(pids, "sleep") == 2 }) {
		t.Fatalf("the sleeps are not running: group %d has %v; helper said %s", pgid, pids, out)
	}
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	if !eventually(2*time.Second, func() bool { return len(members(pgid)) == 0 }) {
		t.Errorf("group %d outlived its rein by 2 s: %v", pgid, members(pgid))
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// TestHelperLosesItsKeeper is the helper process of TestKilledKeeperIsReplaced: it starts a
// command, kills its own keeper, waits for the next one and says so.
func TestHelperLosesItsKeeper(t *testing.T) {
	dir := os.Getenv("REIN_SHELL_KEEPER_HELPER")
	if dir == "" {
		t.Skip("helper process for TestKilledKeeperIsReplaced")
	}
	sh, err := New(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	go sh.Run(context.Background(), bashCall("echo $$ > pgid; sleep 1000 & sleep 1000", 0))
	readPID(t, filepath.Join(dir, "pgid"))
	keeper.mu.Lock()
	first, exited := keeper.pid, keeper.exited
	keeper.mu.Unlock()
	syscall.Kill(first, syscall.SIGKILL)
	<-exited
	if !eventually(5*time.Second, func() bool {
		keeper.mu.Lock()
		defer keeper.mu.Unlock()
		return keeper.pid != first && keeper.w != nil
	}) {
		t.Fatal("no new keeper")
	}
	if err := os.WriteFile(filepath.Join(dir, "replaced"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {} // wait to be killed
}
