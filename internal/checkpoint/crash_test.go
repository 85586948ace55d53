package checkpoint

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The helper: the test binary re-executed with REIN_CHECKPOINT_HELPER set runs one Restore and
// stops at the named point, printing it, so the test can kill it there.
func TestMain(m *testing.M) {
	if point := os.Getenv("REIN_CHECKPOINT_HELPER"); point != "" {
		os.Exit(helper(point))
	}
	os.Exit(m.Run())
}

func helper(point string) int {
	r, err := Open(os.Getenv("HELPER_STATE"), os.Getenv("HELPER_WS"), Options{})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	crashHook = func(p string) {
		if p != point && !(point == "mid-checkout" && p == "restore:checkout") {
			return
		}
		fmt.Println("at", p)
		if point != "mid-checkout" {
			_, _ = os.Stdin.Read(make([]byte, 1)) // the test never writes: wait here to be killed
		}
	}
	if _, err := r.Restore(ctx, "s", os.Getenv("HELPER_TARGET")); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("done")
	return 0
}

// crashSetup makes a workspace whose checkpoint at turn 1 differs from its present state in many
// files (so that a checkout takes a while) and in every kind of change.
func crashSetup(t *testing.T, files int) (ws, state string, r *Repo, target, before Checkpoint) {
	t.Helper()
	ws, state = t.TempDir(), t.TempDir()
	for i := range files {
		write(t, ws, fmt.Sprintf("d%02d/f%04d.txt", i%20, i), fmt.Sprintf("original %d\n", i))
	}
	write(t, ws, "gone-later.txt", "deleted after the checkpoint\n")
	write(t, ws, ".gitignore", "*.tmp\n")
	write(t, ws, "same.txt", "the same at the target and after\n")
	sh(t, ws, "ln -s d00 link && echo x > exec.sh && chmod +x exec.sh")
	var err error
	if r, err = Open(state, ws, Options{}); err != nil {
		t.Fatal(err)
	}
	if target, err = r.Snapshot(ctx, "s", 1); err != nil {
		t.Fatal(err)
	}
	for i := range files {
		write(t, ws, fmt.Sprintf("d%02d/f%04d.txt", i%20, i), fmt.Sprintf("edited %d, a different length\n", i))
	}
	sh(t, ws, "rm gone-later.txt && ln -sfn d01 link && chmod -x exec.sh && mkdir -p created/since && echo n > created/since/n.txt && echo i > ignored.tmp")
	if before, err = r.Snapshot(ctx, "s", 2); err != nil {
		t.Fatal(err)
	}
	return ws, state, r, target, before
}

// startHelper runs the helper in a process group of its own (so that killing the group kills
// the git it runs too) and returns it with its output.
func startHelper(t *testing.T, point, state, ws, target string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "REIN_CHECKPOINT_HELPER="+point, "HELPER_STATE="+state, "HELPER_WS="+ws, "HELPER_TARGET="+target)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd, bufio.NewReader(out)
}

func killGroup(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// A restore killed with SIGKILL at any point — before its marker, after it, before, during and
// after the checkout — is completed by calling Restore again, which keeps the first safety
// checkpoint.
func TestRestoreKilledThenCompleted(t *testing.T) {
	files := 1000
	if testing.Short() {
		files = 300
	}
	for _, point := range []string{"restore:safety", "restore:marked", "restore:checkout", "mid-checkout", "restore:checked-out"} {
		t.Run(point, func(t *testing.T) {
			ws, state, r, target, before := crashSetup(t, files)
			cmd, out := startHelper(t, point, state, ws, target.Commit)
			line, err := out.ReadString('\n')
			if err != nil || strings.TrimSpace(line) != "at "+strings.Replace(point, "mid-checkout", "restore:checkout", 1) {
				t.Fatalf("helper said %q, %v", line, err)
			}
			if point == "mid-checkout" {
				// Kill it once the checkout has begun to write files: the first file in
				// git's order is back, not yet all of them.
				first := filepath.Join(ws, "d00", "f0000.txt")
				deadline := time.Now().Add(30 * time.Second)
				for {
					if b, _ := os.ReadFile(first); string(b) == "original 0\n" {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("the checkout never reached %s", first)
					}
					time.Sleep(time.Millisecond)
				}
			}
			killGroup(t, cmd)
			if point == "mid-checkout" {
				last := fmt.Sprintf("d19/f%04d.txt", files-1)
				if b, _ := os.ReadFile(filepath.Join(ws, last)); string(b) == fmt.Sprintf("original %d\n", files-1) {
					t.Logf("the kill came after the checkout had written %s; the interrupted state was not partial", last)
				} else {
					t.Logf("killed mid-checkout: %s restored, %s not yet", "d00/f0000.txt", last)
				}
			}

			pending, owed, err := r.Pending("s")
			if err != nil {
				t.Fatal(err)
			}
			if owed != (point != "restore:safety") {
				t.Fatalf("owed %v at %s", owed, point)
			}
			if owed && (pending.Target != target.Commit || pending.Safety != before.Commit) {
				t.Fatalf("pending %+v, want target %s safety %s", pending, target.Commit, before.Commit)
			}
			if _, err := r.Snapshot(ctx, "s", 3); owed != errors.Is(err, ErrRestoreOwed) {
				t.Fatalf("a snapshot while a restore is owed (%v): %v", owed, err)
			}
			// Someone edits a file the restore has no reason to write (the same at the
			// target and before) while it is owed: the resumed restore puts it back too,
			// and the edit is kept in a checkpoint of its own.
			write(t, ws, "same.txt", "edited while the restore was owed\n")
			res, err := r.Restore(ctx, "s", target.Commit)
			if err != nil {
				t.Fatal(err)
			}
			sameTree(t, r, target.Commit, Options{})
			list, err := r.List(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			kept := false
			for _, e := range list {
				if e.Safety && strings.Contains(gitOut(t, r, "cat-file", "blob", e.Commit+":same.txt"), "edited while") {
					kept = true
				}
			}
			if !kept {
				t.Errorf("the edit made while the restore was owed is in no checkpoint: %+v", list)
			}
			// With the restore owed, its safety checkpoint is the workspace before the first
			// attempt; killed before the marker, nothing was owed and the safety checkpoint is
			// the workspace as the second attempt found it (same.txt edited).
			if owed && res.Safety != before.Commit {
				t.Errorf("safety %s, want %s: the workspace before the first attempt", res.Safety, before.Commit)
			}
			if got := read(t, ws, "ignored.tmp"); got != "i\n" {
				t.Errorf("ignored file %q", got)
			}
			if _, owed, _ := r.Pending("s"); owed {
				t.Error("still owed after completing")
			}
			// And the safety checkpoint undoes it all.
			if _, err := r.Restore(ctx, "s", res.Safety); err != nil {
				t.Fatal(err)
			}
			sameTree(t, r, res.Safety, Options{})
		})
	}
}
