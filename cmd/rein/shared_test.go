package main

// Several `rein serve` processes sharing one PostgreSQL store (--store): an owner killed with
// SIGKILL in the middle of an exchange, one of the two other hosts taking the conversation over,
// the clients of both reading every record once, in order.

import (
	"context"
	"errors"
	"fmt"
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
	shareToken(t, sa, sb, sc)
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
	// otherwise hands it on to the owner, b.
	next, err := cc.Send(ctx, id, api.Message{Op: client.NewOp(), Text: "and the next one"})
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

// shareToken gives the hosts of sandboxes sbs one bearer token, as hosts behind one load balancer
// have.
func shareToken(t *testing.T, sbs ...*sandbox) string {
	t.Helper()
	tok, err := freshToken()
	if err != nil {
		t.Fatal(err)
	}
	tok += tok // 96 hex digits
	for _, sb := range sbs {
		if err := os.WriteFile(filepath.Join(sb.home, "serve.token"), []byte(tok+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return tok
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

// TestServeSharedThroughANonOwner: three rein serve processes with one token; a owns a
// conversation, and a client that talks only to b sends and reads the answer, Stops a running
// turn, answers an approval — each handed on to a. Then a stops (SIGSTOP) and is killed with
// SIGKILL while that client keeps sending through b, a send handed on to a in flight: every send in flight then is answered plainly (accepted, or not_owner
// saying the owner did not answer, with a Retry-After), the client retries each under its op_id
// until it is accepted, and once another host has taken the conversation over the record holds
// every message once — none lost, none doubled — and is admissible.
func TestServeSharedThroughANonOwner(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three rein serve processes")
	}
	url := needPG(t).Database(t)
	sa, sb, sc := newSandbox(t), newSandbox(t), newSandbox(t)
	shareToken(t, sa, sb, sc)
	slow := `{"text":"` + strings.Repeat("word ", 600) + `","delay_ms":25}`
	script := filepath.Join(sa.ws, "script.json")
	steps := []string{`{"text":"the first answer"}`, slow,
		`{"tool_calls":[{"name":"bash","arguments":{"command":"echo ran-after-approval"}}]}`, `{"text":"done"}`, slow}
	if err := os.WriteFile(script, []byte("["+strings.Join(steps, ",")+"]"), 0o600); err != nil {
		t.Fatal(err)
	}
	const lease = "1500ms"
	a := sa.startServe(t, "--sim-script", script, "--permission-mode", "ask", "--store", url, "--store-lease", lease, "--host-name", "host-a")
	b := sb.startServe(t, "--store", url, "--store-lease", lease, "--host-name", "host-b")
	sc.startServe(t, "--store", url, "--store-lease", lease, "--host-name", "host-c")
	ca := client.New("http://"+a.addr, a.token, nil)
	cb := client.New("http://"+b.addr, b.token, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	v, _, err := ca.Create(ctx, client.NewOp(), "owned by a")
	if err != nil {
		t.Fatal(err)
	}
	id := v.ID
	events := cb.Events(ctx, id, 0)
	until := func(what string, pred func(api.Event) bool) api.Event {
		t.Helper()
		for e := range events.C {
			if e.Seq > 0 && pred(e) {
				return e
			}
		}
		t.Fatalf("b's stream ended waiting for %s: %v", what, events.Err())
		return api.Event{}
	}
	payloadHas := func(kind record.Kind, s string) func(api.Event) bool {
		return func(e api.Event) bool { return e.Kind == string(kind) && strings.Contains(string(e.Payload), s) }
	}
	idle := func(e api.Event) bool { return !e.State.Working }

	// Sent through b, answered by a, read through b.
	if _, err := cb.Send(ctx, id, api.Message{Op: client.NewOp(), Text: "hello through b"}); err != nil {
		t.Fatal(err)
	}
	until("the first answer", payloadHas(record.KindAssistantMessage, "the first answer"))
	until("the exchange's end", idle)

	// A running turn Stopped through b.
	if _, err := cb.Send(ctx, id, api.Message{Op: client.NewOp(), Text: "a slow one"}); err != nil {
		t.Fatal(err)
	}
	until("the slow turn delivered", payloadHas(record.KindUserPrompt, "a slow one"))
	pressed := time.Now()
	if res, err := cb.Stop(ctx, id, 0); err != nil || !res.Stopped {
		t.Fatalf("stop through b: %+v %v", res, err)
	}
	until("the stopped exchange's end", idle)
	t.Logf("a Stop through b: the conversation idle, as b's client read it, %v after it was pressed", time.Since(pressed))

	// An approval asked on a, answered through b.
	if _, err := cb.Send(ctx, id, api.Message{Op: client.NewOp(), Text: "run it"}); err != nil {
		t.Fatal(err)
	}
	asked := until("an approval asked", func(e api.Event) bool { return len(e.State.Approvals) == 1 })
	if res, err := cb.Approve(ctx, id, client.NewOp(), asked.State.Approvals[0].CallID, true); err != nil || res.State != record.ApprovalAllowed {
		t.Fatalf("approve through b: %+v %v", res, err)
	}
	until("the approved call's result", payloadHas(record.KindToolResults, "ran-after-approval"))
	until("the exchange's end", idle)

	// A slow turn on a, and a client of b sending behind it while a is killed.
	if _, err := cb.Send(ctx, id, api.Message{Op: client.NewOp(), Text: "slow again"}); err != nil {
		t.Fatal(err)
	}
	until("the slow turn delivered", payloadHas(record.KindUserPrompt, "slow again"))
	type sent struct {
		op, msg  string
		refusals []string
	}
	const n = 12
	sends := make([]sent, n)
	acked := make(chan int, n)
	go func() {
		defer close(acked)
		for k := range sends {
			s := &sends[k]
			s.op = client.NewOp()
			for ctx.Err() == nil {
				res, err := cb.Send(ctx, id, api.Message{Op: s.op, Text: fmt.Sprintf("behind it %d", k), Queue: true})
				if err == nil {
					s.msg = res.MessageID
					break
				}
				s.refusals = append(s.refusals, err.Error())
				var refusal *api.Error
				if !errors.As(err, &refusal) || refusal.Code != api.NotOwner {
					return // a refusal the client cannot act on: reported below
				}
				time.Sleep(min(refusal.RetryAfter, 200*time.Millisecond) + 50*time.Millisecond)
			}
			acked <- k
		}
	}()
	for k := range acked {
		if k == 2 {
			// a stops answering, so that the next send is in flight through b when a dies.
			if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond)
			if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	<-a.done
	for k, s := range sends {
		if s.msg == "" {
			t.Fatalf("send %d was never accepted: %q", k, s.refusals)
		}
		for _, r := range s.refusals {
			if !strings.Contains(r, "not_owner") || !strings.Contains(r, "host-a") {
				t.Fatalf("send %d was refused with %q; want not_owner naming host-a", k, r)
			}
		}
		if len(s.refusals) > 0 {
			t.Logf("send %d: refused %d times before it was accepted; the first: %s", k, len(s.refusals), s.refusals[0])
		}
	}
	// Every message once, under the id its send was answered with, each settled by the host that
	// took the conversation over.
	settled := func(recs []record.Record) bool {
		for _, s := range sends {
			last := lastSubmission(recs, s.msg)
			if last == nil {
				return false
			}
			switch last.State {
			case record.SubmissionAccepted, record.SubmissionHanded, record.SubmissionDelivered:
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(time.Minute); !settled(storeRecords(t, url, id)); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the sends accepted were not all settled a minute after the owner was killed")
		}
	}
	recs := sharedRows(t, url, id, sb)
	for k, s := range sends {
		var ids []string
		for _, r := range recs {
			if sub, ok := r.Body.(*record.Submission); ok && sub.Op == s.op {
				ids = append(ids, sub.ID)
			}
		}
		if len(ids) != 1 || ids[0] != s.msg {
			t.Fatalf("send %d (op %s, answered as message %s) is in the record as %v; want it once", k, s.op, s.msg, ids)
		}
		last := lastSubmission(recs, s.msg)
		t.Logf("send %d ended %s %s", k, last.State, last.Reason)
	}
	// A send retried under its op_id after all that is answered with what became of it.
	res, err := cb.Send(ctx, id, api.Message{Op: sends[0].op, Text: "behind it 0", Queue: true})
	if err != nil || !res.Replayed || res.MessageID != sends[0].msg {
		t.Fatalf("send 0 retried: %+v %v; want message %s replayed", res, err, sends[0].msg)
	}
}

func TestServeAdvertiseURL(t *testing.T) {
	for _, c := range []struct{ flag, addr, want string }{
		{"", "127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"", "[::1]:8080", "http://[::1]:8080"},
		{"", "0.0.0.0:8080", ""},
		{"", "[::]:8080", ""},
		{"http://rein-2.internal:8080", "0.0.0.0:8080", "http://rein-2.internal:8080"},
		{"https://rein-2.internal/", "0.0.0.0:8080", "https://rein-2.internal"},
		{"rein-2:8080", "0.0.0.0:8080", "error"},
		{"http://rein-2:8080/api", "0.0.0.0:8080", "error"},
		{"ftp://rein-2:8080", "0.0.0.0:8080", "error"},
	} {
		got, err := advertiseURL(c.flag, c.addr)
		if err != nil {
			if c.want != "error" || !strings.Contains(err.Error(), "--advertise") {
				t.Errorf("advertiseURL(%q, %q): %v, want %q", c.flag, c.addr, err, c.want)
			}
			continue
		}
		if got != c.want {
			t.Errorf("advertiseURL(%q, %q) = %q, want %q", c.flag, c.addr, got, c.want)
		}
	}
}

// storeRecords reads a conversation's records from the store.
func storeRecords(t *testing.T, url, id string) []record.Record {
	t.Helper()
	st, err := pgstore.Open(context.Background(), url, pgstore.Options{Name: "reader", NoRenew: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.Records(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
