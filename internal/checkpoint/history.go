package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// List returns every checkpoint a session made, oldest first: the chain of its head, safety
// checkpoints included. A session with none gives an empty list.
func (r *Repo) List(ctx context.Context, session string) ([]Entry, error) {
	if err := validSession(session); err != nil {
		return nil, err
	}
	head, _, err := r.head(ctx, session)
	if err != nil || head == "" {
		return nil, err
	}
	out, err := r.git(ctx, run{args: []string{"log", "-z", "--reverse", "--first-parent", "--format=%H%n%T%n%ct%n%B", head, "--"}})
	if err != nil {
		return nil, fmt.Errorf("list checkpoints of session %s: %w", session, err)
	}
	var list []Entry
	for _, rec := range splitZ(out) {
		lines := strings.Split(strings.TrimLeft(rec, "\n"), "\n")
		if len(lines) < 4 {
			continue
		}
		secs, _ := strconv.ParseInt(lines[2], 10, 64)
		e := Entry{Commit: lines[0], Tree: lines[1], Time: time.Unix(secs, 0).UTC(), Safety: strings.HasPrefix(lines[3], "rein safety")}
		for _, l := range lines[4:] {
			if t, ok := strings.CutPrefix(l, "Turn: "); ok {
				e.Turn, _ = strconv.ParseInt(t, 10, 64)
			}
		}
		list = append(list, e)
	}
	return list, nil
}

// At returns the session's latest checkpoint taken at or before turn (safety checkpoints aside):
// the workspace as it stood then. Turn ids only grow, so after a rewind the caller asks with a
// turn that still stands.
func (r *Repo) At(ctx context.Context, session string, turn int64) (Entry, error) {
	list, err := r.List(ctx, session)
	if err != nil {
		return Entry{}, err
	}
	best, found := Entry{}, false
	for _, e := range list {
		if !e.Safety && e.Turn <= turn && (!found || e.Turn >= best.Turn) {
			best, found = e, true
		}
	}
	if !found {
		return Entry{}, fmt.Errorf("%w: session %s has no checkpoint at or before turn %d", ErrNotFound, session, turn)
	}
	return best, nil
}

// Diff lists the paths that differ from checkpoint from to checkpoint to, sorted by path; with
// from empty, to's changes from its parent (everything, for a session's first checkpoint).
func (r *Repo) Diff(ctx context.Context, from, to string) ([]Change, error) {
	if from != "" {
		var err error
		if from, err = r.resolve(ctx, from); err != nil {
			return nil, err
		}
	}
	to, err := r.resolve(ctx, to)
	if err != nil {
		return nil, err
	}
	return r.diffTrees(ctx, from, to)
}

// diffTrees runs diff-tree on two tree-ishes, or on one commit against its parent when from is
// empty.
func (r *Repo) diffTrees(ctx context.Context, from, to string) ([]Change, error) {
	args := []string{"diff-tree", "-r", "-z", "--no-renames", "--raw", "--no-commit-id"}
	if from == "" {
		args = append(args, "--root", to)
	} else {
		args = append(args, from, to)
	}
	out, err := r.git(ctx, run{args: args})
	if err != nil {
		return nil, err
	}
	f := splitZ(out)
	var cs []Change
	for i := 0; i+1 < len(f); i += 2 {
		// ":100644 100755 <old> <new> M" then the path.
		meta := strings.Fields(strings.TrimPrefix(f[i], ":"))
		if len(meta) != 5 || meta[4] == "" {
			return nil, fmt.Errorf("diff-tree: cannot read %q", f[i])
		}
		c := Change{Path: f[i+1], Status: meta[4][0], OldMode: meta[0], NewMode: meta[1]}
		if c.Status == 'A' {
			c.OldMode = ""
		}
		if c.Status == 'D' {
			c.NewMode = ""
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// Patch writes the differences from checkpoint from to checkpoint to as a unified diff (binary
// files named, not shown); with from empty, to's changes from its parent.
func (r *Repo) Patch(ctx context.Context, from, to string, w io.Writer) error {
	args := []string{"diff-tree", "-r", "-p", "--no-commit-id", "--no-ext-diff", "--no-textconv", "--no-color", "--no-renames"}
	to, err := r.resolve(ctx, to)
	if err != nil {
		return err
	}
	if from == "" {
		args = append(args, "--root", to)
	} else {
		if from, err = r.resolve(ctx, from); err != nil {
			return err
		}
		args = append(args, from, to)
	}
	_, err = r.git(ctx, run{args: args, stdout: w})
	return err
}

// Materialise writes a checkpoint's files into dir, which must not exist or be empty: the
// workspace as the checkpoint holds it, for `rein fork --files`.
func (r *Repo) Materialise(ctx context.Context, commit, dir string) error {
	commit, err := r.resolve(ctx, commit)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if des, err := os.ReadDir(abs); err == nil && len(des) > 0 {
		return fmt.Errorf("materialise %s: %s is not empty; name a new directory", commit, dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("materialise %s: %w", commit, err)
	}
	if err := os.MkdirAll(abs, 0o777); err != nil {
		return fmt.Errorf("materialise %s: %w", commit, err)
	}
	lock, err := waitLock(ctx, filepath.Join(r.gitDir, "rein", "lock"), syscall.LOCK_SH)
	if err != nil {
		return err
	}
	defer lock.release()
	idx := filepath.Join(r.gitDir, "rein", randomName(".materialise-index-"))
	defer os.Remove(idx)
	if _, err := r.git(ctx, run{args: []string{"read-tree", commit}, index: idx}); err != nil {
		return fmt.Errorf("materialise %s: %w", commit, err)
	}
	if _, err := r.git(ctx, run{args: []string{"checkout-index", "-a", "-f"}, index: idx, worktree: abs}); err != nil {
		return fmt.Errorf("materialise %s into %s: %w", commit, dir, err)
	}
	return nil
}

// Sessions lists the sessions that have checkpoints or state in the repository, sorted.
func (r *Repo) Sessions(ctx context.Context) ([]string, error) {
	out, err := r.git(ctx, run{args: []string{"for-each-ref", "--format=%(refname)", "refs/rein/"}})
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, ref := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if rest, ok := strings.CutPrefix(ref, "refs/rein/"); ok {
			if id, _, ok := strings.Cut(rest, "/"); ok {
				set[id] = true
			}
		}
	}
	des, err := os.ReadDir(filepath.Join(r.gitDir, "rein", "sessions"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, de := range des {
		if de.IsDir() && validSession(de.Name()) == nil {
			set[de.Name()] = true
		}
	}
	ids := make([]string, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// GC drops the checkpoints of every session keep refuses — their refs, index and restore marker —
// and prunes the objects nothing refers to any more. It holds the repository exclusively, waiting
// for running snapshots and restores to finish; a session another process is using is kept.
func (r *Repo) GC(ctx context.Context, keep func(session string) bool) (dropped []string, err error) {
	lock, err := waitLock(ctx, filepath.Join(r.gitDir, "rein", "lock"), syscall.LOCK_EX)
	if err != nil {
		return nil, fmt.Errorf("collect checkpoints: %w", err)
	}
	defer lock.release()
	ids, err := r.Sessions(ctx)
	if err != nil {
		return nil, fmt.Errorf("collect checkpoints: %w", err)
	}
	var deletes []string
	for _, id := range ids {
		if keep(id) {
			continue
		}
		dir := filepath.Join(r.gitDir, "rein", "sessions", id)
		sl, ok, err := tryLock(filepath.Join(dir, "lock"), syscall.LOCK_EX)
		if errors.Is(err, fs.ErrNotExist) {
			ok, err = true, nil // no state directory: refs only
		}
		if err != nil || !ok {
			continue // in use elsewhere, or unlockable: kept
		}
		out, err := r.git(ctx, run{args: []string{"for-each-ref", "--format=%(refname)", refPrefix(id)}})
		if err == nil {
			for _, ref := range strings.Fields(string(out)) {
				deletes = append(deletes, "delete "+ref+"\x00\x00")
			}
			err = os.RemoveAll(dir)
		}
		sl.release()
		if err != nil {
			return dropped, fmt.Errorf("collect checkpoints of session %s: %w", id, err)
		}
		dropped = append(dropped, id)
	}
	if len(deletes) > 0 {
		if _, err := r.git(ctx, run{args: []string{"update-ref", "-z", "--stdin"}, stdin: strings.NewReader(strings.Join(deletes, ""))}); err != nil {
			return dropped, fmt.Errorf("collect checkpoints: %w", err)
		}
	}
	// Nobody writes objects while the lock is held, so what nothing refers to is garbage now.
	if _, err := r.git(ctx, run{args: []string{"gc", "--quiet", "--prune=now"}}); err != nil {
		return dropped, fmt.Errorf("collect checkpoints: %w", err)
	}
	return dropped, nil
}
