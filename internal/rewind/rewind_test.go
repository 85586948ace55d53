package rewind_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/checkpoint"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/rewind"
	"github.com/reinhq/rein/internal/session"
)

var ctx = context.Background()

// fixture is a session of three turns — a prompt, a reply, a prompt — with a checkpoint at each,
// the workspace's one file changed between them.
func fixture(t *testing.T) (sess *session.Session, repo *checkpoint.Repo, ws string, commits map[int64]string) {
	t.Helper()
	ws = t.TempDir()
	sess, err := session.Create(filepath.Join(t.TempDir(), "s"), session.Options{}, &record.SessionStarted{Session: "s1", Provider: "sim", Model: "sim-1", Cwd: ws, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	repo, err = checkpoint.Open(t.TempDir(), ws, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	commits = map[int64]string{}
	turns := []record.Payload{
		&record.UserPrompt{Turn: 1, Text: "one"},
		&record.AssistantMessage{Turn: 2, Parts: []record.Part{{Type: record.PartText, Text: "two"}}, StopReason: "end_turn"},
		&record.UserPrompt{Turn: 3, Text: "three"},
	}
	for i, p := range turns {
		turn := int64(i + 1)
		if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte{byte('0' + turn)}, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := sess.Commit(p); err != nil {
			t.Fatal(err)
		}
		cp, err := repo.Snapshot(ctx, sess.ID(), turn)
		if err != nil {
			t.Fatal(err)
		}
		commits[turn] = cp.Commit
	}
	return sess, repo, ws, commits
}

// A rewind to a user turn goes back to that turn's own checkpoint (taken when it was taken up);
// to an assistant turn, to the checkpoint before it (an assistant turn's is taken after its
// tools ran).
func TestTarget(t *testing.T) {
	sess, repo, _, commits := fixture(t)
	for anchor, want := range map[int64]int64{1: 1, 2: 1, 3: 3} {
		e, err := rewind.Target(ctx, sess.Snapshot(), repo, sess.ID(), anchor)
		if err != nil {
			t.Fatal(err)
		}
		if e.Commit != commits[want] {
			t.Errorf("a rewind to turn %d goes to %s, want the checkpoint of turn %d (%s)", anchor, e.Commit, want, commits[want])
		}
	}
}

// No checkpoint before the turn: refused, saying what to do.
func TestTargetWithoutCheckpoints(t *testing.T) {
	sess, _, ws, _ := fixture(t)
	empty, err := checkpoint.Open(t.TempDir(), ws, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rewind.Target(ctx, sess.Snapshot(), empty, sess.ID(), 2); err == nil {
		t.Fatal("a rewind with no checkpoint was not refused")
	}
}

// Files rewinds and restores, recording the three records in order; Complete then has nothing to
// finish.
func TestFiles(t *testing.T) {
	sess, repo, ws, commits := fixture(t)
	done, err := rewind.Files(ctx, sess, repo, 2, "op-1")
	if err != nil {
		t.Fatal(err)
	}
	if done.Target != commits[1] {
		t.Errorf("restored %s, want %s", done.Target, commits[1])
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "f.txt")); string(b) != "1" {
		t.Errorf("f.txt holds %q after the rewind, want 1", b)
	}
	if _, ok, err := rewind.Complete(ctx, sess, repo); ok || err != nil {
		t.Errorf("Complete after a finished rewind: %v, %v", ok, err)
	}
	if owed, err := rewind.Owed(sess); owed != nil || err != nil {
		t.Errorf("owed after a finished rewind: %+v, %v", owed, err)
	}
	if err := sess.Snapshot().CheckRewind(2); err == nil {
		t.Errorf("turn 2 was not withdrawn")
	}
	if _, err := rewind.Files(ctx, sess, repo, 2, "op-2"); err == nil {
		t.Errorf("a second rewind to a withdrawn turn was not refused")
	}
}

// A restore begun (its safety snapshot and marker made) but never recorded changed no file: the
// next Complete abandons it rather than restoring what the record does not say.
func TestCompleteAbandonsAnUnrecordedRestore(t *testing.T) {
	sess, repo, ws, commits := fixture(t)
	if _, err := repo.Begin(ctx, sess.ID(), commits[1]); err != nil {
		t.Fatal(err)
	}
	done, ok, err := rewind.Complete(ctx, sess, repo)
	if ok || err != nil {
		t.Fatalf("Complete restored %+v, %v, %v", done, ok, err)
	}
	if _, owed, _ := repo.Pending(sess.ID()); owed {
		t.Errorf("the restore is still owed")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "f.txt")); string(b) != "3" {
		t.Errorf("f.txt holds %q, want it untouched (3)", b)
	}
	if _, err := repo.Snapshot(ctx, sess.ID(), 4); errors.Is(err, checkpoint.ErrRestoreOwed) {
		t.Errorf("snapshots are still refused: %v", err)
	}
}
