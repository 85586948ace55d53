package checkpoint

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Two sessions checkpoint one workspace at once, each through its own Repo as two processes
// would, while both change files: each commit is valid and holds a whole tree, each session's
// chain is its own, and the repository passes fsck.
func TestTwoSessionsAtOnce(t *testing.T) {
	ws := t.TempDir()
	for i := range 20 {
		write(t, ws, fmt.Sprintf("shared/%02d.txt", i), "shared\n")
	}
	state := t.TempDir()
	rounds := 12
	if testing.Short() {
		rounds = 4
	}
	type result struct {
		cps []Checkpoint
		err error
	}
	results := make([]result, 2)
	var wg sync.WaitGroup
	for w, session := range []string{"alpha", "bravo"} {
		r, err := Open(state, ws, Options{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				// Each session's agent writes its own files; the other's appear in its
				// snapshots too, as in any shared workspace.
				write(t, ws, fmt.Sprintf("%s/%02d.txt", session, i), fmt.Sprintf("%s round %d\n", session, i))
				write(t, ws, fmt.Sprintf("shared/%02d.txt", i%20), fmt.Sprintf("%s was here, round %d\n", session, i))
				cp, err := r.Snapshot(ctx, session, int64(i+1))
				if err != nil {
					results[w].err = err
					return
				}
				results[w].cps = append(results[w].cps, cp)
			}
		}()
	}
	wg.Wait()
	r, err := Open(state, ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for w, session := range []string{"alpha", "bravo"} {
		res := results[w]
		if res.err != nil {
			t.Fatalf("%s: %v", session, res.err)
		}
		list, err := r.List(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != rounds {
			t.Fatalf("%s has %d checkpoints, want %d (each round wrote a new file)", session, len(list), rounds)
		}
		for i, cp := range res.cps {
			if !cp.Changed || list[i].Commit != cp.Commit || list[i].Turn != int64(i+1) {
				t.Fatalf("%s round %d: %+v, listed %+v", session, i, cp, list[i])
			}
			// The session's own file of this round is in its checkpoint, whole.
			own := fmt.Sprintf("%s/%02d.txt", session, i)
			if got := gitOut(t, r, "cat-file", "blob", cp.Commit+":"+own); got != fmt.Sprintf("%s round %d\n", session, i) {
				t.Fatalf("%s round %d holds %q", session, i, got)
			}
		}
	}
	if out, err := r.git(ctx, run{args: []string{"fsck", "--strict", "--no-dangling"}}); err != nil {
		t.Fatalf("fsck: %v\n%s", err, out)
	}
	// After both are done, each session's next snapshot is the workspace exactly.
	for _, session := range []string{"alpha", "bravo"} {
		cp, err := r.Snapshot(ctx, session, 100)
		if err != nil {
			t.Fatal(err)
		}
		sameTree(t, r, cp.Commit, Options{})
	}
}

// One session is written by one process at a time: a second is refused, naming the way out.
func TestSessionHeldElsewhereIsBusy(t *testing.T) {
	ws := t.TempDir()
	write(t, ws, "a", "a\n")
	r := open(t, ws, Options{})
	if _, err := r.Snapshot(ctx, "s", 1); err != nil {
		t.Fatal(err)
	}
	held, ok, err := tryLock(filepath.Join(r.Dir(), "rein", "sessions", "s", "lock"), syscall.LOCK_EX)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	_, err = r.Snapshot(ctx, "s", 2)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "one process writes a session at a time") {
		t.Fatalf("snapshot of a held session: %v", err)
	}
	if _, err := r.Snapshot(ctx, "other", 1); err != nil {
		t.Fatalf("another session is not held: %v", err)
	}
	held.release()
	if _, err := r.Snapshot(ctx, "s", 2); err != nil {
		t.Fatal(err)
	}
}

func TestGCDropsSessionsAndPrunes(t *testing.T) {
	ws := t.TempDir()
	r := open(t, ws, Options{})
	write(t, ws, "shared.txt", "both sessions hold this\n")
	write(t, ws, "only-old.txt", "only the dropped session holds this\n")
	old, err := r.Snapshot(ctx, "old", 1)
	if err != nil {
		t.Fatal(err)
	}
	write(t, ws, "only-old.txt", "changed before the kept session's snapshot\n")
	kept, err := r.Snapshot(ctx, "kept", 1)
	if err != nil {
		t.Fatal(err)
	}
	oldBlob := strings.TrimSpace(gitOut(t, r, "rev-parse", old.Commit+":only-old.txt"))
	dropped, err := r.GC(ctx, func(s string) bool { return s == "kept" })
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 1 || dropped[0] != "old" {
		t.Fatalf("dropped %v", dropped)
	}
	if ids, _ := r.Sessions(ctx); len(ids) != 1 || ids[0] != "kept" {
		t.Fatalf("sessions after gc: %v", ids)
	}
	if _, err := r.git(ctx, run{args: []string{"cat-file", "-e", oldBlob}}); err == nil {
		t.Error("an object only the dropped session held survived gc")
	}
	if _, err := r.git(ctx, run{args: []string{"cat-file", "-e", old.Commit}}); err == nil {
		t.Error("the dropped session's commit survived gc")
	}
	sameTree(t, r, kept.Commit, Options{})
	if _, err := r.Restore(ctx, "kept", kept.Commit); err != nil {
		t.Fatal(err)
	}
}

// Two processes may write one session one after the other (rein serve, then rein rewind): what
// one remembers of the index never hides what the other did.
func TestTwoReposOneSessionInTurn(t *testing.T) {
	ws, state := t.TempDir(), t.TempDir()
	write(t, ws, "a.txt", "one\n")
	r1, err := Open(state, ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Open(state, ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r1.Snapshot(ctx, "s", 1); err != nil {
		t.Fatal(err)
	}
	write(t, ws, "a.txt", "two\n")
	cp2, err := r2.Snapshot(ctx, "s", 2)
	if err != nil {
		t.Fatal(err)
	}
	cp3, err := r1.Snapshot(ctx, "s", 3)
	if err != nil {
		t.Fatal(err)
	}
	if cp3.Changed || cp3.Commit != cp2.Commit {
		t.Fatalf("after another process's snapshot: %+v, want %s unchanged", cp3, cp2.Commit)
	}
}

// Processes opening a workspace's checkpoints for the first time at once all get the one
// repository.
func TestOpenAtOnce(t *testing.T) {
	ws, state := t.TempDir(), t.TempDir()
	write(t, ws, "a", "a\n")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := Open(state, ws, Options{})
			if err == nil {
				_, err = r.Snapshot(ctx, fmt.Sprintf("s%d", i), 1)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("opener %d: %v", i, err)
		}
	}
	repos, err := filepath.Glob(filepath.Join(state, "checkpoints", "*"))
	if err != nil || len(repos) != 1 {
		t.Fatalf("repositories %v (%v), want one", repos, err)
	}
}
