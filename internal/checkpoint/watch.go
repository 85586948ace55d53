package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
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
// its stat data. An entry whose mtime or ctime lies within tickSlack plus that granule of the
// moment the walk began (or after it) could change again, after the walk, without its stat data
// showing it, so a walk that meets one keeps no watch: the snapshots that follow run git until
// the workspace has been still for that long.
type watch struct {
	dirs []watchDir // the workspace's directories, the root first, each before those in it

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

// watchDir is a directory of the workspace and its entries as a walk saw them: each entry is
// stat'ed relative to the open directory, a lookup of one name, not of the whole path.
type watchDir struct {
	path  string // absolute
	key   statKey
	names []string
	keys  []statKey
}

// statKey is the part of a stat that changes when an entry changes; times in nanoseconds.
type statKey struct {
	dev, ino     uint64
	mode         uint32
	size         int64
	mtime, ctime int64
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

// stampKey is a file's statKey, zero when it does not exist (a state to compare like any other).
func stampKey(p string) statKey {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil {
		return statKey{}
	}
	return keyOf(&st)
}

// openDir opens a directory of the workspace for stat'ing its entries, never through a link.
func openDir(p string) (int, error) {
	return unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

func (r *Repo) headRefPath(session string) string {
	return filepath.Join(r.gitDir, filepath.FromSlash(refPrefix(session)+"head"))
}

// walk takes a watch of the workspace (its commit and the stamps of the repository's files are
// filled in by the snapshot that follows); nil when it cannot keep one, and big when that is
// because the workspace has more than maxWatched entries.
func (r *Repo) walk(start time.Time) (w *watch, big bool) {
	if !localClock(r.workspace) {
		return nil, false
	}
	w = &watch{excludes: r.workspaceExcludes(), ownExclude: stampKey(filepath.Join(r.gitDir, "info", "exclude"))}
	w.exclStat = stampKey(w.excludes)
	skipDir := r.ownStateIn()
	var dev uint64
	entries := 0
	var st unix.Stat_t
	for todo := []string{r.workspace}; len(todo) > 0; {
		d := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		f, err := os.OpenFile(d, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		if err != nil {
			return nil, false
		}
		wd, err := walkDir(f, d, &st)
		f.Close()
		if err != nil {
			return nil, false
		}
		if len(w.dirs) == 0 {
			dev = wd.key.dev
		}
		if wd.key.dev != dev {
			return nil, false // another filesystem mounted inside the workspace
		}
		for i, k := range wd.keys {
			if k.mode&unix.S_IFMT == unix.S_IFDIR {
				if p := d + string(filepath.Separator) + wd.names[i]; p != skipDir {
					todo = append(todo, p)
				}
			}
		}
		w.dirs = append(w.dirs, wd)
		if entries += len(wd.names) + 1; entries > maxWatched {
			return nil, true
		}
	}
	// The walk is trusted only if no entry changed so recently that a change after the walk
	// could leave its stat data as they are. The window is the clock's lag plus the timestamps'
	// granule, read off the timestamps themselves: a filesystem that keeps whole seconds gives
	// every timestamp a zero fraction.
	since := start.Add(-tickSlack - granule(w.dirs)).UnixNano()
	for _, d := range w.dirs {
		if d.key.mtime >= since || d.key.ctime >= since {
			return nil, false
		}
		for _, k := range d.keys {
			if k.mtime >= since || k.ctime >= since {
				return nil, false
			}
		}
	}
	return w, false
}

// walkDir reads one open directory: its own stat, then its entries' (.git passed over: it is
// never captured, at any depth, a nested repository's included).
func walkDir(f *os.File, path string, st *unix.Stat_t) (watchDir, error) {
	fd := int(f.Fd())
	if err := unix.Fstat(fd, st); err != nil {
		return watchDir{}, err
	}
	wd := watchDir{path: path, key: keyOf(st)}
	names, err := f.Readdirnames(-1)
	if err != nil {
		return watchDir{}, err
	}
	for _, name := range names {
		if strings.EqualFold(name, ".git") {
			continue
		}
		if err := unix.Fstatat(fd, name, st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return watchDir{}, err // gone under the walk, or unreadable
		}
		wd.names, wd.keys = append(wd.names, name), append(wd.keys, keyOf(st))
	}
	return wd, nil
}

// granule is the coarsest timestamp granule the entries' times allow: the largest power of ten
// (of nanoseconds, up to a second) dividing every fraction seen, and two seconds when every
// fraction is zero (FAT keeps even seconds).
func granule(dirs []watchDir) time.Duration {
	g := int64(time.Second)
	fit := func(k statKey) {
		for _, ns := range []int64{k.mtime, k.ctime} {
			for g > 1 && ns%g != 0 {
				g /= 10
			}
		}
	}
	for _, d := range dirs {
		fit(d.key)
		for _, k := range d.keys {
			fit(k)
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
	var st unix.Stat_t
	for _, d := range w.dirs {
		if !d.unchanged(&st) {
			return false
		}
	}
	return true
}

func (d *watchDir) unchanged(st *unix.Stat_t) bool {
	fd, err := openDir(d.path)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if unix.Fstat(fd, st) != nil || keyOf(st) != d.key {
		return false
	}
	for i, name := range d.names {
		if unix.Fstatat(fd, name, st, unix.AT_SYMLINK_NOFOLLOW) != nil || keyOf(st) != d.keys[i] {
			return false
		}
	}
	return true
}
