package checkpoint

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// quiet is long enough for every entry of a workspace to leave the racy window of a walk on the
// local filesystems tests run on (whose timestamps have nanosecond fractions), so that the
// snapshot after it keeps a watch.
const quiet = tickSlack + 20*time.Millisecond

// After any sequence of edits, a snapshot's tree is the workspace's tree as a fresh repository
// sees it: the watch never answers "unchanged" for a workspace git would snapshot differently.
// The edits include the ones stat data hide best: content rewritten at the same size with the
// mtime put back, a mode change, an ignore rule rewritten at the same size, a file shrinking
// under the size cap, a link pointed elsewhere.
func TestWatchNeverHidesAChange(t *testing.T) {
	var fast, checks atomic.Int64
	opt := Options{MaxFileSize: 64}
	rapid.Check(t, func(rt *rapid.T) {
		ws, err := os.MkdirTemp(t.TempDir(), "ws-")
		if err != nil {
			rt.Fatal(err)
		}
		write(t, ws, "a", "alpha\n")
		write(t, ws, "d/c", "gamma\n")
		write(t, ws, ".gitignore", "*.log\nignored/\n")
		write(t, ws, "ignored/g", "ignored\n")
		r := open(t, ws, opt)
		if _, err := r.Snapshot(ctx, "s", 0); err != nil {
			rt.Fatal(err)
		}
		steps := rapid.IntRange(1, 6).Draw(rt, "steps")
		for i := range steps {
			for range rapid.IntRange(0, 3).Draw(rt, "edits") {
				editAtRandom(rt, ws)
			}
			if rapid.Bool().Draw(rt, "quiet") {
				time.Sleep(quiet) // the snapshot below can then keep a watch for the next step
			}
			s, err := r.session("s")
			if err != nil {
				rt.Fatal(err)
			}
			watched := s.watch != nil && r.unchanged(s, s.watch)
			cp, err := r.Snapshot(ctx, "s", int64(i+1))
			if err != nil {
				rt.Fatal(err)
			}
			want, list := fresh(t, ws, opt)
			if cp.Tree != want {
				rt.Fatalf("step %d (watch said unchanged: %v): snapshot tree %s, the workspace's %s:\n%s\nfresh listing:\n%s",
					i, watched, cp.Tree, want, lineDiff(list, listing(t, r, cp.Commit)), list)
			}
			checks.Add(1)
			if watched {
				fast.Add(1)
			}
		}
	})
	t.Logf("%d of %d snapshots answered by the watch", fast.Load(), checks.Load())
	if fast.Load() == 0 {
		t.Fatal("no snapshot was answered by the watch: the property was never put to the test")
	}
}

var (
	editFiles = []string{"a", "b", "d/c", "d/e/f", "x.log", "ignored/g", "big"}
	editDirs  = []string{"d", "d/e", "n", "ignored"}
)

// editAtRandom makes one random change to the workspace.
func editAtRandom(rt *rapid.T, ws string) {
	p := func(rel string) string { return filepath.Join(ws, filepath.FromSlash(rel)) }
	file := rapid.SampledFrom(editFiles).Draw(rt, "file")
	must := func(err error) {
		if err != nil && !os.IsNotExist(err) {
			rt.Fatal(err)
		}
	}
	switch op := rapid.IntRange(0, 10).Draw(rt, "op"); op {
	case 0: // write, any size (over the cap of 64 too)
		os.MkdirAll(filepath.Dir(p(file)), 0o755)
		body := strings.Repeat("w", rapid.IntRange(0, 100).Draw(rt, "size"))
		must(os.WriteFile(p(file), []byte(body), 0o644))
	case 1: // the same size, other bytes, the mtime put back
		fi, err := os.Lstat(p(file))
		if err != nil || !fi.Mode().IsRegular() {
			return
		}
		b, err := os.ReadFile(p(file))
		must(err)
		for i := range b {
			b[i]++
		}
		must(os.WriteFile(p(file), b, fi.Mode().Perm()))
		must(os.Chtimes(p(file), fi.ModTime(), fi.ModTime()))
	case 2: // the executable bit
		fi, err := os.Lstat(p(file))
		if err != nil || !fi.Mode().IsRegular() {
			return
		}
		must(os.Chmod(p(file), fi.Mode().Perm()^0o111))
	case 3: // rename
		to := rapid.SampledFrom(editFiles).Draw(rt, "to")
		os.MkdirAll(filepath.Dir(p(to)), 0o755)
		must(os.Rename(p(file), p(to)))
	case 4: // delete
		must(os.Remove(p(file)))
	case 5: // mkdir, and a file in it
		d := rapid.SampledFrom(editDirs).Draw(rt, "dir")
		must(os.MkdirAll(p(d), 0o755))
		if rapid.Bool().Draw(rt, "fill") {
			must(os.WriteFile(p(d+"/new"), []byte("new\n"), 0o644))
		}
	case 6: // a new ignored file, or a file in the ignored directory
		if rapid.Bool().Draw(rt, "inDir") {
			must(os.MkdirAll(p("ignored"), 0o755))
			must(os.WriteFile(p("ignored/h"), []byte("h\n"), 0o644))
		} else {
			must(os.WriteFile(p("y.log"), []byte("log\n"), 0o644))
		}
	case 7: // the ignore rules, at the same size and mtime
		fi, _ := os.Lstat(p(".gitignore"))
		rules := rapid.SampledFrom([]string{"*.log\nignored/\n", "*.txt\nignored/\n", "*.log\nignore/\n", "*.log\n"}).Draw(rt, "rules")
		must(os.WriteFile(p(".gitignore"), []byte(rules), 0o644))
		if fi != nil {
			must(os.Chtimes(p(".gitignore"), fi.ModTime(), fi.ModTime()))
		}
	case 8: // a link, pointed at one file or another
		tmp := p("link.tmp")
		os.Remove(tmp)
		must(os.Symlink(file, tmp))
		must(os.Rename(tmp, p("link")))
	case 9: // a directory removed, with what it holds
		must(os.RemoveAll(p(rapid.SampledFrom(editDirs).Draw(rt, "rmdir"))))
	case 10: // the same bytes written again
		b, err := os.ReadFile(p(file))
		if err != nil {
			return
		}
		must(os.WriteFile(p(file), b, 0o644))
	}
}

// A snapshot of a workspace nothing changed in starts no git process.
func TestUnchangedSnapshotRunsNoGit(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin, log := filepath.Join(t.TempDir(), "git"), filepath.Join(t.TempDir(), "runs")
	script := "#!/bin/sh\necho \"$1 $2 $3\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	runs := func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "\n")
	}
	ws := t.TempDir()
	write(t, ws, "a.txt", "one\n")
	write(t, ws, "d/b.txt", "two\n")
	r := open(t, ws, Options{Git: bin})
	time.Sleep(quiet)
	first, err := r.Snapshot(ctx, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	before := runs()
	if before == 0 {
		t.Fatal("the wrapper saw no git run: it is not the git the repository runs")
	}
	for turn := int64(2); turn < 5; turn++ {
		cp, err := r.Snapshot(ctx, "s", turn)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Changed || cp.Commit != first.Commit || cp.Tree != first.Tree {
			t.Fatalf("turn %d: %+v, want %s unchanged", turn, cp, first.Commit)
		}
	}
	if n := runs() - before; n != 0 {
		b, _ := os.ReadFile(log)
		t.Fatalf("three snapshots of an unchanged workspace started %d git processes:\n%s", n, b)
	}
	// A change is seen, by git.
	write(t, ws, "d/b.txt", "three\n")
	cp, err := r.Snapshot(ctx, "s", 5)
	if err != nil {
		t.Fatal(err)
	}
	if !cp.Changed || runs() == before {
		t.Fatalf("after a change: %+v, %d git runs", cp, runs()-before)
	}
	sameTree(t, r, cp.Commit, Options{})
}

// A walk keeps no watch while an entry changed within the racy window, and keeps one once the
// workspace has been still for longer.
func TestWalkRacyWindow(t *testing.T) {
	ws := t.TempDir()
	write(t, ws, "d/a.txt", "one\n")
	r := open(t, ws, Options{})
	if w, _ := r.walk(time.Now()); w != nil {
		t.Fatal("a walk right after a write kept a watch")
	}
	time.Sleep(quiet)
	w, _ := r.walk(time.Now())
	if w == nil {
		t.Fatal("a walk of a still workspace kept no watch")
	}
	var got []string
	for _, d := range w.dirs {
		for _, n := range d.names {
			got = append(got, d.path+"/"+n)
		}
	}
	if want := []string{ws + "/d", ws + "/d/a.txt"}; len(w.dirs) != 2 || w.dirs[0].path != ws || !slices.Equal(got, want) {
		t.Fatalf("watched %d directories with %q, want the root and d with %q", len(w.dirs), got, want)
	}
	// A file dated in the future (a clock set back, a copied archive) is within the window.
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(ws, "d", "a.txt"), future, future); err != nil {
		t.Fatal(err)
	}
	time.Sleep(quiet)
	if w, _ := r.walk(time.Now()); w != nil {
		t.Fatal("a walk kept a watch of a file dated in the future")
	}
}

func TestGranule(t *testing.T) {
	ts := func(ns ...int64) []watchDir {
		d := watchDir{key: statKey{mtime: 5e9, ctime: 5e9}}
		for _, n := range ns {
			d.keys = append(d.keys, statKey{mtime: 5e9 + n, ctime: 5e9 + n})
		}
		return []watchDir{d}
	}
	for _, c := range []struct {
		ns   []int64
		want time.Duration
	}{
		{[]int64{0, 0}, 2 * time.Second},
		{nil, 2 * time.Second},
		{[]int64{0, 500_000_000}, 100 * time.Millisecond},
		{[]int64{123_456_700}, 100},
		{[]int64{123_456_789, 0}, 1},
		{[]int64{10_000_000, 20_000_000}, 10 * time.Millisecond},
	} {
		if got := granule(ts(c.ns...)); got != c.want {
			t.Errorf("granule(%v) = %v, want %v", c.ns, got, c.want)
		}
	}
}
