package host_test

import (
	"context"
	"fmt"

	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"pgregory.net/rapid"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/store/pgstore"
	"github.com/reinhq/rein/internal/store/pgtest"
)

// Several hosts sharing one set of conversations in PostgreSQL (shared.go), in one process: each a
// real host with its own root and API, each its own simulator, one database.

var pg *pgtest.Server

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m, &pg)) }

// sharedRig starts a host named name on the database at url.
func sharedRig(t *testing.T, url, name string, opts rigOptions) *rig {
	t.Helper()
	opts.store = url
	if opts.storeOpts.Lease == 0 {
		opts.storeOpts.Lease = time.Hour // leases lapse only when a test says so
	}
	opts.storeOpts.Name = name
	opts.noCheck = true // the rows are checked, not this host's copy (checkRows)
	return newRig(t, opts)
}

// execSQL runs a statement on the database at url.
func execSQL(t *testing.T, url, stmt string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt, args...); err != nil {
		t.Fatal(err)
	}
}

// lapse ends a conversation's lease now, by the database's clock, as a lease's length passing
// without a renewal does.
func lapse(t *testing.T, url, id string) {
	execSQL(t, url, `UPDATE rein_leases SET expires = now() - interval '1 millisecond' WHERE conversation = $1`, id)
}

// checkRows writes a conversation's rows out to a fresh file and checks it as every host test
// checks a record (checkRecord): admissible, nothing delivered twice, settled if asked.
func checkRows(t *testing.T, url, id string, settled bool) []record.Record {
	t.Helper()
	st, err := pgstore.Open(context.Background(), url, pgstore.Options{Name: "checker", NoRenew: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	path := filepath.Join(t.TempDir(), id, journal.FileName)
	if err := st.Materialize(context.Background(), fsys.OS{}, id, path); err != nil {
		t.Fatal(err)
	}
	checkRecord(t, path, settled)
	if t.Failed() {
		for _, r := range records(t, path) {
			t.Logf("%d %s %s", r.Seq, r.Kind(), mustJSON(r.Body))
		}
	}
	return records(t, path)
}

// TestSharedHostsServeOneSetOfConversations: hosts that give no URL (rein serve on a wildcard
// address without --advertise) cannot hand a request on to each other: a mutation on the host
// that does not own the conversation is refused, naming the owner.
func TestSharedHostsServeOneSetOfConversations(t *testing.T) {
	pgtest.Need(t, pg)
	url := pg.Database(t)
	a := sharedRig(t, url, "host-a", rigOptions{noAdvertise: true})
	b := sharedRig(t, url, "host-b", rigOptions{noAdvertise: true})
	createOp := client.NewOp()
	v, _, err := a.c.Create(ctxT(t), createOp, "shared")
	if err != nil {
		t.Fatal(err)
	}
	id := v.ID
	a.send(id, "hello from a")
	a.settle(id)

	// A create retried on b under the same operation answers a's conversation.
	again, replayed, err := b.c.Create(ctxT(t), createOp, "shared")
	if err != nil || !replayed || again.ID != id {
		t.Fatalf("the create retried on b: %+v, replayed %v (%v); want %s replayed", again.ID, replayed, err, id)
	}
	// b lists what a created, from the shared index.
	vs, err := b.c.List(ctxT(t))
	if err != nil || len(vs) != 1 || vs[0].ID != id || vs[0].Title != "shared" {
		t.Fatalf("b lists %+v (%v)", vs, err)
	}
	// a holds it open: a mutation on b is refused, naming a.
	_, err = b.c.Send(ctxT(t), id, api.Message{Op: client.NewOp(), Text: "hello from b"})
	if api.CodeOf(err) != api.NotOwner || !strings.Contains(err.Error(), "host-a") {
		t.Fatalf("a send to the non-owner: %v, want not_owner naming host-a", err)
	}
	// Once a lets it rest, b takes it up from the rows and answers.
	if err := a.h.Rest(); err != nil {
		t.Fatal(err)
	}
	b.send(id, "hello from b")
	b.settle(id)
	recs := checkRows(t, url, id, true)
	var prompts []string
	for _, r := range recs {
		if p, ok := r.Body.(*record.UserPrompt); ok {
			prompts = append(prompts, p.Text)
		}
	}
	if strings.Join(prompts, "|") != "hello from a|hello from b" {
		t.Fatalf("prompts %q", prompts)
	}
	// And now a is the one refused, naming b.
	_, err = a.c.Send(ctxT(t), id, api.Message{Op: client.NewOp(), Text: "again from a"})
	if api.CodeOf(err) != api.NotOwner || !strings.Contains(err.Error(), "host-b") {
		t.Fatalf("a send to the non-owner: %v, want not_owner naming host-b", err)
	}
}

// TestSharedPausedOwnerIsRefusedAfterATakeover: a holds a conversation and stops renewing (a
// pause); its lease lapses by the database's clock and b takes the conversation over. a's next
// write is refused by the fence, a drops the conversation, and every later request to a is
// refused naming b (b gives no URL to hand requests on to); the rows hold nothing of a after the
// takeover.
func TestSharedPausedOwnerIsRefusedAfterATakeover(t *testing.T) {
	pgtest.Need(t, pg)
	url := pg.Database(t)
	a := sharedRig(t, url, "host-a", rigOptions{storeOpts: pgstore.Options{NoRenew: true}})
	b := sharedRig(t, url, "host-b", rigOptions{noAdvertise: true})
	id := a.create("paused")
	wa := a.events(id, 0)
	a.send(id, "before the pause")
	wa.idle()

	lapse(t, url, id)
	b.send(id, "after the takeover")
	b.settle(id)

	_, err := a.c.Send(ctxT(t), id, api.Message{Op: client.NewOp(), Text: "from the paused owner"})
	if api.CodeOf(err) != api.NotOwner {
		t.Fatalf("the paused owner's send after the takeover: %v, want not_owner", err)
	}
	_, err = a.c.Send(ctxT(t), id, api.Message{Op: client.NewOp(), Text: "from the paused owner, again"})
	if api.CodeOf(err) != api.NotOwner || !strings.Contains(err.Error(), "host-b") {
		t.Fatalf("the paused owner's second send: %v, want not_owner naming host-b", err)
	}
	for _, r := range checkRows(t, url, id, true) {
		if s, ok := r.Body.(*record.Submission); ok && strings.Contains(s.Text, "paused owner") {
			t.Fatalf("record %d holds the paused owner's message", r.Seq)
		}
	}
}

// TestSharedOwnerDiesMidExchange: a streams a slow reply when it dies — its connections to the
// database cut, nothing more written, its lease left to lapse. b's sweep takes the conversation
// over, settles the exchange as crashed and rejects what a had accepted and not delivered as "host
// restarted"; the rows are admissible with nothing lost or doubled, and b answers the next prompt.
func TestSharedOwnerDiesMidExchange(t *testing.T) {
	pgtest.Need(t, pg)
	url := pg.Database(t)
	a := sharedRig(t, url, "host-a", rigOptions{script: steps(slowText("", 400, 20), `{"text":"answered by b"}`), quiet: true,
		storeOpts: pgstore.Options{NoRenew: true}})
	b := sharedRig(t, url, "host-b", rigOptions{script: steps(`{"text":"answered by b"}`), storeOpts: pgstore.Options{Lease: 900 * time.Millisecond}})
	id := a.create("dies")
	w := a.events(id, 0)
	first := a.send(id, "a slow one")
	w.live("text")
	queuedMsg := api.Message{Op: client.NewOp(), Text: "waiting behind it", Queue: true}
	queued, err := a.c.Send(ctxT(t), id, queuedMsg)
	if err != nil {
		t.Fatal(err)
	}
	// a dies: it can reach the database no more, and its lease runs out.
	a.die()
	lapse(t, url, id)

	// b's sweep takes it over without being asked.
	deadline := time.Now().Add(time.Minute)
	var v api.View
	for {
		var err error
		if v, err = b.c.Get(ctxT(t), id); err != nil {
			t.Fatal(err)
		}
		if !v.State.Working && v.State.Seq > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b never took the conversation over: %+v", v.State)
		}
		time.Sleep(50 * time.Millisecond) // b's sweep runs on its own schedule
	}
	recs := checkRows(t, url, id, true)
	if s := submission(recs, first.MessageID); s == nil || s.State != record.SubmissionCancelled {
		t.Fatalf("the delivered message ended %+v, want cancelled", s)
	}
	if s := submission(recs, queued.MessageID); s == nil || s.State != record.SubmissionRejected || !strings.Contains(s.Reason+s.Detail, "restart") {
		t.Fatalf("the waiting message ended %+v, want rejected as host restarted", s)
	}
	if q, ok := lastOf[*record.Quiesced](recs); !ok || q.Reason != "crashed" {
		t.Fatalf("no quiesce as crashed: %+v", q)
	}
	// The client's retry of the send a accepted, on b, under the same operation: the recorded
	// answer, replayed, not a second message.
	res, err := b.c.Send(ctxT(t), id, queuedMsg)
	if err != nil || !res.Replayed || res.MessageID != queued.MessageID || res.State != api.Rejected {
		t.Fatalf("the send retried on b: %+v (%v); want message %s replayed, rejected", res, err, queued.MessageID)
	}
	b.send(id, "and the next prompt")
	b.settle(id)
	recs = checkRows(t, url, id, true)
	if m, ok := lastOf[*record.AssistantMessage](recs); !ok || !strings.Contains(messageText(m), "answered by b") {
		t.Fatalf("the next prompt was not answered by b: %+v", m)
	}
}

// die stops a host as a crash would, as far as the store can tell: its connections are cut first,
// so nothing it does after reaches the rows, and its leases are left to lapse.
func (r *rig) die() {
	r.st.Close()
	r.srv.CloseClientConnections()
	r.srv.Close()
	r.srv = nil
	r.h.Close() // it can write nothing more: the store refuses it, as the host's log says
	r.h, r.st = nil, nil
}

func messageText(m *record.AssistantMessage) string {
	var b strings.Builder
	for _, p := range m.Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// TestSharedEventsOfANonOwnerMissNothing: a client of b follows a conversation a owns, from the
// rows; b's listening connection is cut twice (pg_terminate_backend) while a appends. The client
// reads every record once, in order: what was appended while b was not listening is read when it
// listens again.
func TestSharedEventsOfANonOwnerMissNothing(t *testing.T) {
	pgtest.Need(t, pg)
	url := pg.Database(t)
	a := sharedRig(t, url, "host-a", rigOptions{})
	b := sharedRig(t, url, "host-b", rigOptions{})
	id := a.create("followed")
	w := b.events(id, 0)
	for k := range 6 {
		if k == 2 || k == 4 {
			cut(t, url, "rein listen host-b")
		}
		a.send(id, fmt.Sprintf("message %d", k))
		a.settle(id)
	}
	last := a.get(id).State.Seq
	w.through(last)
	var seqs []int64
	for _, e := range w.seen {
		if e.Seq > 0 {
			seqs = append(seqs, e.Seq)
		}
	}
	for i, s := range seqs {
		if s != int64(i+1) {
			t.Fatalf("the client of b read records %v: a gap or a repeat at %d", seqs, i)
		}
	}
	if int64(len(seqs)) < last {
		t.Fatalf("the client of b read %d records of %d", len(seqs), last)
	}
}

// cut terminates the database connections of application app, once there is one.
func cut(t *testing.T, url, app string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	deadline := time.Now().Add(time.Minute)
	for {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no connection of %q to cut", app)
		}
		time.Sleep(20 * time.Millisecond) // the listener reconnects on its own schedule
	}
}

// TestSharedDatabaseRestartLosesNoSyncedRecord: the database restarts while a host sends and
// answers. A send acknowledged before, during or after it is in the rows; a write the restart cut
// fails the session, which the host drops and takes up again from the rows; the record stays
// admissible, and the next prompt is answered.
func TestSharedDatabaseRestartLosesNoSyncedRecord(t *testing.T) {
	pgtest.Need(t, pg)
	url := pg.Database(t)
	a := sharedRig(t, url, "host-a", rigOptions{quiet: true})
	id := a.create("restarted")
	var acked []string
	restarted := make(chan error, 1)
	failed := 0
	for k := range 40 {
		if k == 8 {
			go func() { restarted <- pg.Restart() }()
		}
		res, err := a.c.Send(ctxT(t), id, api.Message{Op: client.NewOp(), Text: fmt.Sprintf("message %d", k)})
		if err != nil {
			if failed == 0 {
				t.Logf("send %d, the first refused: %v", k, err)
			}
			failed++
			continue
		}
		acked = append(acked, res.MessageID)
		if c, err := a.h.Get(id); err == nil {
			c.Wait(ctxT(t))
		}
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := a.c.Send(ctxT(t), id, api.Message{Op: client.NewOp(), Text: "after the restart"})
		if err == nil {
			acked = append(acked, res.MessageID)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no send is accepted after the restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // the pool reconnects on its own schedule
	}
	a.settle(id)
	recs := checkRows(t, url, id, true)
	for _, m := range acked {
		if submission(recs, m) == nil {
			t.Fatalf("acknowledged message %s is not in the rows", m)
		}
	}
	if s := submission(recs, acked[len(acked)-1]); s.State != record.SubmissionAnswered {
		t.Fatalf("the send after the restart ended %s", s.State)
	}
	t.Logf("%d sends acknowledged, %d refused during the restart", len(acked), failed)
}

// TestSharedHostsRace runs three hosts at conversations at once: each sends, lets its
// conversations rest, or makes the owner pause past its lease (a lapse), as rapid draws (the seed
// is printed on failure; -rapid.seed replays it). Whatever the interleaving: a send is accepted or
// refused not_owner, nothing else; every accepted send is in the rows once and ends terminal; the
// record stays admissible; and after a last takeover the next prompt is answered.
func TestSharedHostsRace(t *testing.T) {
	pgtest.Need(t, pg)
	url := pg.Database(t)
	var hosts []*rig
	for _, name := range []string{"host-a", "host-b", "host-c"} {
		hosts = append(hosts, sharedRig(t, url, name, rigOptions{quiet: true, idleAfter: -1}))
	}
	rapid.Check(t, func(rt *rapid.T) {
		id := hosts[0].create("raced")
		plans := make([][]int, len(hosts))
		for i := range hosts {
			plans[i] = rapid.SliceOfN(rapid.IntRange(0, 5), 1, 5).Draw(rt, fmt.Sprintf("plan%d", i))
		}
		var mu sync.Mutex
		var acked []string
		var wg sync.WaitGroup
		for i, h := range hosts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, act := range plans[i] {
					switch {
					case act == 4:
						if err := h.h.Rest(); err != nil {
							t.Errorf("%s rest: %v", h.opts.storeOpts.Name, err)
						}
					case act == 5:
						lapse(t, url, id)
					default:
						res, err := h.c.Send(ctxT(t), id, api.Message{Op: client.NewOp(), Text: fmt.Sprintf("%s says %d", h.opts.storeOpts.Name, act)})
						switch {
						case err == nil:
							mu.Lock()
							acked = append(acked, res.MessageID)
							mu.Unlock()
						case api.CodeOf(err) != api.NotOwner:
							t.Errorf("%s send: %v", h.opts.storeOpts.Name, err)
						}
					}
				}
			}()
		}
		wg.Wait()
		// Every host's work ends; then the conversation is taken over once more and asked again.
		for _, h := range hosts {
			if c, err := h.h.Get(id); err == nil {
				c.Wait(ctxT(t))
			}
		}
		lapse(t, url, id)
		last := hosts[2].send(id, "the last word")
		hosts[2].settle(id)
		recs := checkRows(t, url, id, true)
		for _, m := range append(acked, last.MessageID) {
			if s := submission(recs, m); s == nil {
				rt.Fatalf("accepted message %s is not in the rows", m)
			}
		}
		if s := submission(recs, last.MessageID); s.State != record.SubmissionAnswered {
			rt.Fatalf("the last word ended %s", s.State)
		}
		for _, h := range hosts {
			if err := h.h.Rest(); err != nil {
				rt.Fatal(err)
			}
		}
	})
}
