package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// crashHook, when set (by tests only), is called at the named points of a restore, so that a test
// can kill the process there.
var crashHook func(point string)

func reached(point string) {
	if crashHook != nil {
		crashHook(point)
	}
}

// Begin starts a restore of a session's workspace to target without changing a file: it takes
// the safety snapshot and writes the marker that makes the restore owed (see the package doc).
// The wiring records RestoreStarted, then calls Restore. When a restore is already owed, Begin
// takes no new safety snapshot: it keeps the owed one's (the workspace before any restore began)
// and makes target the one owed.
func (r *Repo) Begin(ctx context.Context, session, target string) (RestoreStarted, error) {
	s, release, err := r.acquire(ctx, session)
	if err != nil {
		return RestoreStarted{}, fmt.Errorf("begin restore of session %s: %w", session, err)
	}
	defer release()
	m, _, _, err := r.begin(ctx, s, target)
	if err != nil {
		return RestoreStarted{}, fmt.Errorf("begin restore of session %s to %s: %w", session, target, err)
	}
	return RestoreStarted{Target: m.Target, Safety: m.Safety}, nil
}

// Restore makes the workspace's tree the target checkpoint's (see the package doc for what is
// left alone), beginning the restore first if Begin has not. Calling it again after it was
// interrupted, even by SIGKILL, completes the restore.
func (r *Repo) Restore(ctx context.Context, session, target string) (Restored, error) {
	s, release, err := r.acquire(ctx, session)
	if err != nil {
		return Restored{}, fmt.Errorf("restore session %s: %w", session, err)
	}
	defer release()
	res, err := r.restore(ctx, s, target)
	if err != nil {
		return Restored{}, fmt.Errorf("restore session %s to %s: %w", session, target, err)
	}
	return res, nil
}

// Pending returns the restore owed for a session, if any: one begun and not finished.
func (r *Repo) Pending(session string) (RestoreStarted, bool, error) {
	s, err := r.session(session)
	if err != nil {
		return RestoreStarted{}, false, err
	}
	m, ok, err := readMarker(s)
	if err != nil || !ok {
		return RestoreStarted{}, false, err
	}
	return RestoreStarted{Target: m.Target, Safety: m.Safety}, true, nil
}

// Abandon forgets the restore owed for a session. Files an interrupted restore already changed
// stay changed; restoring the safety checkpoint puts them back.
func (r *Repo) Abandon(ctx context.Context, session string) error {
	s, release, err := r.acquire(ctx, session)
	if err != nil {
		return fmt.Errorf("abandon restore of session %s: %w", session, err)
	}
	defer release()
	return removeMarker(s)
}

// marker is an owed restore, kept in rein/sessions/<session>/restore.
type marker struct {
	Target string `json:"target"`
	Safety string `json:"safety"`
}

func markerPath(s *sess) string { return filepath.Join(s.dir, "restore") }

func readMarker(s *sess) (marker, bool, error) {
	b, err := os.ReadFile(markerPath(s))
	if errors.Is(err, fs.ErrNotExist) {
		return marker{}, false, nil
	}
	if err != nil {
		return marker{}, false, fmt.Errorf("read restore marker: %w", err)
	}
	var m marker
	if err := json.Unmarshal(b, &m); err != nil || m.Target == "" || m.Safety == "" {
		return marker{}, false, fmt.Errorf("restore marker %s is damaged (%q); remove it and restore again", markerPath(s), b)
	}
	return m, true, nil
}

func writeMarker(s *sess, m marker) error {
	b, _ := json.Marshal(m)
	if err := writeAtomic(markerPath(s), append(b, '\n'), true); err != nil {
		return fmt.Errorf("write restore marker: %w", err)
	}
	return nil
}

func removeMarker(s *sess) error {
	if err := os.Remove(markerPath(s)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove restore marker: %w", err)
	}
	return syncDir(s.dir)
}

// begin returns the owed restore, making target the one owed; with none owed it takes the safety
// snapshot and writes the marker. fresh is true when it took the safety snapshot, whose skipped
// paths it returns.
func (r *Repo) begin(ctx context.Context, s *sess, target string) (m marker, fresh bool, skipped []Skip, err error) {
	commit, err := r.resolve(ctx, target)
	if err != nil {
		return marker{}, false, nil, err
	}
	m, owed, err := readMarker(s)
	if err != nil {
		return marker{}, false, nil, err
	}
	if owed {
		if m.Target != commit {
			m.Target = commit
			if err := writeMarker(s, m); err != nil {
				return marker{}, false, nil, err
			}
		}
		return m, false, nil, nil
	}
	cp, err := r.snapshot(ctx, s, 0, true)
	if err != nil {
		return marker{}, false, nil, fmt.Errorf("safety snapshot: %w", err)
	}
	m = marker{Target: commit, Safety: cp.Commit}
	reached("restore:safety")
	if err := writeMarker(s, m); err != nil {
		return marker{}, false, nil, err
	}
	return m, true, cp.Skipped, nil
}

func (r *Repo) restore(ctx context.Context, s *sess, target string) (Restored, error) {
	start := time.Now()
	m, fresh, skipped, err := r.begin(ctx, s, target)
	if err != nil {
		return Restored{}, err
	}
	reached("restore:marked")
	if !fresh {
		// Begun earlier, perhaps interrupted: the index must say what the workspace holds now,
		// and what it holds is kept too (under a safety ref of its own), should someone have
		// changed files since.
		cp, err := r.snapshot(ctx, s, 0, true)
		if err != nil {
			return Restored{}, fmt.Errorf("snapshot before resuming: %w", err)
		}
		skipped = cp.Skipped
	}
	s.tree, s.watch = "", nil // read-tree below writes the index and the workspace
	tree, err := r.treeOf(ctx, m.Target)
	if err != nil {
		return Restored{}, err
	}
	left, err := r.leftOut(ctx, s, tree, skipped)
	if err != nil {
		return Restored{}, err
	}
	if len(left) > 0 {
		if tree, err = r.treeWithout(ctx, s, tree, left); err != nil {
			return Restored{}, err
		}
	}
	changed, removed, err := r.treeChanges(ctx, m.Safety, tree)
	if err != nil {
		return Restored{}, err
	}
	reached("restore:checkout")
	if _, err := r.git(ctx, run{args: []string{"read-tree", "--reset", "-u", tree}, index: s.index(), worktree: r.workspace}); err != nil {
		return Restored{}, err
	}
	if err := backdate(s.index(), start); err != nil {
		return Restored{}, err
	}
	reached("restore:checked-out")
	out, err := r.git(ctx, run{args: []string{"ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"}, index: s.index(), worktree: r.workspace})
	if err != nil {
		return Restored{}, err
	}
	if err := removeMarker(s); err != nil {
		return Restored{}, err
	}
	ignored, more := splitZ(out), 0
	if len(ignored) > MaxIgnoredListed {
		ignored, more = ignored[:MaxIgnoredListed], len(ignored)-MaxIgnoredListed
	}
	return Restored{
		Target:      m.Target,
		Safety:      m.Safety,
		Changed:     changed,
		Removed:     removed,
		NotCovered:  notCovered(skipped, left, ignored),
		MoreIgnored: more,
	}, nil
}

// resolve names a commit of the shadow repository by its full hash.
func (r *Repo) resolve(ctx context.Context, rev string) (string, error) {
	if !isHex(rev) {
		return "", fmt.Errorf("%w: %q is not a commit hash", ErrNotFound, rev)
	}
	out, err := r.git(ctx, run{args: []string{"rev-parse", "-q", "--verify", rev + "^{commit}"}})
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) {
			return "", fmt.Errorf("%w: no commit %s in the checkpoints of %s", ErrNotFound, rev, r.workspace)
		}
		return "", err
	}
	return string(bytes.TrimSpace(out)), nil
}

func isHex(s string) bool {
	if len(s) < 4 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func (r *Repo) treeOf(ctx context.Context, commit string) (string, error) {
	out, err := r.git(ctx, run{args: []string{"rev-parse", "--verify", commit + "^{tree}"}})
	if err != nil {
		return "", err
	}
	return string(bytes.TrimSpace(out)), nil
}

// leftOut finds the paths of the target tree a restore must not write: those that would replace,
// or be written inside, something the index (the workspace as snapshotted now) does not hold.
// Only paths the tree has and the index lacks can need that, and git lists them cheaply.
func (r *Repo) leftOut(ctx context.Context, s *sess, tree string, skipped []Skip) ([]Skip, error) {
	out, err := r.git(ctx, run{args: []string{"diff-index", "--cached", "-z", "--name-status", "--no-renames", tree}, index: s.index(), worktree: r.workspace})
	if err != nil {
		return nil, err
	}
	f := splitZ(out)
	var create []string
	indexOnly := map[string]bool{}
	for i := 0; i+1 < len(f); i += 2 {
		switch f[i] {
		case "D": // in the tree, not in the index
			create = append(create, f[i+1])
		case "A": // in the index, not in the tree
			indexOnly[f[i+1]] = true
		}
	}
	reasons := map[string]Reason{}
	for _, sk := range skipped {
		reasons[sk.Path] = sk.Reason
	}
	var left []Skip
	seen := map[string]bool{}
	blocked := map[string]string{} // ancestor directory -> the blocking path ("" when clear)
	for _, p := range create {
		if why, ok := r.blocked(p, indexOnly, reasons, blocked); ok {
			if !seen[why.Path] {
				seen[why.Path] = true
				left = append(left, why)
			}
		}
	}
	slices.SortFunc(left, func(a, b Skip) int { return strings.Compare(a.Path, b.Path) })
	return left, nil
}

// blocked reports what stands in the way of creating p, as the Skip to report.
func (r *Repo) blocked(p string, indexOnly map[string]bool, reasons map[string]Reason, memo map[string]string) (Skip, bool) {
	var dirs []string
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		dirs = append(dirs, d)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		d := dirs[i]
		if why := reasons[d+"/"]; why != "" {
			return Skip{Path: p, Reason: why}, true // a directory the snapshot skipped whole
		}
		b, ok := memo[d]
		if !ok {
			b = r.blockingDir(d, indexOnly)
			memo[d] = b
		}
		if b == "stop" {
			break
		}
		if b != "" {
			return Skip{Path: p, Reason: Reason(b)}, true
		}
	}
	full := filepath.Join(r.workspace, filepath.FromSlash(p))
	fi, err := os.Lstat(full)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return Skip{}, false // nothing there (or a file the index holds above it): create it
	}
	if err != nil {
		return Skip{Path: p, Reason: Unreadable}, true
	}
	if fi.IsDir() && dirCovered(full, p, indexOnly) {
		return Skip{}, false // a directory of files the index holds: read-tree replaces it
	}
	why := reasons[p]
	if why == "" {
		why = InTheWay
	}
	return Skip{Path: p, Reason: why}, true
}

// blockingDir judges a directory above a path to create: "" when the path can go under it, "stop"
// when it does not exist (nothing further down can block), else the reason it blocks.
func (r *Repo) blockingDir(d string, indexOnly map[string]bool) string {
	fi, err := os.Lstat(filepath.Join(r.workspace, filepath.FromSlash(d)))
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return "stop"
	case err != nil:
		return string(Unreadable)
	case fi.IsDir():
		_, err := os.Lstat(filepath.Join(r.workspace, filepath.FromSlash(d), ".git"))
		switch {
		case err == nil:
			return string(NestedRepo)
		case !errors.Is(err, fs.ErrNotExist):
			return string(Unreadable)
		}
		return ""
	case indexOnly[d]:
		return "stop" // a file the index holds, which read-tree replaces with the directory
	default:
		return string(InTheWay)
	}
}

// dirCovered reports whether every file under a directory is one the index holds (so that the
// restore may remove them all and put a file in the directory's place).
func dirCovered(full, rel string, indexOnly map[string]bool) bool {
	covered := true
	_ = filepath.WalkDir(full, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() == ".git" {
			covered = false
			return filepath.SkipAll
		}
		if d.IsDir() {
			return nil
		}
		r, _ := filepath.Rel(full, p)
		if !indexOnly[rel+"/"+filepath.ToSlash(r)] {
			covered = false
			return filepath.SkipAll
		}
		return nil
	})
	return covered
}

// treeWithout is tree less the paths left out, built in a scratch index.
func (r *Repo) treeWithout(ctx context.Context, s *sess, tree string, left []Skip) (string, error) {
	idx := filepath.Join(s.dir, randomName(".scratch-index-"))
	defer os.Remove(idx)
	if _, err := r.git(ctx, run{args: []string{"read-tree", tree}, index: idx}); err != nil {
		return "", err
	}
	paths := make([]string, len(left))
	for i, l := range left {
		paths[i] = l.Path
	}
	if err := r.unstage(ctx, idx, paths); err != nil {
		return "", err
	}
	out, err := r.git(ctx, run{args: []string{"write-tree"}, index: idx})
	if err != nil {
		return "", err
	}
	return string(bytes.TrimSpace(out)), nil
}

// treeChanges lists what going from one tree-ish to another writes and removes.
func (r *Repo) treeChanges(ctx context.Context, from, to string) (changed, removed []string, err error) {
	cs, err := r.diffTrees(ctx, from, to)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range cs {
		if c.Status == 'D' {
			removed = append(removed, c.Path)
		} else {
			changed = append(changed, c.Path)
		}
	}
	return changed, removed, nil
}

// notCovered merges what a restore left alone: skipped paths, paths left out, ignored ones.
func notCovered(skipped, left []Skip, ignored []string) []Skip {
	byPath := map[string]Skip{}
	for _, p := range ignored {
		byPath[p] = Skip{Path: p, Reason: Ignored}
	}
	for _, s := range skipped {
		byPath[s.Path] = s
	}
	for _, s := range left {
		if _, ok := byPath[s.Path]; !ok || s.Reason != InTheWay {
			byPath[s.Path] = s
		}
	}
	out := make([]Skip, 0, len(byPath))
	for _, s := range byPath {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Skip) int { return strings.Compare(a.Path, b.Path) })
	return out
}
