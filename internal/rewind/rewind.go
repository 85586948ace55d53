// Package rewind owns rewinding a session together with its workspace's files: which checkpoint a
// rewind goes back to, the order of its steps and their records, and the completion of a restore a
// crash interrupted. cmd/rein and the host both rewind through it.
//
// A rewind with files, in order:
//
//  1. the target: the workspace as it stood when the anchor turn began — the checkpoint taken when
//     a user turn was taken up, or the latest one taken at or before the turn before it;
//  2. a safety snapshot of the workspace as it stands (checkpoint.Repo.Begin), so that the rewind
//     itself can be undone, and the restore marker beside it;
//  3. files_restore_started and the withdrawal (rewound), committed together: a crash before them
//     leaves the files untouched and the restore abandoned by the next resume, one after them
//     leaves the restore owed, and the next resume completes it;
//  4. the restore, then files_restored.
package rewind

import (
	"context"
	"errors"
	"fmt"

	"github.com/reinhq/rein/internal/checkpoint"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// Outside is what a files answer says a restore never covers.
const Outside = "effects outside the workspace (other directories, installed packages, services, anything sent over the network) are not undone"

// Target returns the checkpoint a rewind to anchor restores: the workspace as it stood when turn
// anchor began. A user turn's own checkpoint is taken when it is taken up, so it counts; an
// assistant turn's is taken after its tools ran, so the one before it does.
func Target(ctx context.Context, st *fold.State, repo *checkpoint.Repo, session string, anchor int64) (checkpoint.Entry, error) {
	at := anchor - 1
	if t, ok := st.Turn(anchor); ok && t.Role == record.User {
		at = anchor
	}
	e, err := repo.At(ctx, session, at)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return checkpoint.Entry{}, fmt.Errorf("no checkpoint of the workspace was taken before turn %d (checkpoints were off, or began later): rewind without the files", anchor)
	}
	return e, err
}

// Files rewinds sess to before turn anchor, files too: the steps of the package doc. The
// withdrawal is judged first, and nothing is done when it is refused; op is the host operation
// that asked, if any. The session must be open for writing.
func Files(ctx context.Context, sess *session.Session, repo *checkpoint.Repo, anchor int64, op string) (record.FilesRestored, error) {
	st := sess.Snapshot()
	if err := st.CheckRewind(anchor); err != nil {
		return record.FilesRestored{}, err
	}
	target, err := Target(ctx, st, repo, sess.ID(), anchor)
	if err != nil {
		return record.FilesRestored{}, err
	}
	begun, err := repo.Begin(ctx, sess.ID(), target.Commit)
	if err != nil {
		return record.FilesRestored{}, fmt.Errorf("take the safety snapshot: %w", err)
	}
	if err := sess.Commit(&record.FilesRestoreStarted{Target: begun.Target, Safety: begun.Safety, Turn: anchor}, &record.Rewound{Anchor: anchor, Op: op}); err != nil {
		// Nothing changed in the workspace: the restore is not owed.
		return record.FilesRestored{}, errors.Join(err, repo.Abandon(ctx, sess.ID()))
	}
	return restore(ctx, sess, repo, begun.Target, false)
}

// To puts sess's workspace back as checkpoint commit holds it, without touching the conversation:
// a safety snapshot, files_restore_started, the restore, files_restored. Restoring the safety
// checkpoint a rewind took undoes the rewind's restore.
func To(ctx context.Context, sess *session.Session, repo *checkpoint.Repo, commit string) (record.FilesRestored, error) {
	begun, err := repo.Begin(ctx, sess.ID(), commit)
	if err != nil {
		return record.FilesRestored{}, fmt.Errorf("take the safety snapshot: %w", err)
	}
	if err := sess.Commit(&record.FilesRestoreStarted{Target: begun.Target, Safety: begun.Safety}); err != nil {
		return record.FilesRestored{}, errors.Join(err, repo.Abandon(ctx, sess.ID()))
	}
	return restore(ctx, sess, repo, begun.Target, false)
}

func restore(ctx context.Context, sess *session.Session, repo *checkpoint.Repo, target string, resumed bool) (record.FilesRestored, error) {
	res, err := repo.Restore(ctx, sess.ID(), target)
	if err != nil {
		return record.FilesRestored{}, fmt.Errorf("restore the files (a resume finishes it): %w", err)
	}
	done := record.FilesRestored{Target: res.Target, Safety: res.Safety, Changed: res.Changed, Removed: res.Removed,
		NotCovered: Paths(res.NotCovered), MoreIgnored: res.MoreIgnored, Resumed: resumed || res.Resumed}
	if err := sess.Commit(&done); err != nil {
		return done, err
	}
	return done, nil
}

// Complete finishes a restore of sess's workspace that a crash interrupted, and reports whether
// there was one. A restore whose files_restore_started is not in the record never changed a
// file (the record is written before the restore touches any): it is abandoned, and ok is false.
func Complete(ctx context.Context, sess *session.Session, repo *checkpoint.Repo) (done record.FilesRestored, ok bool, err error) {
	owed, pending, err := repo.Pending(sess.ID())
	if err != nil || !pending {
		return record.FilesRestored{}, false, err
	}
	started, err := Owed(sess)
	if err != nil {
		return record.FilesRestored{}, false, err
	}
	if started == nil || started.Target != owed.Target {
		return record.FilesRestored{}, false, repo.Abandon(ctx, sess.ID())
	}
	done, err = restore(ctx, sess, repo, owed.Target, true)
	return done, err == nil, err
}

// Owed returns the files_restore_started of sess's record that no files_restored follows, or nil.
func Owed(sess *session.Session) (*record.FilesRestoreStarted, error) {
	recs, err := sess.RecordsAfter(0)
	if err != nil {
		return nil, fmt.Errorf("read the record: %w", err)
	}
	var owed *record.FilesRestoreStarted
	for _, r := range recs {
		switch b := r.Body.(type) {
		case *record.FilesRestoreStarted:
			owed = b
		case *record.FilesRestored:
			owed = nil
		}
	}
	return owed, nil
}

// Paths are skipped or uncovered paths as a record holds them.
func Paths(skips []checkpoint.Skip) []record.SkippedPath {
	if len(skips) == 0 {
		return nil
	}
	out := make([]record.SkippedPath, len(skips))
	for i, s := range skips {
		out[i] = record.SkippedPath{Path: s.Path, Reason: string(s.Reason), Size: s.Size}
	}
	return out
}
