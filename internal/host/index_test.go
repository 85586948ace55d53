package host_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/session"
)

func (r *rig) indexPath() string {
	return filepath.Join(session.ProjectDir(r.root, r.ws), host.IndexFile)
}

func (r *rig) list() string {
	r.t.Helper()
	all, err := r.c.List(ctxT(r.t))
	if err != nil {
		r.t.Fatal(err)
	}
	return mustJSON(all)
}

// populate makes conversations in several states: titled or not, renamed, closed, with exchanges
// answered and stopped.
func populate(t *testing.T, r *rig, tag string) []string {
	t.Helper()
	var ids []string
	for i := range 4 {
		title := ""
		if i%2 == 0 {
			title = fmt.Sprintf("%s %d", tag, i)
		}
		id := r.create(title)
		ids = append(ids, id)
		r.send(id, fmt.Sprintf("%s message %d", tag, i))
		r.settle(id)
	}
	if _, err := r.c.Rename(ctxT(t), ids[1], client.NewOp(), tag+" renamed"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.c.Close(ctxT(t), ids[2], client.NewOp()); err != nil {
		t.Fatal(err)
	}
	return ids
}

func removeIndex(t *testing.T, path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

// TestIndexMissing deletes the database: the host rebuilds it from the records at Open, and lists
// the same conversations.
func TestIndexMissing(t *testing.T) {
	r := newRig(t, rigOptions{})
	populate(t, r, "first")
	want := r.list()
	r.close()
	removeIndex(t, r.indexPath())
	r.open()
	if got := r.list(); got != want {
		t.Fatalf("after a rebuild\n got %s\nwant %s", got, want)
	}
	if _, err := os.Stat(r.indexPath()); err != nil {
		t.Fatalf("the index was not rebuilt: %v", err)
	}
}

// TestIndexCorrupt overwrites the database with garbage: the host throws it away and rebuilds.
func TestIndexCorrupt(t *testing.T) {
	r := newRig(t, rigOptions{})
	populate(t, r, "first")
	want := r.list()
	r.close()
	removeIndex(t, r.indexPath())
	if err := os.WriteFile(r.indexPath(), []byte("this is not a database, it is a sentence that is long enough to look like one"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.open()
	if got := r.list(); got != want {
		t.Fatalf("after a corrupt index\n got %s\nwant %s", got, want)
	}
}

// TestIndexStale puts back an old database — as a crash between a record and its row, or another
// rein appending to a record while the host was down, leaves it — and checks that Open corrects
// it: rows of changed records are rewritten, missing rows added, rows of vanished records dropped.
func TestIndexStale(t *testing.T) {
	r := newRig(t, rigOptions{})
	ids := populate(t, r, "first")
	r.close()
	old := t.TempDir()
	for _, s := range []string{"", "-wal", "-shm"} {
		if b, err := os.ReadFile(r.indexPath() + s); err == nil {
			os.WriteFile(filepath.Join(old, "index.db"+s), b, 0o600)
		}
	}
	r.open()
	r.send(ids[0], "a later message")
	r.settle(ids[0])
	if _, err := r.c.Rename(ctxT(t), ids[3], client.NewOp(), "renamed later"); err != nil {
		t.Fatal(err)
	}
	populate(t, r, "second")
	want := r.list()
	r.close()
	removeIndex(t, r.indexPath())
	for _, s := range []string{"", "-wal", "-shm"} {
		if b, err := os.ReadFile(filepath.Join(old, "index.db"+s)); err == nil {
			os.WriteFile(r.indexPath()+s, b, 0o600)
		}
	}
	r.open()
	if got := r.list(); got != want {
		t.Fatalf("after a stale index\n got %s\nwant %s", got, want)
	}
	// A record that vanished while the host was down leaves the list.
	r.close()
	if err := os.RemoveAll(filepath.Dir(r.path(ids[1]))); err != nil {
		t.Fatal(err)
	}
	r.open()
	all, _ := r.c.List(ctxT(t))
	for _, v := range all {
		if v.ID == ids[1] {
			t.Fatal("a conversation whose record is gone is still listed")
		}
	}
	if len(all) != 7 {
		t.Fatalf("%d conversations listed, want 7", len(all))
	}
}

// TestIndexServesList edits a resting conversation's row behind the host's back: the list shows
// the row (it reads the index, not the record), and Rebuild puts the truth back.
func TestIndexServesList(t *testing.T) {
	r := newRig(t, rigOptions{})
	ids := populate(t, r, "first")
	want := r.list()
	if err := r.h.Rest(); err != nil {
		t.Fatal(err)
	}
	if st := r.h.Stats(); st.Open != 0 {
		t.Fatalf("after Rest: %+v", st)
	}
	db, err := sql.Open("sqlite", "file:"+r.indexPath()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("UPDATE conversations SET title = 'edited by hand' WHERE id = ?", ids[3]); err != nil {
		t.Fatal(err)
	}
	if got := r.get(ids[3]); got.Title != "edited by hand" {
		t.Fatalf("a resting conversation reads %q, not its row", got.Title)
	}
	if st := r.h.Stats(); st.Open != 0 {
		t.Fatalf("listing opened sessions: %+v", st)
	}
	if err := r.h.Rebuild(); err != nil {
		t.Fatal(err)
	}
	if got := r.list(); got != want {
		t.Fatalf("after Rebuild\n got %s\nwant %s", got, want)
	}
}

// TestListThousand lists 1,000 resting conversations without opening one of them.
func TestListThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 1,000 conversations")
	}
	r := newRig(t, rigOptions{noCheck: true})
	for i := range 1000 {
		if _, _, err := r.h.Create(fmt.Sprintf("op-%d", i), fmt.Sprintf("conversation %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.h.Rest(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	all, err := r.c.List(ctxT(t))
	if err != nil || len(all) != 1000 {
		t.Fatalf("listed %d: %v", len(all), err)
	}
	t.Logf("listing 1,000 resting conversations through the API took %v", time.Since(start))
	if st := r.h.Stats(); st.Open != 0 {
		t.Fatalf("listing opened sessions: %+v", st)
	}
	r.restart()
	start = time.Now()
	all, err = r.c.List(ctxT(t))
	if err != nil || len(all) != 1000 {
		t.Fatalf("listed %d after a restart: %v", len(all), err)
	}
	if st := r.h.Stats(); st.Open != 0 {
		t.Fatalf("a restart with a good index replayed records: %+v", st)
	}
}
