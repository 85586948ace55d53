package checkpoint

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// workspace builds a user's project: a git repository with a commit, work in progress, ignored
// files (by .gitignore and by info/exclude), an oversize file and a nested repository.
func workspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	sh(t, ws, `git init -q . && git config core.autocrlf false`)
	write(t, ws, ".gitignore", "*.log\nbuild/\n")
	write(t, ws, "a.txt", "alpha\n")
	write(t, ws, "dir/b.txt", "bravo\n")
	write(t, ws, "dir/deep/c.txt", "charlie\n")
	write(t, ws, "to-delete.txt", "doomed\n")
	write(t, ws, "to-rename.txt", "moving\n")
	write(t, ws, "mode.txt", "plain\n")
	write(t, ws, "file-then-dir", "a file for now\n")
	write(t, ws, "dir-then-file/x", "in a directory for now\n")
	if err := os.WriteFile(filepath.Join(ws, "bin.dat"), []byte{0, 1, 2, 0xff, 0xfe, 0, '\r', '\n', 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, ws, "run.sh", "#!/bin/sh\necho hi\n")
	sh(t, ws, `chmod +x run.sh && ln -s a.txt link && ln -s dir dirlink`)
	sh(t, ws, `git add -A && git commit -qm initial && echo 'wip' >> a.txt && echo secret.txt >> .git/info/exclude`)
	write(t, ws, "ignored.log", "log line\n")
	write(t, ws, "build/out.o", "object\n")
	write(t, ws, "secret.txt", "excluded by info/exclude\n")
	write(t, ws, "big.bin", strings.Repeat("B", 5000))
	sh(t, ws, `mkdir nested && cd nested && git init -q && echo inner > inner.txt && git add inner.txt && git commit -qm inner`)
	return ws
}

// edit changes the workspace in every way the done-when names, half by bash (the agent's shell)
// and half by plain file writes (the file tools).
func edit(t *testing.T, ws string) {
	t.Helper()
	sh(t, ws, `
		echo edited >> a.txt
		rm to-delete.txt
		mv to-rename.txt renamed.txt
		chmod +x mode.txt
		ln -sfn dir/b.txt link
		mkdir -p made/by/bash && echo new > made/by/bash/n.txt
		printf '\x00\x07binary\xff' > bin.dat
		rm file-then-dir && mkdir file-then-dir && echo now a dir > file-then-dir/inner
		rm -r dir-then-file && echo now a file > dir-then-file
		chmod -x run.sh
	`)
	write(t, ws, "dir/b.txt", "bravo, rewritten by a file tool\n")
	write(t, ws, "made/by/go/g.txt", "written by a file tool\n")
	if err := os.Remove(filepath.Join(ws, "dir/deep/c.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(ws, "dir/b.txt"), filepath.Join(ws, "dir/b-renamed.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(ws, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "dirlink"), []byte("a link became a file"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "gen.bin"), bytes.Repeat([]byte{0, 0xde, 0xad}, 300), 0o644); err != nil {
		t.Fatal(err)
	}
	// Files the snapshots do not cover change too; a restore must leave them as they are now.
	write(t, ws, "ignored.log", "log line\nanother, after the checkpoint\n")
	write(t, ws, "build/later.o", "built after the checkpoint\n")
	write(t, ws, "big.bin", strings.Repeat("C", 6000))
	write(t, ws, "nested/inner.txt", "inner, edited\n")
}

func TestRestoreEveryKindOfChange(t *testing.T) {
	ws := workspace(t)
	opt := Options{MaxFileSize: 4096}
	r := open(t, ws, opt)

	cp1, err := r.Snapshot(ctx, "s1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !cp1.Changed {
		t.Fatal("the first snapshot made no commit")
	}
	want := []string{"big.bin (oversize)", "nested/ (nested repository)"}
	if got := paths(cp1.Skipped); !slices.Equal(got, want) {
		t.Fatalf("skipped %v, want %v", got, want)
	}
	list := listing(t, r, cp1.Commit)
	for _, line := range []string{"120000 blob", "\tlink", "100755 blob", "\trun.sh", "\tbin.dat", "\t.gitignore", "\tdir/deep/c.txt"} {
		if !strings.Contains(list, line) {
			t.Errorf("checkpoint lacks %q:\n%s", line, list)
		}
	}
	for _, absent := range []string{"ignored.log", "build/", "secret.txt", "big.bin", "nested", ".git/"} {
		if strings.Contains(list, "\t"+absent) {
			t.Errorf("checkpoint holds %s:\n%s", absent, list)
		}
	}
	if got := gitOut(t, r, "cat-file", "blob", cp1.Commit+":bin.dat"); got != "\x00\x01\x02\xff\xfe\x00\r\n\x00" {
		t.Errorf("binary blob %q", got)
	}
	sameTree(t, r, cp1.Commit, opt)
	atCP1 := userState(t, ws)

	edit(t, ws)
	cp2, err := r.Snapshot(ctx, "s1", 5)
	if err != nil {
		t.Fatal(err)
	}
	if !cp2.Changed {
		t.Fatal("a snapshot after edits made no commit")
	}
	sameTree(t, r, cp2.Commit, opt)
	changes, err := r.Diff(ctx, cp1.Commit, cp2.Commit)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, string(c.Status)+" "+c.Path)
	}
	wantChanges := []string{"M a.txt", "M bin.dat", "D dir-then-file/x", "A dir-then-file", "D dir/b.txt", "A dir/b-renamed.txt",
		"D dir/deep/c.txt", "T dirlink", "D file-then-dir", "A file-then-dir/inner", "A gen.bin", "M link",
		"A made/by/bash/n.txt", "A made/by/go/g.txt", "M mode.txt", "A renamed.txt", "M run.sh", "D to-delete.txt", "D to-rename.txt"}
	slices.Sort(got)
	slices.Sort(wantChanges)
	if !slices.Equal(got, wantChanges) {
		t.Fatalf("changes:\n%s", lineDiff(strings.Join(wantChanges, "\n"), strings.Join(got, "\n")))
	}

	before := userState(t, ws)
	if before.refs != atCP1.refs || before.indexStat != atCP1.indexStat || before.files != atCP1.files {
		t.Errorf("the user's repository changed:\nbefore %+v\nafter  %+v", atCP1, before)
	}
	untouched := map[string]string{}
	for _, p := range []string{"ignored.log", "build/later.o", "build/out.o", "secret.txt", "big.bin", "nested/inner.txt"} {
		untouched[p] = read(t, ws, p)
	}

	res, err := r.Restore(ctx, "s1", cp1.Commit)
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, r, cp1.Commit, opt)
	for p, body := range untouched {
		if got := read(t, ws, p); got != body {
			t.Errorf("restore changed %s: %q, was %q", p, got, body)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "made")); !os.IsNotExist(err) {
		t.Errorf("directories left empty by the restore remain: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(ws, "link")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link is not a link: %v %v", fi, err)
	} else if dest, _ := os.Readlink(filepath.Join(ws, "link")); dest != "a.txt" {
		t.Errorf("link points at %q", dest)
	}
	if fi, _ := os.Stat(filepath.Join(ws, "mode.txt")); fi.Mode()&0o111 != 0 {
		t.Errorf("mode.txt still executable: %v", fi.Mode())
	}
	// The user's repository is as it was, and says of the files what it said at the checkpoint
	// (but for the ignored file made since, which the restore left alone).
	after := userState(t, ws)
	after.status = strings.Replace(after.status, "! build/later.o\n", "", 1)
	if after != atCP1 {
		t.Errorf("the user's repository changed:\nbefore %+v\nafter  %+v", atCP1, after)
	}
	for _, want := range []string{"big.bin (oversize)", "nested/ (nested repository)", "ignored.log (ignored)", "build/ (ignored)", "secret.txt (ignored)"} {
		if !slices.Contains(paths(res.NotCovered), want) {
			t.Errorf("not covered %v lacks %s", paths(res.NotCovered), want)
		}
	}
	if res.Safety != cp2.Commit {
		t.Errorf("safety %s, want the unchanged head %s", res.Safety, cp2.Commit)
	}
	wantRemoved := []string{"dir-then-file", "dir/b-renamed.txt", "file-then-dir/inner", "gen.bin", "made/by/bash/n.txt", "made/by/go/g.txt", "renamed.txt"}
	if !slices.Equal(res.Removed, wantRemoved) {
		t.Errorf("removed %v, want %v", res.Removed, wantRemoved)
	}
	if !slices.Contains(res.Changed, "to-delete.txt") || !slices.Contains(res.Changed, "a.txt") || slices.Contains(res.Changed, "ignored.log") {
		t.Errorf("changed %v", res.Changed)
	}
	if _, ok, _ := r.Pending("s1"); ok {
		t.Error("a finished restore is still owed")
	}

	// The restore can be undone: restoring the safety checkpoint gives back the edits.
	if _, err := r.Restore(ctx, "s1", res.Safety); err != nil {
		t.Fatal(err)
	}
	sameTree(t, r, cp2.Commit, opt)
	if after := userState(t, ws); after != before {
		t.Errorf("the user's repository changed after the undo:\nbefore %+v\nafter  %+v", before, after)
	}
}

// A path the target holds where the workspace now has something the snapshots do not cover is
// left alone and reported.
func TestRestoreLeavesUncoveredPathsInTheWay(t *testing.T) {
	ws := t.TempDir()
	opt := Options{MaxFileSize: 100}
	write(t, ws, "keep.txt", "v1\n")
	write(t, ws, "will-be-ignored.txt", "tracked once\n")
	write(t, ws, "will-be-big.txt", "small once\n")
	write(t, ws, "d/file.txt", "a file in d\n")
	r := open(t, ws, opt)
	cp1, err := r.Snapshot(ctx, "s", 1)
	if err != nil {
		t.Fatal(err)
	}

	write(t, ws, ".gitignore", "will-be-ignored.txt\nd/\n")
	write(t, ws, "will-be-ignored.txt", "now ignored, and precious\n")
	write(t, ws, "will-be-big.txt", strings.Repeat("x", 500))
	write(t, ws, "d/file.txt", "ignored now, precious\n")
	write(t, ws, "keep.txt", "v2\n")
	cp2, err := r.Snapshot(ctx, "s", 2)
	if err != nil {
		t.Fatal(err)
	}
	list := listing(t, r, cp2.Commit)
	if strings.Contains(list, "will-be-ignored.txt") || strings.Contains(list, "d/file.txt") || strings.Contains(list, "will-be-big.txt") {
		t.Fatalf("files ignored or grown since stay in the snapshot:\n%s", list)
	}

	res, err := r.Restore(ctx, "s", cp1.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, ws, "keep.txt"); got != "v1\n" {
		t.Errorf("keep.txt %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws, ".gitignore")); !os.IsNotExist(err) {
		t.Errorf(".gitignore, created since, is still there")
	}
	for p, body := range map[string]string{"will-be-ignored.txt": "now ignored, and precious\n", "d/file.txt": "ignored now, precious\n", "will-be-big.txt": strings.Repeat("x", 500)} {
		if got := read(t, ws, p); got != body {
			t.Errorf("restore overwrote %s: %q", p, got)
		}
		if _, ok := skipOf(res.NotCovered, p); !ok {
			t.Errorf("%s not reported: %v", p, paths(res.NotCovered))
		}
	}
	if s, _ := skipOf(res.NotCovered, "will-be-big.txt"); s.Reason != Oversize {
		t.Errorf("will-be-big.txt reported as %q", s.Reason)
	}
}

func TestSnapshotOutsideAGitRepository(t *testing.T) {
	ws := t.TempDir()
	write(t, ws, "x.txt", "x\n")
	write(t, ws, "sub/.gitignore", "*.tmp\n")
	write(t, ws, "sub/y.tmp", "ignored by a nested .gitignore\n")
	r := open(t, ws, Options{})
	cp, err := r.Snapshot(ctx, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := listing(t, r, cp.Commit); !strings.Contains(got, "\tx.txt") || strings.Contains(got, "y.tmp") {
		t.Fatalf("listing:\n%s", got)
	}
	write(t, ws, "x.txt", "changed\n")
	res, err := r.Restore(ctx, "s", cp.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, ws, "x.txt"); got != "x\n" {
		t.Fatalf("x.txt %q", got)
	}
	if _, ok := skipOf(res.NotCovered, "sub/y.tmp"); !ok {
		t.Errorf("ignored file not reported: %v", paths(res.NotCovered))
	}
}

func TestMaterialise(t *testing.T) {
	ws := workspace(t)
	r := open(t, ws, Options{MaxFileSize: 4096})
	cp, err := r.Snapshot(ctx, "s", 3)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "fork")
	if err := r.Materialise(ctx, cp.Commit, dir); err != nil {
		t.Fatal(err)
	}
	if tree, _ := fresh(t, dir, Options{MaxFileSize: 4096}); tree != cp.Tree {
		t.Fatalf("materialised tree %s, want %s", tree, cp.Tree)
	}
	if err := r.Materialise(ctx, cp.Commit, dir); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("materialising into a full directory: %v", err)
	}
}

// A workspace that is a linked worktree of a repository (its .git a file naming the git
// directory) reads the info/exclude of the repository's common directory, as git does.
func TestWorktreeWorkspace(t *testing.T) {
	main := t.TempDir()
	sh(t, main, "git init -q . && echo x > x && git add x && git commit -qm x && echo '*.secret' >> .git/info/exclude")
	ws := filepath.Join(t.TempDir(), "wt")
	sh(t, main, "git worktree add -q "+ws)
	write(t, ws, "keys.secret", "excluded through the common directory\n")
	write(t, ws, "y", "y\n")
	before := userState(t, main)
	r := open(t, ws, Options{})
	cp, err := r.Snapshot(ctx, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := listing(t, r, cp.Commit); strings.Contains(got, "keys.secret") || !strings.Contains(got, "\ty") || strings.Contains(got, ".git") {
		t.Fatalf("listing:\n%s", got)
	}
	write(t, ws, "y", "changed\n")
	if _, err := r.Restore(ctx, "s", cp.Commit); err != nil {
		t.Fatal(err)
	}
	if after := userState(t, main); after != before {
		t.Fatalf("the main repository changed:\n%+v\n%+v", before, after)
	}
}

// A restore lists a bounded number of ignored entries and counts the rest.
func TestIgnoredEntriesAreBounded(t *testing.T) {
	ws := t.TempDir()
	write(t, ws, ".gitignore", "*.o\n")
	for i := range MaxIgnoredListed + 20 {
		write(t, ws, filepath.Join("d"+strconv.Itoa(i), "x.o"), "o")
		write(t, ws, filepath.Join("d"+strconv.Itoa(i), "x.c"), "c")
	}
	r := open(t, ws, Options{})
	cp, err := r.Snapshot(ctx, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Restore(ctx, "s", cp.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotCovered) != MaxIgnoredListed || res.MoreIgnored != 20 {
		t.Fatalf("%d listed, %d more", len(res.NotCovered), res.MoreIgnored)
	}
}

// A restore never writes into a directory it cannot read: the paths under it are left out.
func TestRestoreLeavesUnreadableDirectories(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	ws := t.TempDir()
	write(t, ws, "locked/f", "f\n")
	r := open(t, ws, Options{})
	cp, err := r.Snapshot(ctx, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(ws, "locked/f")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(ws, "locked"), 0o300); err != nil { // writable, not readable
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(ws, "locked"), 0o755) })
	res, err := r.Restore(ctx, "s", cp.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := skipOf(res.NotCovered, "locked/"); !ok || s.Reason != Unreadable {
		t.Fatalf("not covered %v", paths(res.NotCovered))
	}
	if _, err := os.Lstat(filepath.Join(ws, "locked/f")); !os.IsNotExist(err) {
		t.Fatalf("the restore wrote into a directory it cannot read: %v", err)
	}
}
