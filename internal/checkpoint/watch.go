package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A watch is what a snapshot saw of the workspace, kept so that the next snapshot of the session
// can tell, with one lstat per entry and no git process, that nothing changed: the stat data of
// every entry of every directory of the workspace (files, links and directories, ignored ones
// too; only .git and rein's own state directory are passed over), taken before git looked at the
// files, and the stat data of everything else the snapshot's answer depends on — the session's
// index, its head ref, the packed refs, and the exclude files. When all of them stat the same,
// the workspace holds what the snapshot captured: a file whose content changed has a new ctime
// (a write, even one that puts its mtime back, sets it), a file added, removed or renamed gives
// its directory a new mtime, and a rule that could make git see more or fewer paths lives in a
// .gitignore (an entry watched like any other) or an exclude file (watched too). Any doubt —
// an entry that cannot be read, a mount point inside the workspace, a filesystem whose clock
// rein cannot trust, too many entries — leaves no watch, and the next snapshot runs git.
//
// A watch says "unchanged", never "changed": an entry that stats differently only sends the
// snapshot to git, which decides as it always did.
//
// Racily clean entries: a file changed within the timestamp granule of its last change keeps
// its stat data. An entry whose mtime or ctime lies within racyWindow of the moment the walk
// began (or after it) could change again, after the walk, without its stat data showing it, so
// a walk that meets one keeps no watch: the snapshots that follow run git until the workspace
// has been still for that long.
type watch struct {
	paths []string // absolute
	stats []statKey

	// What the snapshot found: the answer of a snapshot that finds everything as it was.
	commit, tree string
	skipped      []Skip

	index      indexStamp
	headRef    statKey // refs/rein/<session>/head as a loose ref (zero when absent)
	packedRefs statKey // the repository's packed-refs (zero when absent)
	excludes   string  // workspaceExcludes() when the walk began
	exclStat   statKey
	ownExclude statKey // the shadow repository's info/exclude
}

// statKey is the part of a stat that changes when an entry changes.
type statKey struct {
	dev, ino     uint64
	mode         uint32
	size         int64
	mtime, ctime syscall.Timespec
}

// maxWatched bounds a watch: past it (a tree with a large ignored directory) each snapshot runs
// git, as it does without a watch, and the walk is not tried again for watchBackoff snapshots.
const (
	maxWatched   = 20000
	watchBackoff = 64
)

// tickSlack is how far behind the clock a file's timestamps can be: the kernel dates changes by
// its coarse clock, which lags the precise one by up to a scheduler tick (10 ms at 100 Hz).
const tickSlack = 50 * time.Millisecond

func lstatKey(p string, st *syscall.Stat_t) (statKey, error) {
	if err := syscall.Lstat(p, st); err != nil {
		return statKey{}, err
	}
	return keyOf(st), nil
}

// stampKey is a file's statKey, zero when it does not exist (a state to compare like any other).
func stampKey(p string) statKey {
	var st syscall.Stat_t
	k, _ := lstatKey(p, &st)
	return k
}

func (r *Repo) headRefPath(session string) string {
	return filepath.Join(r.gitDir, filepath.FromSlash(refPrefix(session)+"head"))
}

// walk takes a watch of the workspace (its commit and the stamps of the repository's files are
// filled in by the snapshot that follows); nil when it cannot keep one, and big when that is
// because the workspace has more than maxWatched entries.
func (r *Repo) walk(start time.Time) (w *watch, big bool) {
	var st syscall.Stat_t
	root, err := lstatKey(r.workspace, &st)
	if err != nil || !localClock(r.workspace) {
		return nil, false
	}
	w = &watch{excludes: r.workspaceExcludes(), ownExclude: stampKey(filepath.Join(r.gitDir, "info", "exclude"))}
	w.exclStat = stampKey(w.excludes)
	w.paths, w.stats = append(w.paths, r.workspace), append(w.stats, root)
	skipDir := r.ownStateIn()
	dirs := []string{r.workspace}
	for len(dirs) > 0 {
		d := dirs[len(dirs)-1]
		dirs = dirs[:len(dirs)-1]
		f, err := os.Open(d)
		if err != nil {
			return nil, false
		}
		names, err := f.Readdirnames(-1)
		f.Close()
		if err != nil {
			return nil, false
		}
		for _, name := range names {
			if strings.EqualFold(name, ".git") {
				continue // never captured, at any depth (a nested repository's .git included)
			}
			p := d + string(filepath.Separator) + name
			k, err := lstatKey(p, &st)
			if err != nil || k.dev != root.dev {
				return nil, false // gone under the walk, unreadable, or another filesystem
			}
			w.paths, w.stats = append(w.paths, p), append(w.stats, k)
			if st.Mode&syscall.S_IFMT == syscall.S_IFDIR && p != skipDir {
				dirs = append(dirs, p)
			}
		}
		if len(w.paths) > maxWatched {
			return nil, true
		}
	}
	// The walk is trusted only if no entry changed so recently that a change after the walk
	// could leave its stat data as they are. The window is the clock's lag plus the timestamps'
	// granule, read off the timestamps themselves: a filesystem that keeps whole seconds gives
	// every timestamp a zero fraction.
	since := start.Add(-tickSlack - granule(w.stats)).UnixNano()
	for _, k := range w.stats {
		if k.mtime.Nano() >= since || k.ctime.Nano() >= since {
			return nil, false
		}
	}
	return w, false
}

// granule is the coarsest timestamp granule the entries' times allow: the largest power of ten
// (of nanoseconds, up to a second) dividing every fraction seen, and two seconds when every
// fraction is zero (FAT keeps even seconds).
func granule(stats []statKey) time.Duration {
	g := int64(time.Second)
	for _, k := range stats {
		for _, ns := range []int64{k.mtime.Nsec, k.ctime.Nsec} {
			for g > 1 && ns%g != 0 {
				g /= 10
			}
		}
		if g == 1 {
			break
		}
	}
	if g == int64(time.Second) {
		return 2 * time.Second
	}
	return time.Duration(g)
}

// ownStateIn is rein's state directory when it lies inside the workspace (the shadow repository's
// info/exclude keeps it out of every snapshot, and it changes with every one), else "".
func (r *Repo) ownStateIn() string {
	state := filepath.Dir(filepath.Dir(r.gitDir)) // <state>/checkpoints/<slug>.git
	if real, err := filepath.EvalSymlinks(state); err == nil {
		state = real
	}
	if rel, err := filepath.Rel(r.workspace, state); err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	return state
}

// seal completes a watch with what the snapshot made of the workspace and the stamps of the
// repository's files as the snapshot left them.
func (r *Repo) seal(w *watch, s *sess, cp Checkpoint) bool {
	idx, ok := stampIndex(s.index())
	if !ok || cp.Commit == "" {
		return false
	}
	w.commit, w.tree, w.skipped = cp.Commit, cp.Tree, cp.Skipped
	w.index = idx
	w.headRef = stampKey(r.headRefPath(s.id))
	w.packedRefs = stampKey(filepath.Join(r.gitDir, "packed-refs"))
	return true
}

// unchanged reports whether everything the watch saw stats as it did: then the workspace holds
// the watch's tree, and the session's head is still its commit.
func (r *Repo) unchanged(s *sess, w *watch) bool {
	if idx, ok := stampIndex(s.index()); !ok || idx != w.index {
		return false
	}
	if stampKey(r.headRefPath(s.id)) != w.headRef || stampKey(filepath.Join(r.gitDir, "packed-refs")) != w.packedRefs {
		return false
	}
	if stampKey(filepath.Join(r.gitDir, "info", "exclude")) != w.ownExclude {
		return false
	}
	if ex := r.workspaceExcludes(); ex != w.excludes || stampKey(ex) != w.exclStat {
		return false
	}
	var st syscall.Stat_t
	for i, p := range w.paths {
		if k, err := lstatKey(p, &st); err != nil || k != w.stats[i] {
			return false
		}
	}
	return true
}
