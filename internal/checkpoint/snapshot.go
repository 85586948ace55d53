package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Snapshot checkpoints the workspace for a session at a turn: it brings the session's index up
// to date with the workspace and, when the tree differs from the session's head, commits it and
// points refs/rein/<session>/head and refs/rein/<session>/turn/<turn> at the commit. An unchanged
// tree makes no commit and moves no ref (Changed false, Commit the head). While a restore is owed
// (see Pending) it refuses with ErrRestoreOwed: the workspace is half way between two states.
func (r *Repo) Snapshot(ctx context.Context, session string, turn int64) (Checkpoint, error) {
	if turn < 0 {
		return Checkpoint{}, fmt.Errorf("snapshot: turn %d: turns count from 0", turn)
	}
	s, release, err := r.hold(ctx, session)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("snapshot session %s: %w", session, err)
	}
	defer release()
	if m, owed, err := readMarker(s); err != nil {
		return Checkpoint{}, fmt.Errorf("snapshot session %s: %w", session, err)
	} else if owed {
		return Checkpoint{}, fmt.Errorf("snapshot session %s: %w: the workspace is partway to %s; Restore completes it (or Abandon forgets it)", session, ErrRestoreOwed, m.Target)
	}
	if w := s.watch; w != nil && r.unchanged(s, w) {
		return Checkpoint{Session: s.id, Turn: turn, Commit: w.commit, Tree: w.tree, Skipped: slices.Clone(w.skipped)}, nil
	}
	s.watch = nil
	if err := r.clearStaleLocks(s); err != nil {
		return Checkpoint{}, fmt.Errorf("snapshot session %s: %w", session, err)
	}
	// The walk comes before git reads anything: a change made after it shows in the next
	// snapshot's stat data, whether or not git saw it.
	var w *watch
	if s.walkAfter > 0 {
		s.walkAfter--
	} else {
		var big bool
		if w, big = r.walk(time.Now()); big {
			s.walkAfter = watchBackoff
		}
	}
	cp, err := r.snapshot(ctx, s, turn, false)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("snapshot session %s turn %d: %w", session, turn, err)
	}
	if w != nil && r.seal(w, s, cp) {
		s.watch = w
	}
	return cp, nil
}

// snapshot stages and commits; safety checkpoints get a safety ref instead of a turn ref, and one
// even when the tree is unchanged (pointing at the head).
func (r *Repo) snapshot(ctx context.Context, s *sess, turn int64, safety bool) (Checkpoint, error) {
	start := time.Now()
	s.watch = nil
	// The head is read beside the staging, which does not move it: one git process less on the
	// way of a snapshot that finds nothing changed (the loop waits for it before tools run).
	type headResult struct {
		commit, tree string
		err          error
	}
	heads := make(chan headResult, 1)
	go func() {
		c, t, err := r.head(ctx, s.id)
		heads <- headResult{c, t, err}
	}()
	skipped, wrote, err := r.stage(ctx, s)
	if err != nil {
		<-heads
		return Checkpoint{}, err
	}
	tree := s.tree
	if now, ok := stampIndex(s.index()); wrote || !ok || tree == "" || now != s.treeStamp {
		// The index is not the one whose tree this process last wrote: write it. (When it
		// is, write-tree would only read 100,000 entries to give the same answer.)
		s.tree = ""
		out, err := r.git(ctx, run{args: []string{"write-tree"}, index: s.index()})
		if err != nil {
			<-heads
			return Checkpoint{}, err
		}
		// write-tree may rewrite the index (to keep the trees it computed): backdate after it.
		if err := backdate(s.index(), start); err != nil {
			<-heads
			return Checkpoint{}, err
		}
		tree = string(bytes.TrimSpace(out))
		if st, ok := stampIndex(s.index()); ok {
			s.tree, s.treeStamp = tree, st
		}
	}
	h := <-heads
	head, headTree, err := h.commit, h.tree, h.err
	if err != nil {
		return Checkpoint{}, err
	}
	cp := Checkpoint{Session: s.id, Turn: turn, Commit: head, Tree: tree, Skipped: skipped}
	var updates []string
	if head == "" || headTree != tree {
		args := []string{"commit-tree", tree, "-m", commitMessage(s.id, turn, safety)}
		if head != "" {
			args = append(args, "-p", head)
		}
		date := strconv.FormatInt(r.now().Unix(), 10) + " +0000"
		out, err := r.git(ctx, run{args: args, env: []string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}})
		if err != nil {
			return Checkpoint{}, err
		}
		cp.Commit, cp.Changed = string(bytes.TrimSpace(out)), true
		old := head
		if old == "" {
			old = zeroID // the head must not exist yet
		}
		updates = append(updates, "update "+refPrefix(s.id)+"head\x00"+cp.Commit+"\x00"+old)
		if !safety {
			updates = append(updates, "update "+refPrefix(s.id)+"turn/"+strconv.FormatInt(turn, 10)+"\x00"+cp.Commit+"\x00")
		}
	}
	if safety {
		updates = append(updates, "update "+refPrefix(s.id)+"safety/"+cp.Commit+"\x00"+cp.Commit+"\x00")
	}
	if len(updates) > 0 {
		// One transaction: the head and the turn move together or not at all. The head's old
		// value is checked, so a head moved under us fails rather than being lost.
		stdin := strings.Join(updates, "\x00") + "\x00"
		if _, err := r.git(ctx, run{args: []string{"update-ref", "-z", "--stdin"}, stdin: strings.NewReader(stdin)}); err != nil {
			return Checkpoint{}, err
		}
	}
	return cp, nil
}

// zeroID, as an old value in update-ref, says the ref must not exist.
const zeroID = "0000000000000000000000000000000000000000"

func commitMessage(session string, turn int64, safety bool) string {
	if safety {
		return "rein safety checkpoint\n\nSession: " + session + "\n"
	}
	return "rein checkpoint\n\nSession: " + session + "\nTurn: " + strconv.FormatInt(turn, 10) + "\n"
}

// head is the session's head commit and its tree; empty strings when the session has none.
func (r *Repo) head(ctx context.Context, session string) (commit, tree string, err error) {
	out, err := r.git(ctx, run{args: []string{"for-each-ref", "--format=%(objectname) %(tree)", refPrefix(session) + "head"}})
	if err != nil {
		return "", "", err
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return "", "", nil
	}
	return f[0], f[1], nil
}

func (s *sess) index() string { return filepath.Join(s.dir, "index") }

// stage brings the session's index up to date with the workspace and returns what it left out,
// and whether it changed the index.
// It asks git for the untracked paths and for the tracked paths whose stat data changed, at the
// same time, then judges each of those paths and gives update-index only the ones to add, update
// or remove; git's stat cache makes an unchanged tree cost a walk and an lstat per file.
func (r *Repo) stage(ctx context.Context, s *sess) (skips []Skip, wrote bool, err error) {
	if err := r.seedIndex(s); err != nil {
		return nil, false, err
	}
	idx := s.index()
	type result struct {
		out []byte
		err error
	}
	others := make(chan result, 1)
	var warnings limitedBuffer
	warnings.buf, warnings.max = new(bytes.Buffer), 1<<20
	go func() {
		out, err := r.git(ctx, run{args: []string{"ls-files", "-z", "--others", "--exclude-standard"}, index: idx, worktree: r.workspace, stderr: &warnings})
		others <- result{out, err}
	}()
	changed, err := r.git(ctx, run{args: []string{"diff-files", "-z", "--name-only", "--no-renames", "--ignore-submodules=none"}, index: idx, worktree: r.workspace})
	o := <-others
	if err != nil {
		return nil, false, err
	}
	if o.err != nil {
		return nil, false, o.err
	}

	j := newJudge(r.workspace, r.maxSize)
	for _, d := range unreadableDirs(warnings.buf.String()) {
		j.skip(d, Unreadable, 0)
	}
	var update, drop []string
	gitignores := false
	for _, p := range splitZ(o.out) {
		if strings.HasSuffix(p, "/") {
			j.skip(p, NestedRepo, 0) // git lists an untracked nested repository as a directory
			continue
		}
		switch j.judge(p, false) {
		case keep:
			update = append(update, p)
		}
		gitignores = gitignores || path.Base(p) == ".gitignore"
	}
	for _, p := range splitZ(changed) {
		switch j.judge(p, true) {
		case keep, gone:
			update = append(update, p)
		case left, replaced:
			drop = append(drop, p)
		}
		gitignores = gitignores || path.Base(p) == ".gitignore"
	}
	drop = append(drop, j.nestedTracked()...)

	if len(drop) > 0 {
		if err := r.unstage(ctx, idx, drop); err != nil {
			return nil, false, err
		}
		wrote = true
	}
	if len(update) > 0 {
		stdin := strings.Join(update, "\x00") + "\x00"
		if _, err := r.git(ctx, run{args: []string{"update-index", "--add", "--remove", "--replace", "-z", "--stdin"},
			stdin: strings.NewReader(stdin), index: idx, worktree: r.workspace}); err != nil {
			return nil, false, err
		}
		wrote = true
	}
	// Ignore rules that changed can make tracked entries ignored: those leave the index, as they
	// would never have entered a fresh one.
	stamp := stampOf(r.workspaceExcludes())
	if gitignores || !s.staged || stamp != s.excludeSeen {
		out, err := r.git(ctx, run{args: []string{"ls-files", "-z", "--cached", "--ignored", "--exclude-standard"}, index: idx, worktree: r.workspace})
		if err != nil {
			return nil, false, err
		}
		if ign := splitZ(out); len(ign) > 0 {
			if err := r.unstage(ctx, idx, ign); err != nil {
				return nil, false, err
			}
			wrote = true
		}
	}
	s.staged, s.excludeSeen = true, stamp
	return j.skipped(), wrote, nil
}

// unreadableDirs finds the directories git's walk could not read in what it printed: it warns
// and goes on, and a snapshot must name what it left out.
func unreadableDirs(stderr string) []string {
	var dirs []string
	for _, line := range strings.Split(stderr, "\n") {
		rest, ok := strings.CutPrefix(line, "warning: could not open directory '")
		if !ok {
			continue
		}
		if i := strings.LastIndex(rest, "': "); i > 0 {
			dirs = append(dirs, rest[:i])
		}
	}
	return dirs
}

// backdate sets an index file's modification time to a second before start, the moment the
// operation that last wrote or checked it began; every operation that can write the index calls
// it after its last git command. Git trusts an entry's stat data only when the file
// is older than the index ("racy git"): a file changed after git read it but within the same
// clock tick, with its size unchanged, keeps stat data that match the entry. An index backdated
// this way makes every file changed since the check began racy, so the next snapshot compares
// their content; files older than that were checked after their last change.
func backdate(idx string, start time.Time) error {
	t := start.Add(-time.Second)
	if err := os.Chtimes(idx, t, t); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backdate index: %w", err)
	}
	return nil
}

// unstage removes paths from an index: files by name, and directories, named with a trailing
// "/", with everything beneath them. (Not git rm --cached: it matches every entry against every
// path given, which takes minutes for the 100,000 entries of a node_modules ignored at last.)
func (r *Repo) unstage(ctx context.Context, idx string, paths []string) error {
	var files, dirs []string
	for _, p := range paths {
		if d, ok := strings.CutSuffix(p, "/"); ok {
			dirs = append(dirs, d)
		} else {
			files = append(files, p)
		}
	}
	if len(dirs) > 0 {
		out, err := r.git(ctx, run{args: append([]string{"ls-files", "-z", "--cached", "--"}, dirs...), index: idx, worktree: r.workspace})
		if err != nil {
			return err
		}
		files = append(files, splitZ(out)...)
	}
	if len(files) == 0 {
		return nil
	}
	_, err := r.git(ctx, run{args: []string{"update-index", "--force-remove", "-z", "--stdin"},
		stdin: strings.NewReader(strings.Join(files, "\x00") + "\x00"), index: idx, worktree: r.workspace})
	return err
}

// seedIndex gives a session without an index a copy of the most recently written index of
// another session, so that git's stat cache spares its first snapshot from hashing every file.
// Any index of this workspace is a correct start: staging compares it with the files.
func (r *Repo) seedIndex(s *sess) error {
	if _, err := os.Stat(s.index()); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	des, err := os.ReadDir(filepath.Dir(s.dir))
	if err != nil {
		return err
	}
	var best string
	var bestTime time.Time
	for _, de := range des {
		if de.Name() == s.id || !de.IsDir() {
			continue
		}
		p := filepath.Join(filepath.Dir(s.dir), de.Name(), "index")
		if fi, err := os.Stat(p); err == nil && fi.ModTime().After(bestTime) {
			best, bestTime = p, fi.ModTime()
		}
	}
	if best == "" {
		return nil
	}
	src, err := os.Open(best)
	if err != nil {
		return nil // it went away: start empty
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, ".seed-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// The copy keeps the original's time: git judges which entries are racy by it (see backdate).
	if err := os.Chtimes(tmp.Name(), fi.ModTime(), fi.ModTime()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.index())
}

func splitZ(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// indexStamp tells whether an index file was written: any write gives it a new ctime.
type indexStamp struct {
	ino, size    uint64
	mtime, ctime syscall.Timespec
}

func stampIndex(p string) (indexStamp, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		return indexStamp{}, false
	}
	mtime, ctime := statTimes(&st)
	return indexStamp{ino: st.Ino, size: uint64(st.Size), mtime: mtime, ctime: ctime}, true
}

// fileStamp tells whether a file changed: its path, size and modification time.
type fileStamp struct {
	path string
	size int64
	mod  time.Time
}

func stampOf(p string) fileStamp {
	st := fileStamp{path: p}
	if fi, err := os.Stat(p); err == nil {
		st.size, st.mod = fi.Size(), fi.ModTime()
	}
	return st
}

// verdict is what staging does with a path git reported.
type verdict int

const (
	keep     verdict = iota // add or update it
	gone                    // it no longer exists: update-index --remove drops it
	left                    // skipped: drop it from the index if it is there
	replaced                // a directory now: drop its entry, not reported
)

const rOK = 4 // access(2)'s R_OK

// judge decides, path by path, what a snapshot holds, and remembers what it skipped. It looks at
// each path's directories once, for a .git that makes them a nested repository.
type judge struct {
	root    string
	max     int64
	skips   map[string]Skip
	nested  map[string]bool // directory (slash-separated, no trailing slash) -> holds a .git
	tracked map[string]bool // nested directories found above a tracked path
}

func newJudge(root string, max int64) *judge {
	return &judge{root: root, max: max, skips: map[string]Skip{}, nested: map[string]bool{"": false}, tracked: map[string]bool{}}
}

func (j *judge) skip(p string, why Reason, size int64) {
	j.skips[p] = Skip{Path: p, Reason: why, Size: size}
}

func (j *judge) judge(p string, tracked bool) verdict {
	if badName(p) {
		j.skip(p, BadName, 0)
		return left
	}
	if d := j.nestedAbove(p); d != "" {
		j.skip(d+"/", NestedRepo, 0)
		if tracked {
			j.tracked[d] = true
		}
		return left
	}
	full := filepath.Join(j.root, filepath.FromSlash(p))
	fi, err := os.Lstat(full)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return gone
	case err != nil:
		j.skip(p, Unreadable, 0)
		return left
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		if j.max >= 0 && fi.Size() > j.max {
			j.skip(p, Oversize, fi.Size())
			return left
		}
		// One syscall rather than an open and a close: the first snapshot asks it of every file.
		if err := syscall.Access(full, rOK); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return gone
			}
			j.skip(p, Unreadable, 0)
			return left
		}
		return keep
	case m&fs.ModeSymlink != 0:
		return keep
	case m.IsDir():
		// A tracked file became a directory: its entry leaves the index, and the directory's
		// files come as untracked paths of their own.
		return replaced
	default:
		j.skip(p, Special, 0)
		return left
	}
}

// nestedAbove returns the nearest directory above p that holds a .git, or "".
func (j *judge) nestedAbove(p string) string {
	var dirs []string
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		dirs = append(dirs, d)
	}
	found := ""
	for i := len(dirs) - 1; i >= 0; i-- { // outermost first: the outermost nested repo wins
		d := dirs[i]
		n, ok := j.nested[d]
		if !ok {
			_, err := os.Lstat(filepath.Join(j.root, filepath.FromSlash(d), ".git"))
			n = err == nil
			j.nested[d] = n
		}
		if n && found == "" {
			found = d
		}
	}
	return found
}

// nestedTracked is the nested repositories found above tracked paths: their entries leave the
// index, whole.
func (j *judge) nestedTracked() []string {
	var out []string
	for d := range j.tracked {
		out = append(out, d+"/")
	}
	slices.Sort(out)
	return out
}

func (j *judge) skipped() []Skip {
	out := make([]Skip, 0, len(j.skips))
	for _, s := range j.skips {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Skip) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// badName reports a path git refuses to store: a component that is .git in any case.
func badName(p string) bool {
	for c := range strings.SplitSeq(p, "/") {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}
