package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/store"
	"github.com/reinhq/rein/internal/store/pgstore"
	"github.com/reinhq/rein/internal/store/pgtest"
)

var server *pgtest.Server

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &server)) }

// open opens a Store on url for a test, closed at its end.
func open(t testing.TB, url string, opts pgstore.Options) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// line encodes record seq as a record line with its newline: an event naming who wrote it.
func line(t testing.TB, seq int64, who string) []byte {
	t.Helper()
	b, err := record.Encode(record.Record{Seq: seq, Time: 1, Body: &record.Renamed{Title: who, Op: fmt.Sprintf("op-%d", seq)}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// host is one host's view of a conversation in a test: its Store and its copy of the record.
type host struct {
	s    *pgstore.Store
	root string
	name string
}

func (h *host) path(id string) string { return filepath.Join(h.root, id, journal.FileName) }

// take acquires the conversation, writes its copy and opens a writer on it.
func (h *host) take(t testing.TB, id string) (*pgstore.Writer, error) {
	ctx := context.Background()
	if _, err := h.s.Acquire(ctx, id); err != nil {
		return nil, err
	}
	if err := h.s.Materialize(ctx, fsys.OS{}, id, h.path(id)); err != nil {
		return nil, err
	}
	fw, _, err := journal.Open(fsys.OS{}, h.path(id), nil)
	if err != nil {
		return nil, err
	}
	return h.s.Replicate(h.path(id), fw)
}

// create makes a new conversation owned by h.
func (h *host) create(t testing.TB, id string) *pgstore.Writer {
	t.Helper()
	fw, err := journal.Create(fsys.OS{}, filepath.Dir(h.path(id)))
	if err != nil {
		t.Fatal(err)
	}
	w, err := h.s.Replicate(h.path(id), fw)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// rows reads a conversation's rows.
func rows(t testing.TB, url, id string) [][]byte {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rs, err := conn.Query(ctx, `SELECT seq, line FROM rein_records WHERE conversation = $1 ORDER BY seq`, id)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	var seq int64
	var l []byte
	if _, err := pgx.ForEachRow(rs, []any{&seq, &l}, func() error {
		if seq != int64(len(out))+1 {
			return fmt.Errorf("row %d where %d belongs", seq, len(out)+1)
		}
		out = append(out, append(bytes.Clone(l), '\n'))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// lapse ends a conversation's lease now, by the database's clock: what a lease's length passing
// without a renewal does.
func lapse(t testing.TB, url, id string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE rein_leases SET expires = now() - interval '1 millisecond' WHERE conversation = $1`, id); err != nil {
		t.Fatal(err)
	}
}

func TestPausedOwnerIsRefusedAfterATakeover(t *testing.T) {
	pgtest.Need(t, server)
	url := server.Database(t)
	a := &host{s: open(t, url, pgstore.Options{Name: "a", NoRenew: true}), root: t.TempDir()}
	b := &host{s: open(t, url, pgstore.Options{Name: "b"}), root: t.TempDir()}
	wa := a.create(t, "c1")
	for seq := int64(1); seq <= 3; seq++ {
		if _, err := wa.Append(line(t, seq, "a")); err != nil {
			t.Fatal(err)
		}
	}
	if err := wa.Sync(); err != nil {
		t.Fatal(err)
	}
	// b cannot take a live lease, and is told who holds it.
	var owned *store.OwnedError
	if _, err := b.take(t, "c1"); !errors.As(err, &owned) || owned.Owner != "a" {
		t.Fatalf("b took a live lease: %v", err)
	}
	// a pauses past its lease; b takes over, and a's next append is refused.
	lapse(t, url, "c1")
	wb, err := b.take(t, "c1")
	if err != nil {
		t.Fatalf("b could not take a lapsed lease: %v", err)
	}
	if wb.Epoch() != 2 {
		t.Fatalf("epoch %d after one takeover, want 2", wb.Epoch())
	}
	if _, err := wa.Append(line(t, 4, "a")); err != nil {
		t.Fatal(err)
	}
	if err := wa.Sync(); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("the paused owner's append: %v, want ErrFenced", err)
	}
	if _, err := wb.Append(line(t, 4, "b")); err != nil {
		t.Fatal(err)
	}
	if err := wb.Sync(); err != nil {
		t.Fatal(err)
	}
	got := rows(t, url, "c1")
	if len(got) != 4 || !bytes.Equal(got[3], line(t, 4, "b")) || !bytes.Equal(got[2], line(t, 3, "a")) {
		t.Fatalf("rows after the takeover: %q", got)
	}
	// b's copy is the rows, byte for byte.
	copyOf, err := os.ReadFile(b.path("c1"))
	if err != nil || !bytes.Equal(copyOf, bytes.Join(got, nil)) {
		t.Fatalf("b's copy differs from the rows (%v)", err)
	}
	if err := wa.Close(); err != nil {
		t.Fatal(err)
	}
	// a's release of a lease it lost releases nothing.
	if _, err := a.take(t, "c1"); !errors.As(err, &owned) || owned.Owner != "b" {
		t.Fatalf("a took b's lease after its stale release: %v", err)
	}
}

func TestALostLeaseIsReported(t *testing.T) {
	pgtest.Need(t, server)
	url := server.Database(t)
	lost := make(chan string, 4)
	a := &host{s: open(t, url, pgstore.Options{Name: "a", Lease: 600 * time.Millisecond, Lost: func(id string) { lost <- id }}), root: t.TempDir()}
	b := &host{s: open(t, url, pgstore.Options{Name: "b", Lease: 600 * time.Millisecond}), root: t.TempDir()}
	a.create(t, "c1")
	lapse(t, url, "c1")
	if _, err := b.take(t, "c1"); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-lost:
		if id != "c1" {
			t.Fatalf("lost %s", id)
		}
	case <-time.After(time.Minute):
		t.Fatal("a was never told it lost c1")
	}
	if _, ok := a.s.Holds("c1"); ok {
		t.Fatal("a still thinks it holds c1")
	}
}

func TestLeasesAreRenewed(t *testing.T) {
	pgtest.Need(t, server)
	url := server.Database(t)
	a := &host{s: open(t, url, pgstore.Options{Name: "a", Lease: 900 * time.Millisecond}), root: t.TempDir()}
	b := &host{s: open(t, url, pgstore.Options{Name: "b", Lease: 900 * time.Millisecond}), root: t.TempDir()}
	a.create(t, "c1")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Watch the lease across three of its lengths, by the database's clock: it never lapses.
	var start time.Time
	if err := conn.QueryRow(ctx, `SELECT now()`).Scan(&start); err != nil {
		t.Fatal(err)
	}
	for {
		var lapsed bool
		var elapsed time.Duration
		if err := conn.QueryRow(ctx, `SELECT expires < clock_timestamp(), clock_timestamp() - $1 FROM rein_leases WHERE conversation = 'c1'`, start).Scan(&lapsed, &elapsed); err != nil {
			t.Fatal(err)
		}
		if lapsed {
			t.Fatalf("the lease lapsed %v in, while its owner renewed it", elapsed)
		}
		if elapsed > 3*900*time.Millisecond {
			break
		}
		time.Sleep(50 * time.Millisecond) // sampling the lease over time is what is tested
	}
	if _, err := b.take(t, "c1"); err == nil {
		t.Fatal("b took a renewed lease")
	}
}

// TestAcquireAppendRenewRaces runs two or three hosts at one conversation at once, each taking it
// over, appending, releasing or pausing (its lease lapsing under it) as rapid draws. Whatever
// interleaving the scheduler makes: the rows run 1..n with no gap; every line a Sync
// acknowledged is in the rows byte for byte, written by the epoch that synced it; and a host whose
// lease moved never wrote again.
func TestAcquireAppendRenewRaces(t *testing.T) {
	pgtest.Need(t, server)
	url := server.Database(t)
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		id := fmt.Sprintf("c%d", n)
		hosts := rapid.IntRange(2, 3).Draw(rt, "hosts")
		type ack struct {
			seq  int64
			line []byte
		}
		var mu sync.Mutex
		var acked []ack
		var hs []*host
		for i := range hosts {
			st, err := pgstore.Open(context.Background(), url, pgstore.Options{Name: fmt.Sprintf("h%d", i), Lease: time.Hour})
			if err != nil {
				rt.Fatal(err)
			}
			defer st.Close() // within the iteration: the server's connections are few
			hs = append(hs, &host{s: st, root: t.TempDir(), name: fmt.Sprintf("h%d", i)})
		}
		w0 := hs[0].create(t, id)
		if err := w0.Close(); err != nil {
			rt.Fatal(err)
		}
		plans := make([][]int, hosts)
		for i := range hosts {
			plans[i] = rapid.SliceOfN(rapid.IntRange(0, 5), 1, 6).Draw(rt, fmt.Sprintf("plan%d", i))
		}
		var wg sync.WaitGroup
		for i, h := range hs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for round, k := range plans[i] {
					w, err := h.take(t, id)
					var owned *store.OwnedError
					if errors.As(err, &owned) {
						lapse(t, url, id) // the owner pauses past its lease
						continue
					}
					if err != nil {
						t.Errorf("%s: take: %v", h.name, err)
						return
					}
					var mine []ack
					for j := range k {
						seq := w.Next()
						l := line(t, seq, fmt.Sprintf("%s/%d/%d", h.name, round, j))
						if _, err := w.Append(l); err != nil {
							t.Errorf("append: %v", err)
						}
						mine = append(mine, ack{seq, l})
					}
					err = w.Sync()
					switch {
					case err == nil:
						mu.Lock()
						acked = append(acked, mine...)
						mu.Unlock()
					case !errors.Is(err, store.ErrFenced):
						t.Errorf("%s: sync: %v", h.name, err)
					}
					if round%2 == 0 {
						w.Close() // released
					} else {
						w.Abandon() // paused: it neither renews nor releases
					}
				}
			}()
		}
		wg.Wait()
		got := rows(t, url, id)
		for _, a := range acked {
			if a.seq > int64(len(got)) || !bytes.Equal(got[a.seq-1], a.line) {
				rt.Fatalf("acknowledged record %d is not in the rows as written", a.seq)
			}
		}
		if len(acked) != len(got) {
			rt.Fatalf("%d rows, %d acknowledged: a row no Sync acknowledged", len(got), len(acked))
		}
	})
}

// TestADatabaseRestartLosesNoSyncedRecord appends and syncs while the server restarts: every Sync
// that returned nil is in the rows afterwards; a Sync the restart cut poisons the writer, and the
// next take carries on from the rows.
func TestADatabaseRestartLosesNoSyncedRecord(t *testing.T) {
	pgtest.Need(t, server)
	url := server.Database(t)
	a := &host{s: open(t, url, pgstore.Options{Name: "a", Lease: time.Hour}), root: t.TempDir()}
	w := a.create(t, "c1")
	var acked [][]byte
	cut := 0
	restarted := make(chan error, 1)
	for round := 0; round < 400; round++ {
		if round == 20 {
			go func() { restarted <- server.Restart() }()
		}
		seq := w.Next()
		l := line(t, seq, fmt.Sprintf("round %d", round))
		if _, err := w.Append(l); err != nil {
			t.Fatal(err)
		}
		if err := w.Sync(); err != nil {
			if !errors.Is(err, journal.ErrPoisoned) {
				t.Fatalf("a failed sync that does not poison: %v", err)
			}
			t.Logf("round %d: the restart cut a sync: %v", round, err)
			cut++
			w.Abandon()
			if err := <-restarted; err != nil {
				t.Fatal(err)
			}
			restarted <- nil
			if w, err = a.take(t, "c1"); err != nil {
				t.Fatalf("take after the restart: %v", err)
			}
			continue
		}
		acked = append(acked, l)
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	got := rows(t, url, "c1")
	if len(got) < len(acked) {
		t.Fatalf("%d rows, %d acknowledged", len(got), len(acked))
	}
	i := 0
	for _, g := range got {
		if i < len(acked) && bytes.Equal(g, acked[i]) {
			i++
		}
	}
	if i != len(acked) {
		t.Fatalf("acknowledged record %d is missing from the rows", i+1)
	}
	t.Logf("%d records acknowledged, %d rows, %d syncs cut by the restart", len(acked), len(got), cut)
}

// TestAHostThatCannotRenewLetsGoBeforeItsLeaseEnds: the database goes away; the host reports the
// conversation lost, so that its agent stops, before the lease it last renewed ends by the
// database's clock (read once the database is back).
func TestAHostThatCannotRenewLetsGoBeforeItsLeaseEnds(t *testing.T) {
	pgtest.Need(t, server)
	url := server.Database(t)
	const lease = 3 * time.Second
	lost := make(chan time.Time, 1)
	a := &host{s: open(t, url, pgstore.Options{Name: "a", Lease: lease, Lost: func(string) { lost <- time.Now() }}), root: t.TempDir()}
	a.create(t, "c1")
	if err := server.Halt(); err != nil {
		t.Fatal(err)
	}
	var at time.Time
	select {
	case at = <-lost:
	case <-time.After(time.Minute):
		server.Resume()
		t.Fatal("the host never let go of a lease it could not renew")
	}
	if err := server.Resume(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var expires time.Time
	if err := conn.QueryRow(ctx, `SELECT expires FROM rein_leases WHERE conversation = 'c1'`).Scan(&expires); err != nil {
		t.Fatal(err)
	}
	if !at.Before(expires) {
		t.Fatalf("the host let go at %v, after its lease ended at %v", at, expires)
	}
	t.Logf("let go %v before the lease ended", expires.Sub(at))
}
