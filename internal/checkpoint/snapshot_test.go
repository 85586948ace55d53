package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestUnchangedTreeMakesNoCommit(t *testing.T) {
	ws := t.TempDir()
	write(t, ws, "a.txt", "a\n")
	write(t, ws, "d/b.txt", "b\n")
	r := open(t, ws, Options{})
	cp1, err := r.Snapshot(ctx, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	refs := gitOut(t, r, "for-each-ref")
	// Touching files changes their stat data, not their content: still no commit.
	future := time.Now().Add(time.Hour)
	for _, p := range []string{"a.txt", "d/b.txt"} {
		if err := os.Chtimes(filepath.Join(ws, p), future, future); err != nil {
			t.Fatal(err)
		}
	}
	for turn := int64(2); turn < 4; turn++ {
		cp, err := r.Snapshot(ctx, "s", turn)
		if err != nil {
			t.Fatal(err)
		}
		if cp.Changed || cp.Commit != cp1.Commit || cp.Tree != cp1.Tree {
			t.Fatalf("turn %d: %+v, want the head %s unchanged", turn, cp, cp1.Commit)
		}
	}
	if got := gitOut(t, r, "for-each-ref"); got != refs {
		t.Fatalf("refs moved:\n%s\nwas\n%s", got, refs)
	}
	write(t, ws, "a.txt", "a, changed\n")
	cp4, err := r.Snapshot(ctx, "s", 4)
	if err != nil {
		t.Fatal(err)
	}
	if !cp4.Changed || cp4.Commit == cp1.Commit {
		t.Fatalf("a change made no commit: %+v", cp4)
	}
	list, err := r.List(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Commit != cp1.Commit || list[0].Turn != 1 || list[1].Commit != cp4.Commit || list[1].Turn != 4 {
		t.Fatalf("list %+v", list)
	}
	for turn, want := range map[int64]string{1: cp1.Commit, 3: cp1.Commit, 4: cp4.Commit, 99: cp4.Commit} {
		if e, err := r.At(ctx, "s", turn); err != nil || e.Commit != want {
			t.Errorf("At(%d) = %+v, %v; want %s", turn, e, err, want)
		}
	}
	if _, err := r.At(ctx, "s", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("At(0): %v, want ErrNotFound", err)
	}
	var patch strings.Builder
	if err := r.Patch(ctx, "", cp4.Commit, &patch); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(patch.String(), "-a\n+a, changed\n") || strings.Contains(patch.String(), "b.txt") {
		t.Fatalf("patch of turn 4:\n%s", patch.String())
	}
}

func TestSkippedPathsAreNamed(t *testing.T) {
	ws := t.TempDir()
	write(t, ws, "grows.txt", "small\n")
	write(t, ws, "lib/tracked.txt", "tracked\n")
	write(t, ws, "ok.txt", "fine\n")
	opt := Options{MaxFileSize: 64}
	r := open(t, ws, opt)
	if _, err := r.Snapshot(ctx, "s", 1); err != nil {
		t.Fatal(err)
	}

	write(t, ws, "grows.txt", strings.Repeat("g", 65))
	write(t, ws, "new-big.txt", strings.Repeat("n", 100))
	write(t, ws, "exactly-cap.txt", strings.Repeat("e", 64))
	// A repository made where files were already captured (as `git init` in a subdirectory or a
	// clone into it would), and another made afresh.
	sh(t, ws, `cd lib && git init -q && echo more >> tracked.txt`)
	sh(t, ws, `mkdir fresh && cd fresh && git init -q && echo x > x`)
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, ws, "odd/.GIT/config", "a directory git will not store\n")

	cp, err := r.Snapshot(ctx, "s", 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"fresh/ (nested repository)", "grows.txt (oversize)", "lib/ (nested repository)", "new-big.txt (oversize)", "odd/.GIT/config (name git cannot store)"}
	if got := paths(cp.Skipped); !slices.Equal(got, want) {
		t.Fatalf("skipped %v, want %v", got, want)
	}
	if s, _ := skipOf(cp.Skipped, "grows.txt"); s.Size != 65 {
		t.Errorf("size of grows.txt %d", s.Size)
	}
	list := listing(t, r, cp.Commit)
	for _, absent := range []string{"grows.txt", "lib/", "fresh", "pipe", "new-big.txt", "odd"} {
		if strings.Contains(list, "\t"+absent) {
			t.Errorf("snapshot holds %s:\n%s", absent, list)
		}
	}
	if !strings.Contains(list, "\texactly-cap.txt") || !strings.Contains(list, "\tok.txt") {
		t.Errorf("snapshot lacks files within the cap:\n%s", list)
	}
	// The next snapshot names them again: every checkpoint says what it left out.
	cp3, err := r.Snapshot(ctx, "s", 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(cp3.Skipped); cp3.Changed || !slices.Equal(got, want) {
		t.Fatalf("again: changed %v, skipped %v", cp3.Changed, got)
	}
	sameTree(t, r, cp.Commit, opt)
}

func TestUnreadableFileIsSkipped(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file")
	}
	ws := t.TempDir()
	write(t, ws, "secret", "s\n")
	if err := os.Chmod(filepath.Join(ws, "secret"), 0); err != nil {
		t.Fatal(err)
	}
	cp, err := open(t, ws, Options{}).Snapshot(ctx, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(cp.Skipped); !slices.Equal(got, []string{"secret (unreadable)"}) {
		t.Fatalf("skipped %v", got)
	}
}

// A file captured before a rule ignored it leaves the snapshots, as it would never have entered
// a fresh one; unignoring it brings it back.
func TestIgnoredLaterLeavesTheSnapshot(t *testing.T) {
	ws := t.TempDir()
	sh(t, ws, "git init -q .")
	write(t, ws, "node_modules/pkg/index.js", "module\n")
	write(t, ws, "src/main.go", "package main\n")
	r := open(t, ws, Options{})
	cp1, err := r.Snapshot(ctx, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(listing(t, r, cp1.Commit), "node_modules/pkg/index.js") {
		t.Fatal("not captured before it was ignored")
	}
	write(t, ws, ".gitignore", "node_modules/\n")
	cp2, err := r.Snapshot(ctx, "s", 2)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(listing(t, r, cp2.Commit), "node_modules") {
		t.Fatal("an ignored directory stays in the snapshot")
	}
	// The workspace repository's info/exclude counts too, read afresh when it changes.
	write(t, ws, ".git/info/exclude", "src/\n")
	cp3, err := r.Snapshot(ctx, "s", 3)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(listing(t, r, cp3.Commit), "src/") {
		t.Fatal("a path excluded by info/exclude stays in the snapshot")
	}
	if err := os.Remove(filepath.Join(ws, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	cp4, err := r.Snapshot(ctx, "s", 4)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(listing(t, r, cp4.Commit), "node_modules/pkg/index.js") {
		t.Fatal("unignored files are not captured again")
	}
	sameTree(t, r, cp4.Commit, Options{})
}

// A workspace's .gitattributes, its repository's config, and the environment rein runs in cannot
// make git run a program or change a file's bytes on the way in or out.
func TestHostileAttributesConfigAndEnvironment(t *testing.T) {
	ws := t.TempDir()
	pwned := filepath.Join(t.TempDir(), "pwned")
	sh(t, ws, "git init -q .")
	evil := "touch " + pwned + "; cat"
	sh(t, ws, `git config filter.evil.clean '`+evil+`' && git config filter.evil.smudge '`+evil+`' && git config filter.evil.required true && git config core.fsmonitor '`+evil+`' && git config core.hooksPath hooks`)
	write(t, ws, ".gitattributes", "* filter=evil ident text eol=crlf\n*.u16 working-tree-encoding=UTF-16\n[attr]sneaky filter=evil\n*.m sneaky\n")
	write(t, ws, "crlf.txt", "one\r\ntwo\n$Id$\n")
	write(t, ws, "x.u16", "plain ascii, not utf-16\n")
	write(t, ws, "y.m", "macro\n")
	write(t, ws, "hooks/post-index-change", "#!/bin/sh\ntouch "+pwned+"\n")
	sh(t, ws, "chmod +x hooks/post-index-change")

	// The environment of a user with their own git setup, and one that points git elsewhere.
	home := t.TempDir()
	write(t, home, ".gitconfig", "[filter \"evil\"]\n\tclean = "+evil+"\n\tsmudge = "+evil+"\n[core]\n\tfsmonitor = "+evil+"\n\thooksPath = "+filepath.Join(ws, "hooks")+"\n")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_DIR", filepath.Join(ws, ".git"))
	t.Setenv("GIT_INDEX_FILE", filepath.Join(ws, ".git", "index"))
	t.Setenv("GIT_CONFIG_PARAMETERS", "'filter.evil.clean'='"+evil+"'")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
	t.Setenv("GIT_CONFIG_VALUE_0", evil)

	r := open(t, ws, Options{})
	cp, err := r.Snapshot(ctx, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	for p, body := range map[string]string{"crlf.txt": "one\r\ntwo\n$Id$\n", "x.u16": "plain ascii, not utf-16\n", "y.m": "macro\n"} {
		if got := gitOut(t, r, "cat-file", "blob", cp.Commit+":"+p); got != body {
			t.Errorf("blob of %s is %q, want the file's bytes %q", p, got, body)
		}
	}
	write(t, ws, "crlf.txt", "changed\n")
	if err := os.Remove(filepath.Join(ws, "y.m")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Restore(ctx, "s", cp.Commit); err != nil {
		t.Fatal(err)
	}
	if got := read(t, ws, "crlf.txt"); got != "one\r\ntwo\n$Id$\n" {
		t.Errorf("restored crlf.txt is %q", got)
	}
	if got := read(t, ws, "y.m"); got != "macro\n" {
		t.Errorf("restored y.m is %q", got)
	}
	if err := r.Materialise(ctx, cp.Commit, filepath.Join(t.TempDir(), "m")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("a filter, hook or fsmonitor from the workspace or the environment ran")
	}
	if entries, _ := os.ReadDir(filepath.Join(ws, ".git", "refs", "rein")); len(entries) > 0 {
		t.Fatal("refs were written into the workspace's repository")
	}
}

func TestRefusals(t *testing.T) {
	home := t.TempDir()
	if _, err := Open(t.TempDir(), home, Options{Home: home}); !errors.Is(err, ErrBroadWorkspace) || !strings.Contains(err.Error(), "home directory") {
		t.Errorf("home as a workspace: %v", err)
	}
	if _, err := Open(t.TempDir(), "/", Options{}); !errors.Is(err, ErrBroadWorkspace) || !strings.Contains(err.Error(), "root directory") {
		t.Errorf("/ as a workspace: %v", err)
	}
	if _, err := Open(t.TempDir(), home, Options{Home: home, AllowBroad: true}); err != nil {
		t.Errorf("home allowed explicitly: %v", err)
	}
	link := filepath.Join(t.TempDir(), "home-link")
	if err := os.Symlink(home, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(t.TempDir(), link, Options{Home: home}); !errors.Is(err, ErrBroadWorkspace) {
		t.Errorf("home through a link: %v", err)
	}

	ws := t.TempDir()
	r := open(t, ws, Options{})
	for _, id := range []string{"", "../x", "a/b", "-x", ".x", "a..b", "x.lock", "a b"} {
		if _, err := r.Snapshot(ctx, id, 1); !errors.Is(err, ErrBadSession) {
			t.Errorf("session %q: %v", id, err)
		}
	}
	for _, c := range []string{"HEAD", "--all", "refs/heads/x", "0123456789abcdef0123456789abcdef01234567"} {
		if _, err := r.Restore(ctx, "s", c); !errors.Is(err, ErrNotFound) {
			t.Errorf("restore to %q: %v", c, err)
		}
	}

	// A shadow repository names its workspace; another workspace never uses it.
	if err := os.WriteFile(filepath.Join(r.Dir(), "rein", "workspace"), []byte("/elsewhere\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Dir(filepath.Dir(r.Dir())), ws, Options{}); !errors.Is(err, ErrForeign) {
		t.Errorf("a repository naming another workspace: %v", err)
	}
}

// rein's state directory inside the workspace is never captured: a snapshot would copy the
// shadow repository into itself, and a restore rewind the sessions' records.
func TestStateDirectoryInsideTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	write(t, ws, "a.txt", "a\n")
	state := filepath.Join(ws, ".rein-state")
	r, err := Open(state, ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := r.Snapshot(ctx, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	write(t, ws, ".rein-state/sessions/x/record.jsonl", "{}\n")
	cp2, err := r.Snapshot(ctx, "s", 2)
	if err != nil {
		t.Fatal(err)
	}
	if list := listing(t, r, cp2.Commit); strings.Contains(list, ".rein-state") || cp2.Changed {
		t.Fatalf("the state directory was captured:\n%s", list)
	}
	if _, err := r.Restore(ctx, "s", cp.Commit); err != nil {
		t.Fatal(err)
	}
	if got := read(t, ws, ".rein-state/sessions/x/record.jsonl"); got != "{}\n" {
		t.Fatal("the restore touched the state directory")
	}
}

// A new session's first snapshot starts from another session's index; what it commits is still
// exactly the workspace.
func TestNewSessionStartsFromAnotherIndex(t *testing.T) {
	ws := t.TempDir()
	for i := range 50 {
		write(t, ws, filepath.Join("d", string(rune('a'+i%26)), "f"+string(rune('a'+i/26))), "x\n")
	}
	r := open(t, ws, Options{})
	if _, err := r.Snapshot(ctx, "first", 1); err != nil {
		t.Fatal(err)
	}
	write(t, ws, "d/a/fa", "changed after the first session's snapshot\n")
	if err := os.RemoveAll(filepath.Join(ws, "d", "b")); err != nil {
		t.Fatal(err)
	}
	write(t, ws, "new.txt", "new\n")
	cp, err := r.Snapshot(ctx, "second", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r.Dir(), "rein", "sessions", "second", "index")); err != nil {
		t.Fatal(err)
	}
	sameTree(t, r, cp.Commit, Options{})
}

// A file rewritten with the same size and its old modification time put back (as cp -p, rsync -t
// or an archive extraction do) is still seen: its ctime moved.
func TestSameSizeChangeWithOldMtimeIsSeen(t *testing.T) {
	ws := t.TempDir()
	write(t, ws, "f.txt", "version one\n")
	r := open(t, ws, Options{})
	cp1, err := r.Snapshot(ctx, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(ws, "f.txt"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, ws, "f.txt", "version two\n")
	if err := os.Chtimes(filepath.Join(ws, "f.txt"), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	cp2, err := r.Snapshot(ctx, "s", 2)
	if err != nil {
		t.Fatal(err)
	}
	if !cp2.Changed || cp2.Tree == cp1.Tree {
		t.Fatal("a same-size change with the old mtime was missed")
	}
}

// Every index a snapshot or a restore leaves is dated a second before it began, so that a file
// changed within the clock tick git read it in is compared by content next time (racy git).
func TestIndexIsBackdated(t *testing.T) {
	ws := t.TempDir()
	write(t, ws, "f.txt", "one\n")
	r := open(t, ws, Options{})
	idx := filepath.Join(r.Dir(), "rein", "sessions", "s", "index")
	check := func(what string, start time.Time) {
		t.Helper()
		fi, err := os.Stat(idx)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().Before(start.Add(-900 * time.Millisecond)) {
			t.Fatalf("after %s the index is dated %v, the operation began %v", what, fi.ModTime(), start)
		}
	}
	start := time.Now()
	cp, err := r.Snapshot(ctx, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	check("a snapshot", start)
	write(t, ws, "f.txt", "two\n")
	start = time.Now()
	if _, err := r.Restore(ctx, "s", cp.Commit); err != nil {
		t.Fatal(err)
	}
	check("a restore", start)
	// And a new session's copy of another's index keeps the original's date.
	if err := os.Chtimes(idx, start.Add(-time.Hour), start.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	s2, _ := r.session("s2")
	if err := os.MkdirAll(s2.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := r.seedIndex(s2); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(s2.index()); err != nil || !fi.ModTime().Equal(start.Add(-time.Hour)) {
		t.Fatalf("seeded index dated %v (%v), want the original's %v", fi.ModTime(), err, start.Add(-time.Hour))
	}
}

func TestUnreadableDirectoriesAreNamed(t *testing.T) {
	got := unreadableDirs("warning: could not open directory 'locked/': Permission denied\nwarning: could not open directory 'a/it's/': Permission denied\nother noise\n")
	if want := []string{"locked/", "a/it's/"}; !slices.Equal(got, want) {
		t.Fatalf("parsed %q, want %q", got, want)
	}
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	ws := t.TempDir()
	write(t, ws, "locked/f", "f\n")
	write(t, ws, "ok", "ok\n")
	if err := os.Chmod(filepath.Join(ws, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(ws, "locked"), 0o755) })
	cp, err := open(t, ws, Options{}).Snapshot(ctx, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(cp.Skipped); !slices.Equal(got, []string{"locked/ (unreadable)"}) {
		t.Fatalf("skipped %v", got)
	}
}

// The shadow repository holds copies of the workspace's files: only its owner may read it.
func TestShadowRepositoryIsPrivate(t *testing.T) {
	r := open(t, t.TempDir(), Options{})
	for _, d := range []string{filepath.Dir(r.Dir()), r.Dir()} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v", d, fi.Mode().Perm())
		}
	}
}
