package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/checkpoint"
	"github.com/reinhq/rein/internal/record"
)

// sh runs a bash script in dir with git configured for a test (no global or system config).
func sh(t testing.TB, dir, script string) string {
	t.Helper()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash %q: %v\n%s", script, err, out)
	}
	return string(out)
}

// treeDigest is every file under dir (a .git directory's included) with its mode and bytes, or
// its link's target, hashed: two equal digests are two byte-identical trees.
func treeDigest(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		case fi.IsDir():
			out[rel] = "dir " + fi.Mode().String()
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			out[rel] = fi.Mode().String() + " " + hex.EncodeToString(sum[:])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffDigests(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if b[k] != v {
			d = append(d, fmt.Sprintf("%s: %q -> %q", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			d = append(d, fmt.Sprintf("%s: new %q", k, v))
		}
	}
	return d
}

// freshTree is the tree a snapshot of ws in a new shadow repository takes: what `git ls-files -s`
// of a fresh snapshot lists, as one hash.
func freshTree(t testing.TB, ws string) string {
	t.Helper()
	repo, err := checkpoint.Open(t.TempDir(), ws, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := repo.Snapshot(context.Background(), "fresh", 1)
	if err != nil {
		t.Fatal(err)
	}
	return cp.Tree
}

// checkpointAt is the tree of a session's checkpoint at a turn, from the state root's shadow
// repository.
func checkpointAt(t testing.TB, sb *sandbox, id string, turn int64) checkpoint.Entry {
	t.Helper()
	repo, err := checkpoint.Open(sb.home, sb.ws, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := repo.At(context.Background(), id, turn)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func sessionID(t testing.TB, sb *sandbox) (id, path string) {
	t.Helper()
	paths := sb.records(t)
	if len(paths) != 1 {
		t.Fatalf("want one record, found %v", paths)
	}
	return filepath.Base(filepath.Dir(paths[0])), paths[0]
}

func recordsOf(t testing.TB, path string) []record.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []record.Record
	for i, line := range lines(b) {
		r, err := record.Decode(append(line, '\n'), int64(i+1))
		if err != nil {
			t.Fatalf("record line %d: %v", i+1, err)
		}
		out = append(out, r)
	}
	return out
}

// TestRewindFiles: a real session against the simulator edits, creates, deletes, renames, changes
// modes, links and binaries with bash and with the file tools, and touches ignored, oversize and
// nested-repository files; rein rewind --files then puts the tree back exactly as the checkpoint
// holds it (a fresh snapshot's tree equals the checkpoint's), leaves the ignored, oversize and
// nested files as they are and says so, and never touches the workspace's own .git.
func TestRewindFiles(t *testing.T) {
	sb := newSandbox(t)
	sh(t, sb.ws, `
git init -q .
printf 'x.log\n' > .gitignore
echo edit me > edit.txt
echo delete me > del.txt
echo rename me > ren-from.txt
echo 'echo hi' > mode.sh
ln -s edit.txt link
head -c 3000 /dev/urandom > bin.dat
echo before > x.log
head -c $((11 * 1024 * 1024)) /dev/zero > big.bin
mkdir -p vendor/lib && git -C vendor/lib init -q && echo nested > vendor/lib/n.txt
git add .gitignore edit.txt del.txt ren-from.txt mode.sh link bin.dat && git commit -qm first
`)
	status := func() string { return sh(t, sb.ws, "git status --porcelain=v1 --ignored -uall; git for-each-ref") }
	statusBefore := status()
	gitBefore := treeDigest(t, filepath.Join(sb.ws, ".git"))
	idx, _ := os.Stat(filepath.Join(sb.ws, ".git", "index"))
	treeBefore := freshTree(t, sb.ws)

	script := writeScript(t, t.TempDir(),
		map[string]any{"text": "Changing files with bash.", "tool_calls": []any{bash(`
echo edited >> edit.txt; rm del.txt; mv ren-from.txt ren-to.txt; chmod +x mode.sh
ln -sfn ren-to.txt link; head -c 3000 /dev/urandom > bin.dat; echo new > new.txt
mkdir -p sub/deep && echo deep > sub/deep/d.txt
echo after >> x.log; echo tail >> big.bin; echo changed >> vendor/lib/n.txt`)}},
		map[string]any{"text": "Changing files with the tools.", "tool_calls": []any{
			map[string]any{"name": "write_file", "arguments": map[string]any{"path": "created.txt", "content": "made by write_file\n"}},
			map[string]any{"name": "edit_file", "arguments": map[string]any{"path": "edit.txt", "old": "edit me", "new": "edited by edit_file"}},
		}},
		map[string]any{"text": "Done."},
	)
	res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "change the files")...)
	if res.code != 0 {
		t.Fatalf("rein run:\n%s", res)
	}
	id, path := sessionID(t, sb)
	if got := read(t, sb.ws, "edit.txt"); !strings.Contains(got, "edited by edit_file") {
		t.Fatalf("the session did not edit the files: edit.txt holds %q", got)
	}
	// The checkpoints: the prompt's (the tree as the person left it), bash's, the file tools'.
	var turns []int64
	for _, r := range recordsOf(t, path) {
		if c, ok := r.Body.(*record.Checkpoint); ok {
			if c.Error != "" {
				t.Fatalf("a snapshot failed: %s", c.Error)
			}
			turns = append(turns, c.Turn)
		}
	}
	if fmt.Sprint(turns) != "[1 2 3]" {
		t.Fatalf("checkpoints at turns %v, want [1 2 3]", turns)
	}
	target := checkpointAt(t, sb, id, 1)
	if target.Tree != treeBefore {
		t.Fatalf("the prompt's checkpoint holds tree %s, the workspace was %s", target.Tree, treeBefore)
	}
	list := sb.rein(t, "checkpoints", id)
	if list.code != 0 || !strings.Contains(list.stdout, "turn 2") || !strings.Contains(list.stdout, "D del.txt") || !strings.Contains(list.stdout, "A created.txt") {
		t.Fatalf("rein checkpoints:\n%s", list)
	}
	diff := sb.rein(t, "diff", id, "3")
	if diff.code != 0 || !strings.Contains(diff.stdout, "+made by write_file") || !strings.Contains(diff.stdout, "+edited by edit_file") {
		t.Fatalf("rein diff %s 3:\n%s", id, diff)
	}

	// Rewind to before turn 2: the files as the prompt found them.
	rw := sb.rein(t, "rewind", id, "2", "--files")
	if rw.code != 0 {
		t.Fatalf("rein rewind --files:\n%s", rw)
	}
	if got := freshTree(t, sb.ws); got != target.Tree {
		t.Errorf("after the rewind a fresh snapshot's tree is %s, the checkpoint's %s\n%s", got, target.Tree, rw)
	}
	for _, want := range []string{"x.log (ignored)", "big.bin (oversize)", "vendor/lib/ (nested repository)", "outside the workspace", "removed  new.txt", "written  del.txt"} {
		if !strings.Contains(rw.stdout, want) {
			t.Errorf("the rewind's answer does not say %q:\n%s", want, rw.stdout)
		}
	}
	if got := read(t, sb.ws, "x.log"); got != "before\nafter\n" {
		t.Errorf("the ignored x.log was touched: %q", got)
	}
	if fi, _ := os.Stat(filepath.Join(sb.ws, "big.bin")); fi.Size() != 11*1024*1024+5 {
		t.Errorf("the oversize big.bin was touched: %d bytes", fi.Size())
	}
	if got := read(t, sb.ws, "vendor/lib/n.txt"); got != "nested\nchanged\n" {
		t.Errorf("the nested repository's file was touched: %q", got)
	}
	if _, err := os.Stat(filepath.Join(sb.ws, "sub")); err == nil {
		t.Errorf("the directory the session made is still there")
	}
	// The workspace's own repository: byte for byte as it was, its index not rewritten.
	if d := diffDigests(gitBefore, treeDigest(t, filepath.Join(sb.ws, ".git"))); len(d) > 0 {
		t.Errorf("the workspace's .git changed:\n%s", strings.Join(d, "\n"))
	}
	if fi, _ := os.Stat(filepath.Join(sb.ws, ".git", "index")); !fi.ModTime().Equal(idx.ModTime()) {
		t.Errorf("the workspace's .git/index was written: %v, was %v", fi.ModTime(), idx.ModTime())
	}
	// What git says of it: the same, but for the ignored and nested files the session changed.
	if after := status(); after != statusBefore {
		t.Errorf("git status and refs changed:\nbefore\n%s\nafter\n%s", statusBefore, after)
	}
	// The record: the safety snapshot's start and the withdrawal together, then the restore.
	var kinds []string
	for _, r := range recordsOf(t, path) {
		switch r.Body.(type) {
		case *record.FilesRestoreStarted, *record.Rewound, *record.FilesRestored:
			kinds = append(kinds, string(r.Body.Kind()))
		}
	}
	if fmt.Sprint(kinds) != "[files_restore_started rewound files_restored]" {
		t.Errorf("the rewind recorded %v", kinds)
	}

	// The rewind can be undone: its safety checkpoint holds the files as the session left them.
	var safety string
	for _, r := range recordsOf(t, path) {
		if d, ok := r.Body.(*record.FilesRestored); ok {
			safety = d.Safety
		}
	}
	gitMid := treeDigest(t, filepath.Join(sb.ws, ".git")) // git status above may have refreshed its index
	undo := sb.rein(t, "checkpoints", "restore", id, safety[:12])
	if undo.code != 0 {
		t.Fatalf("rein checkpoints restore:\n%s", undo)
	}
	if got, want := freshTree(t, sb.ws), checkpointAt(t, sb, id, 3).Tree; got != want {
		t.Errorf("after undoing the rewind a fresh snapshot's tree is %s, the session left %s\n%s", got, want, undo)
	}
	if d := diffDigests(gitMid, treeDigest(t, filepath.Join(sb.ws, ".git"))); len(d) > 0 {
		t.Errorf("undoing the rewind changed the workspace's .git:\n%s", strings.Join(d, "\n"))
	}
	out := filepath.Join(t.TempDir(), "forked")
	fk := sb.rein(t, "fork", id, "--at", "3", "--files", out)
	if fk.code != 0 {
		t.Fatalf("rein fork --files:\n%s", fk)
	}
	if got := read(t, out, "created.txt"); got != "made by write_file\n" {
		t.Errorf("fork --files at turn 3 wrote created.txt as %q", got)
	}
	if _, err := os.Stat(filepath.Join(out, "del.txt")); err == nil {
		t.Errorf("fork --files at turn 3 has del.txt, which turn 2 deleted")
	}
	if fi, err := os.Lstat(filepath.Join(out, "mode.sh")); err != nil || fi.Mode()&0o100 == 0 {
		t.Errorf("fork --files at turn 3 lost mode.sh's executable bit: %v %v", fi, err)
	}
}

func read(t testing.TB, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRewindFilesKilled: a rein rewind --files killed with SIGKILL after its restore began and
// before it ended leaves the restore owed; rein resume finishes it, and records that it did.
func TestRewindFilesKilled(t *testing.T) {
	for attempt, files := range []int{4000, 12000, 30000} {
		if killedMidRestore(t, files) {
			return
		}
		t.Logf("attempt %d: the restore of %d files ended before the kill; trying a larger one", attempt+1, files)
	}
	t.Fatal("the restore always ended before the kill")
}

func killedMidRestore(t *testing.T, files int) bool {
	sb := newSandbox(t)
	sh(t, sb.ws, fmt.Sprintf(`for d in $(seq 0 39); do mkdir d$d; done; for i in $(seq 1 %d); do echo $i > d$((i %% 40))/f$i.txt; done`, files))
	script := writeScript(t, t.TempDir(),
		map[string]any{"text": "Changing every file.", "tool_calls": []any{bash(`for f in d*/f*.txt; do echo changed >> $f; done; rm d0/*; echo x > extra.txt`)}},
		map[string]any{"text": "Done."},
	)
	if res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "change them")...); res.code != 0 {
		t.Fatalf("rein run:\n%s", res)
	}
	id, path := sessionID(t, sb)
	target := checkpointAt(t, sb, id, 1)

	cmd := exec.Command(reinBin(t), "rewind", id, "2", "--files")
	cmd.Dir, cmd.Env = sb.ws, sb.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		b, _ := os.ReadFile(path)
		if bytes.Contains(b, []byte(`"kind":"files_restore_started"`)) {
			_ = cmd.Process.Signal(syscall.SIGKILL)
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the rewind never began its restore:\n%s", out.String())
		}
		time.Sleep(time.Millisecond)
	}
	_ = cmd.Wait()
	b, _ := os.ReadFile(path)
	if bytes.Contains(b, []byte(`"kind":"files_restored"`)) {
		return false // the restore ended before the kill arrived
	}
	repo, err := checkpoint.Open(sb.home, sb.ws, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, owed, err := repo.Pending(id); err != nil || !owed {
		t.Fatalf("after the kill no restore is owed (%v)", err)
	}
	res := sb.rein(t, append(append([]string{"resume"}, simArgs("")...), id)...)
	if res.code != 0 || !strings.Contains(res.stderr, "finished restoring the files") {
		t.Fatalf("rein resume:\n%s", res)
	}
	if got := freshTree(t, sb.ws); got != target.Tree {
		t.Errorf("after the resume a fresh snapshot's tree is %s, the checkpoint's %s", got, target.Tree)
	}
	if _, owed, _ := repo.Pending(id); owed {
		t.Errorf("the restore is still owed after the resume")
	}
	var done *record.FilesRestored
	for _, r := range recordsOf(t, path) {
		if d, ok := r.Body.(*record.FilesRestored); ok {
			done = d
		}
	}
	if done == nil || !done.Resumed || done.Target != target.Commit {
		t.Errorf("the resume recorded %+v", done)
	}
	if doc := sb.rein(t, "doctor", path); doc.code != 0 {
		t.Errorf("rein doctor:\n%s", doc)
	}
	return true
}

// countCheckpoints counts a record's checkpoint events.
func countCheckpoints(t testing.TB, path string) int {
	t.Helper()
	n := 0
	for _, r := range recordsOf(t, path) {
		if _, ok := r.Body.(*record.Checkpoint); ok {
			n++
		}
	}
	return n
}

// TestCheckpointsRefusedOrOff: a workspace that is the home directory takes no checkpoints (said
// once, with the way to allow them) unless --checkpoints-anywhere; --no-checkpoints and the config
// file's checkpoints = false take none.
func TestCheckpointsRefusedOrOff(t *testing.T) {
	script := func() string {
		return writeScript(t, t.TempDir(), map[string]any{"tool_calls": []any{bash("echo x > made.txt")}}, map[string]any{"text": "Done."})
	}
	cases := []struct {
		name   string
		home   bool // the workspace is $HOME
		flags  []string
		config string
		want   int
		say    string
	}{
		{name: "home", home: true, want: 0, say: "is your home directory"},
		{name: "home allowed", home: true, flags: []string{"--checkpoints-anywhere"}, want: 2},
		{name: "off", flags: []string{"--no-checkpoints"}, want: 0},
		{name: "off in the config", config: "checkpoints = false\n", want: 0},
		{name: "on", want: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sb := newSandbox(t)
			sh(t, sb.ws, "echo mine > mine.txt")
			if c.home {
				sb.env = childEnv("REIN_HOME="+sb.home, "HOME="+sb.ws)
			}
			if c.config != "" {
				dir := t.TempDir()
				if err := os.MkdirAll(filepath.Join(dir, "rein"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "rein", "config.toml"), []byte(c.config), 0o644); err != nil {
					t.Fatal(err)
				}
				sb.env = append(sb.env, "XDG_CONFIG_HOME="+dir)
			}
			res := sb.rein(t, append(append(append([]string{"run"}, simArgs(script())...), c.flags...), "go")...)
			if res.code != 0 {
				t.Fatalf("rein run:\n%s", res)
			}
			_, path := sessionID(t, sb)
			if n := countCheckpoints(t, path); n != c.want {
				t.Errorf("%d checkpoints recorded, want %d\n%s", n, c.want, res)
			}
			if c.say != "" && (!strings.Contains(res.stderr, c.say) || !strings.Contains(res.stderr, "--checkpoints-anywhere")) {
				t.Errorf("rein did not say why it took no checkpoints:\n%s", res.stderr)
			}
			if c.say == "" && strings.Contains(res.stderr, "no checkpoints") {
				t.Errorf("rein said it took no checkpoints:\n%s", res.stderr)
			}
		})
	}
}

// TestCheckpointsGC: rein checkpoints gc drops the checkpoints of a session whose record is gone
// and keeps a live one's.
func TestCheckpointsGC(t *testing.T) {
	sb := newSandbox(t)
	for i := range 2 {
		script := writeScript(t, t.TempDir(), map[string]any{"tool_calls": []any{bash(fmt.Sprintf("echo %d > made-%d.txt", i, i))}}, map[string]any{"text": "Done."})
		if res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "go")...); res.code != 0 {
			t.Fatalf("rein run:\n%s", res)
		}
	}
	paths := sb.records(t)
	if len(paths) != 2 {
		t.Fatalf("want two records, found %v", paths)
	}
	gone, kept := filepath.Base(filepath.Dir(paths[0])), filepath.Base(filepath.Dir(paths[1]))
	if err := os.RemoveAll(filepath.Dir(paths[0])); err != nil {
		t.Fatal(err)
	}
	res := sb.rein(t, "checkpoints", "gc")
	if res.code != 0 || !strings.Contains(res.stdout, "dropped the checkpoints of 1 session(s): "+gone) {
		t.Fatalf("rein checkpoints gc:\n%s", res)
	}
	repo, err := checkpoint.Open(sb.home, sb.ws, checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := repo.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids) != fmt.Sprint([]string{kept}) {
		t.Errorf("after gc the repository holds %v, want [%s]", ids, kept)
	}
	if list := sb.rein(t, "checkpoints", kept); list.code != 0 || !strings.Contains(list.stdout, "A made-1.txt") {
		t.Errorf("rein checkpoints %s after gc:\n%s", kept, list)
	}
}
