package main

// Several `rein serve` processes sharing one PostgreSQL store (--store): an owner killed with
// SIGKILL in the middle of an exchange, one of the two other hosts taking the conversation over,
// the clients of both reading every record once, in order.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/store/pgstore"
	"github.com/reinhq/rein/internal/store/pgtest"
)

var (
	pgOnce sync.Once
	pgSrv  *pgtest.Server
	pgErr  error
)

// needPG starts the package's PostgreSQL server on first use (stopped by TestMain), or skips the
// test when its binaries are absent outside CI.
func needPG(t *testing.T) *pgtest.Server {
	t.Helper()
	pgOnce.Do(func() { pgSrv, pgErr = pgtest.Start() })
	switch {
	case errors.Is(pgErr, pgtest.ErrAbsent) && os.Getenv("CI") == "":
		t.Skip(pgErr.Error())
	case pgErr != nil:
		t.Fatal(pgErr)
	}
	return pgSrv
}

// stopPG stops the server needPG started, if it did.
func stopPG() {
	if pgSrv != nil {
		pgSrv.Stop()
	}
}

func TestServeSharedOwnerKilledMidExchange(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three rein serve processes")
	}
	url := needPG(t).Database(t)
	sa, sb, sc := newSandbox(t), newSandbox(t), newSandbox(t)
	script := filepath.Join(sa.ws, "slow.json")
	if err := os.WriteFile(script, []byte(`[{"text":"`+strings.Repeat("word ", 600)+`","delay_ms":25}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	const lease = "1500ms"
	a := sa.startServe(t, "--sim-script", script, "--store", url, "--store-lease", lease, "--host-name", "host-a")
	b := sb.startServe(t, "--store", url, "--store-lease", lease, "--host-name", "host-b")
	c := sc.startServe(t, "--store", url, "--store-lease", lease, "--host-name", "host-c")
	ca := client.New("http://"+a.addr, a.token, nil)
	cb := client.New("http://"+b.addr, b.token, nil)
	cc := client.New("http://"+c.addr, c.token, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	v, _, err := ca.Create(ctx, client.NewOp(), "killed")
	if err != nil {
		t.Fatal(err)
	}
	id := v.ID
	first, err := ca.Send(ctx, id, api.Message{Op: client.NewOp(), Text: "a slow one"})
	if err != nil {
		t.Fatal(err)
	}
	// Wait until a streams: the exchange is in flight, its turn started.
	events := ca.Events(ctx, id, 0)
	for e := range events.C {
		if e.Live != nil && e.Live.Kind == "text" {
			break
		}
	}
	queued, err := ca.Send(ctx, id, api.Message{Op: client.NewOp(), Text: "waiting behind it", Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.done

	// b or c takes it over on its own, once a's lease lapses: the first record the new owner
	// writes is the first event a client of b sees, whichever owns it now.
	follow := cb.Events(ctx, id, 0)
	var seen []int64
	var tookOver time.Duration
	for e := range follow.C {
		if e.Seq == 0 {
			continue
		}
		seen = append(seen, e.Seq)
		if e.Kind == string(record.KindQuiesced) && tookOver == 0 {
			tookOver = time.Since(killed)
		}
		if tookOver > 0 && !e.State.Working {
			break
		}
	}
	if tookOver == 0 {
		t.Fatalf("no host took the conversation over: %v", follow.Err())
	}
	t.Logf("failover: %v from SIGKILL to the new owner's first record (lease %s)", tookOver, lease)
	for i, s := range seen {
		if s != int64(i+1) {
			t.Fatalf("b's client read records %v: a gap or a repeat", seen)
		}
	}

	recs := sharedRows(t, url, id, sb)
	if s := lastSubmission(recs, first.MessageID); s == nil || s.State != record.SubmissionCancelled {
		t.Fatalf("the delivered message ended %+v, want cancelled", s)
	}
	if s := lastSubmission(recs, queued.MessageID); s == nil || s.State != record.SubmissionRejected {
		t.Fatalf("the waiting message ended %+v, want rejected (host restarted)", s)
	}

	// A client of c read the same records, from the first, with no gap or repeat.
	followC := cc.Events(ctx, id, 0)
	for i := 1; i <= len(seen); {
		e, ok := <-followC.C
		if !ok {
			t.Fatalf("c's stream ended after %d of %d records: %v", i-1, len(seen), followC.Err())
		}
		if e.Seq == 0 {
			continue
		}
		if e.Seq != int64(i) {
			t.Fatalf("c's client read record %d where %d was due", e.Seq, i)
		}
		i++
	}

	// The next prompt is answered: sent to c, which takes it if it owns the conversation and
	// otherwise refuses it naming the owner, b.
	op := client.NewOp()
	next, err := cc.Send(ctx, id, api.Message{Op: op, Text: "and the next one"})
	var refusal *api.Error
	if errors.As(err, &refusal) && refusal.Code == api.NotOwner {
		if !strings.Contains(refusal.Message, "host-b") {
			t.Fatalf("c refused the send without naming the owner: %v", err)
		}
		t.Logf("host-b took the conversation over; c refused the send: %v", refusal.Message)
		next, err = cb.Send(ctx, id, api.Message{Op: op, Text: "and the next one"})
	} else {
		t.Logf("host-c took the conversation over")
	}
	if err != nil {
		t.Fatal(err)
	}
	for e := range follow.C {
		p := string(e.Payload)
		if e.Kind == string(record.KindSubmission) && strings.Contains(p, next.MessageID) && !strings.Contains(p, `"accepted"`) {
			break
		}
	}
	recs = sharedRows(t, url, id, sb)
	last, ok := recs[len(recs)-1].Body.(*record.Submission)
	if !ok || last.State != record.SubmissionAnswered {
		t.Fatalf("the next prompt ended with %s %+v", recs[len(recs)-1].Kind(), recs[len(recs)-1].Body)
	}
}

// sharedRows writes a conversation's rows out to a file, checks it with rein doctor, and reads it.
func sharedRows(t *testing.T, url, id string, sb *sandbox) []record.Record {
	t.Helper()
	st, err := pgstore.Open(context.Background(), url, pgstore.Options{Name: "checker", NoRenew: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	path := filepath.Join(t.TempDir(), id, "record.jsonl")
	if err := st.Materialize(context.Background(), fsys.OS{}, id, path); err != nil {
		t.Fatalf("the rows do not run 1, 2, 3, …: %v", err)
	}
	if r := sb.rein(t, "doctor", path); r.code != 0 || !strings.Contains(r.stdout+r.stderr, "admissible") {
		t.Fatalf("rein doctor on the rows: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	recs, err := st.Records(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func lastSubmission(recs []record.Record, id string) *record.Submission {
	var out *record.Submission
	for _, r := range recs {
		if s, ok := r.Body.(*record.Submission); ok && s.ID == id {
			out = s
		}
	}
	return out
}
