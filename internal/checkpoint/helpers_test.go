package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var ctx = context.Background()

// open opens a repository with a fresh state directory.
func open(t testing.TB, ws string, opt Options) *Repo {
	t.Helper()
	r, err := Open(t.TempDir(), ws, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// write writes a file, making its directories.
func write(t testing.TB, root, rel, body string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sh runs a bash script in dir, as the agent's bash tool would.
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

// gitOut runs git against the shadow repository.
func gitOut(t testing.TB, r *Repo, args ...string) string {
	t.Helper()
	out, err := r.git(ctx, run{args: args})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// listing is `git ls-tree -r` of a commit: mode, blob and path of every entry, the same lines
// `git ls-files -s` gives for an index holding it (less the stage number).
func listing(t testing.TB, r *Repo, commit string) string {
	t.Helper()
	return gitOut(t, r, "ls-tree", "-r", "--full-tree", commit)
}

// fresh snapshots the workspace from nothing — a new state directory, a new shadow repository, a
// new session — and returns its tree and listing: what the workspace holds, judged independently
// of every index the repository under test keeps.
func fresh(t testing.TB, ws string, opt Options) (tree, list string) {
	t.Helper()
	r := open(t, ws, opt)
	cp, err := r.Snapshot(ctx, "fresh", 1)
	if err != nil {
		t.Fatal(err)
	}
	return cp.Tree, listing(t, r, cp.Commit)
}

// sameTree fails unless the workspace, snapshotted afresh, holds exactly the commit's tree.
func sameTree(t testing.TB, r *Repo, commit string, opt Options) {
	t.Helper()
	want := listing(t, r, commit)
	tree, got := fresh(t, r.Workspace(), opt)
	if got != want {
		t.Fatalf("workspace differs from %s:\n%s", commit, lineDiff(want, got))
	}
	if wantTree := strings.TrimSpace(gitOut(t, r, "rev-parse", commit+"^{tree}")); tree != wantTree {
		t.Fatalf("tree %s, want %s", tree, wantTree)
	}
}

// lineDiff shows the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

// userRepo is what must not change in the workspace's own repository.
type userRepo struct {
	status, refs, indexStat, files string
}

// userState reads the workspace repository without writing to it (no optional locks, so git
// status does not refresh its index) and hashes every file under .git with its mode and time.
func userState(t testing.TB, ws string) userRepo {
	t.Helper()
	var u userRepo
	u.status = sh(t, ws, "git --no-optional-locks status --porcelain=v2 --branch --untracked-files=all --ignored")
	u.refs = sh(t, ws, "git for-each-ref --format='%(refname) %(objectname)'")
	fi, err := os.Stat(filepath.Join(ws, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	u.indexStat = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
	h := sha256.New()
	err = filepath.WalkDir(filepath.Join(ws, ".git"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintln(h, p, fi.Mode(), fi.ModTime().UnixNano(), fi.Size())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	u.files = hex.EncodeToString(h.Sum(nil))
	return u
}

func skipOf(skips []Skip, p string) (Skip, bool) {
	for _, s := range skips {
		if s.Path == p {
			return s, true
		}
	}
	return Skip{}, false
}

func paths(skips []Skip) []string {
	out := make([]string, len(skips))
	for i, s := range skips {
		out[i] = s.Path + " (" + string(s.Reason) + ")"
	}
	return out
}
