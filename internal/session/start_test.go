package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
)

// Start mints a fresh id for every session, even on a clock that stands still, and the record,
// the directory and the Session all carry it; whatever id started held is not used.
func TestStartMintsFreshIDs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "ws")
	still := time.Unix(1764400000, 0)
	opts := Options{Now: func() time.Time { return still }}
	seen := map[string]bool{}
	for range 20 {
		s, err := Start(dir, opts, *started("not-this-id"))
		must(t, err)
		id := s.ID()
		if seen[id] || id == "not-this-id" {
			t.Fatalf("Start reused or kept an id: %s", id)
		}
		seen[id] = true
		if got := s.Snapshot().Meta().Session; got != id {
			t.Errorf("session_started names %s, the session is %s", got, id)
		}
		if want := filepath.Join(dir, id, journal.FileName); s.Path() != want {
			t.Errorf("the record is at %s, want %s", s.Path(), want)
		}
		if s.ProjectDir() != dir {
			t.Errorf("ProjectDir = %s, want %s", s.ProjectDir(), dir)
		}
		must(t, s.Close())
	}
}

// A session that fails to start leaves no directory behind: neither when its directory cannot be
// made durable nor when its first records are refused.
func TestStartLeavesNothingOnFailure(t *testing.T) {
	m := fsys.NewMem()
	dir := "/state/sessions/ws"
	must(t, m.MkdirAll(dir))
	// Mem lists no directory: the ids Start minted are the names it asked about in dir.
	var minted []string
	watch := &blindFS{FS: m, hide: func(name string) bool {
		if filepath.Dir(name) == dir {
			minted = append(minted, name)
		}
		return false
	}}
	opts := Options{FS: watch, Now: clock()}
	empty := func() {
		t.Helper()
		if len(minted) == 0 {
			t.Fatal("no id was minted")
		}
		for _, name := range minted {
			if _, err := m.Stat(name); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a failed start left %s behind (%v)", name, err)
			}
		}
	}

	boom := errors.New("the disk refuses")
	m.FailSync(dir, boom)
	if _, err := Start(dir, opts, *started("")); !errors.Is(err, boom) {
		t.Fatalf("Start with a failing directory sync = %v; want %v", err, boom)
	}
	empty()

	// A tool result for a call never made: the fold refuses it, so the start fails whole.
	bad := &record.ToolResults{Results: []record.ToolResult{{CallID: "never", Content: "x", Outcome: record.OK}}}
	if _, err := Start(dir, opts, *started(""), bad); err == nil {
		t.Fatal("Start with a refused first record succeeded")
	}
	empty()

	s, err := Start(dir, opts, *started(""))
	must(t, err)
	must(t, s.Close())
}

// A directory another process made first is not Start's to remove: the start fails with
// fs.ErrExist and the directory stays.
func TestStartKeepsAnotherProcessDirectory(t *testing.T) {
	m := fsys.NewMem()
	dir := "/state/sessions/ws"
	var theirs string
	blind := &blindFS{FS: m, hide: func(name string) bool {
		// The other process makes the directory between the id's mint and the create.
		if theirs == "" && filepath.Dir(name) == dir {
			theirs = name
			must(t, m.MkdirAll(name))
			f, err := m.Create(filepath.Join(name, journal.FileName))
			must(t, err)
			must(t, f.Close())
			return true
		}
		return false
	}}
	_, err := Start(dir, Options{FS: blind, Now: clock()}, *started(""))
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Start into a directory made meanwhile = %v; want fs.ErrExist", err)
	}
	if _, err := m.Stat(filepath.Join(theirs, journal.FileName)); err != nil {
		t.Fatalf("the other process's record was removed: %v", err)
	}
}

// blindFS says a name does not exist when hide says so.
type blindFS struct {
	fsys.FS
	hide func(name string) bool
}

func (b *blindFS) Stat(name string) (fs.FileInfo, error) {
	if b.hide(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return b.FS.Stat(name)
}

// Fork makes its child beside the parent, naming it, with the parent's context inherited; it works
// from a parent made by Load, which another writer holds.
func TestForkBesideItsParent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "ws")
	p, err := Start(dir, Options{Now: clock()}, *started(""))
	must(t, err)
	defer p.Close()
	must(t, p.Append(&record.System{Text: "sys"}))
	exchange(t, p, 0)
	exchange(t, p, 1)
	ro, _, err := Load(p.Path(), Options{})
	must(t, err)
	c, err := Fork(ro, 4, Options{Now: clock()}, *started(""))
	must(t, err)
	defer c.Close()
	if c.ProjectDir() != dir || c.ID() == p.ID() {
		t.Fatalf("the fork %s is at %s, want a new session in %s", c.ID(), c.ProjectDir(), dir)
	}
	st := c.Snapshot()
	if st.Meta().Parent != p.ID() {
		t.Errorf("the fork names parent %q, want %s", st.Meta().Parent, p.ID())
	}
	if got := st.NumTurns(); got != 4 {
		t.Errorf("the fork holds %d turns, want the 4 up to turn 4", got)
	}
	if _, err := Fork(ro, 99, Options{}, *started("")); err == nil || !strings.Contains(err.Error(), "fork "+p.ID()) {
		t.Errorf("a fork past the parent's turns = %v; want a refusal naming the parent", err)
	}
}

// Resolve takes a record path, a session directory, an id or a unique prefix; a refusal says
// which class it is.
func TestResolve(t *testing.T) {
	root := t.TempDir()
	ws := "/some/workspace"
	dir := ProjectDir(root, ws)
	var ids []string
	for range 3 {
		s, err := Start(dir, Options{}, *started(""))
		must(t, err)
		ids = append(ids, s.ID())
		must(t, s.Close())
	}
	newest, err := Newest(root, ws)
	must(t, err)
	if newest.ID != ids[2] {
		t.Errorf("Newest = %s, want %s", newest.ID, ids[2])
	}
	rec := filepath.Join(dir, ids[0], journal.FileName)
	for _, ref := range []string{rec, filepath.Join(dir, ids[0]), ids[0], ids[0][:len(ids[0])-2]} {
		e, err := Resolve(root, ws, ref)
		if err != nil || e.Path != rec || e.ID != ids[0] {
			t.Errorf("Resolve(%q) = %+v, %v; want %s", ref, e, err, rec)
		}
	}
	// A whole id from another workspace is found; a prefix is not.
	if e, err := Resolve(root, "/elsewhere", ids[1]); err != nil || e.ID != ids[1] {
		t.Errorf("Resolve of a whole id from elsewhere = %+v, %v", e, err)
	}
	for _, c := range []struct {
		ref   string
		class error
	}{
		{ids[0][:8], ErrAmbiguous},
		{"nosuch", ErrNotFound},
		{filepath.Join(root, "none", journal.FileName), ErrNotFound},
		{"gone.jsonl", ErrNotFound},
	} {
		if _, err := Resolve(root, ws, c.ref); !errors.Is(err, c.class) {
			t.Errorf("Resolve(%q) = %v; want %v", c.ref, err, c.class)
		}
	}
	if _, err := Resolve(root, ws, filepath.Join(root, "none", journal.FileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing record's refusal does not wrap fs.ErrNotExist: %v", err)
	}
	if _, err := Newest(root, "/empty"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Newest of a workspace with no session = %v; want ErrNotFound", err)
	}
}

// Discard removes the session's directory while it still holds the record's lock (no other
// Session opens it in between), then closes it; a later Close is a no-op, and a write is refused.
func TestDiscard(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "ws")
	keep, err := Start(dir, Options{}, *started(""))
	must(t, err)
	defer keep.Close()
	s, err := Start(dir, Options{}, *started(""))
	must(t, err)
	if _, _, err := Open(s.Path(), Options{}); err == nil {
		t.Fatal("a second Session opened a record the first holds")
	}
	must(t, s.Discard())
	if _, err := os.Stat(filepath.Dir(s.Path())); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the discarded session's directory: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(keep.Path())); err != nil {
		t.Errorf("the other session's directory went too: %v", err)
	}
	must(t, s.Close())
	if err := keep.Close(); err != nil {
		t.Fatal(err)
	}
	if err := keep.Discard(); err == nil {
		t.Error("a closed session was discarded: another process may hold it now")
	}
	if _, err := os.Stat(keep.Path()); err != nil {
		t.Errorf("a refused discard removed the record: %v", err)
	}
	if err := s.Commit(&record.UserPrompt{Turn: s.Snapshot().Next(), Text: "after"}); err == nil {
		t.Error("a discarded session took a record")
	}
	replicated, err := Start(dir, Options{Replicate: func(_ string, w *journal.Writer) (Journal, error) { return w, nil }}, *started(""))
	must(t, err)
	defer replicated.Close()
	if err := replicated.Discard(); err == nil {
		t.Error("a session replicated to a store was discarded: its store copy would remain")
	}
	if _, err := os.Stat(replicated.Path()); err != nil {
		t.Errorf("a refused discard removed the record: %v", err)
	}
}
