package shell

import (
	"os"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/reinhq/rein/internal/sandbox"
)

// TestSandboxNonDumpable: a process that made itself non-dumpable, as rein does, still contains
// its commands in a user namespace (rein not root; run by TestSandboxAsNobody when the tests run
// as root), and stays non-dumpable: the namespace is mapped once the helper has executed, never by
// making rein dumpable. Mapped as Go's start maps it, the kernel refused rein the child's /proc
// files, and every command of an unprivileged rein ran uncontained.
func TestSandboxNonDumpable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root: TestSandboxAsNobody runs this as uid 65534")
	}
	requireSandbox(t, true)
	if !slices.Contains(containKinds(t), "contained") {
		t.Skip("no PID namespace per command here")
	}
	dumpable := func() int {
		v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	defer unix.Prctl(unix.PR_SET_DUMPABLE, uintptr(dumpable()), 0, 0, 0)
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	sh, err := New(ws, Options{Sandbox: kindBox(t, "contained", sandbox.Policy{Mode: sandbox.WorkspaceWrite}, ws)})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // the first shell started for its call, the others spares
		if r := run(t, sh, `echo "shell $$"`); r.Content != "shell 1\n" {
			t.Fatalf("a command of a non-dumpable process: %s %q, want it the first of its namespace", r.Outcome, r.Content)
		}
		if dumpable() != 0 {
			t.Fatal("the process became dumpable")
		}
	}
}
