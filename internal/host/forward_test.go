package host_test

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/store/pgtest"
)

// Mutations reach the owner (forward.go): a client that only ever talks to a host that does not
// own the conversation is served as if it talked to the owner.

// TestSharedMutationsReachTheOwner: a owns the conversation; a client of b alone sends and reads
// the answer, renames, Stops a running turn, answers an approval, forks, and every change is made
// by a (b never opens the session). A create through b is owned by b, and a client of a alone
// reaches it the same way.
func TestSharedMutationsReachTheOwner(t *testing.T) {
	pgtest.Need(t, pg)
	url := pg.Database(t)
	script := steps(`{"text":"the first answer"}`, slowText("", 400, 50), `{"text":"after the stop"}`,
		`{"tool_calls":[{"name":"bash","arguments":{"command":"echo ran-after-approval"}}]}`, `{"text":"done"}`)
	a := sharedRig(t, url, "host-a", rigOptions{script: script, bash: true, ask: true})
	b := sharedRig(t, url, "host-b", rigOptions{})
	id := a.create("owned by a")
	if _, held := a.st.Holds(id); !held {
		t.Fatal("a does not hold the conversation it created")
	}
	w := b.events(id, 0)

	// A send through b is accepted by a, and answered; b's client reads the answer from the rows.
	msg := api.Message{Op: client.NewOp(), Text: "hello through b"}
	sent, err := b.c.Send(ctxT(t), id, msg)
	if err != nil {
		t.Fatalf("send through b: %v", err)
	}
	w.until("the first answer", func(e api.Event) bool {
		return e.Kind == string(record.KindAssistantMessage) && strings.Contains(string(e.Payload), "the first answer")
	})
	if _, held := a.st.Holds(id); !held {
		t.Fatal("a let the conversation go")
	}
	w.idle()
	// The same op again through b replays a's answer.
	again, err := b.c.Send(ctxT(t), id, msg)
	if err != nil || !again.Replayed || again.MessageID != sent.MessageID {
		t.Fatalf("the send retried through b: %+v (%v), want message %s replayed", again, err, sent.MessageID)
	}

	// A rename through b.
	if v, err := b.c.Rename(ctxT(t), id, client.NewOp(), "renamed through b"); err != nil || v.Title != "renamed through b" {
		t.Fatalf("rename through b: %+v %v", v.Title, err)
	}

	// A running turn Stopped through b.
	b.send(id, "a slow one")
	w.until("the slow turn delivered", func(e api.Event) bool {
		return e.Kind == string(record.KindUserPrompt) && strings.Contains(string(e.Payload), "a slow one")
	})
	// Stopped once its slow reply is under way: a Stop before the request reached the simulator
	// would leave the slow step to answer the next message.
	for deadline := time.Now().Add(time.Minute); a.requestsWith("a slow one") == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the slow turn's request never reached the simulator")
		}
	}
	pressed := time.Now()
	res, err := b.c.Stop(ctxT(t), id, 0)
	if err != nil || !res.Stopped {
		t.Fatalf("stop through b: %+v %v", res, err)
	}
	w.idle()
	t.Logf("a Stop through b: the conversation idle %v after it was pressed", time.Since(pressed))
	b.send(id, "go on")
	w.until("the answer after the stop", func(e api.Event) bool {
		return e.Kind == string(record.KindAssistantMessage) && strings.Contains(string(e.Payload), "after the stop")
	})
	w.idle()

	// An approval asked on a, answered through b.
	b.send(id, "run it")
	asked := w.until("an approval asked", func(e api.Event) bool { return e.Kind == string(record.KindApproval) })
	var callID string
	if len(asked.State.Approvals) == 1 {
		callID = asked.State.Approvals[0].CallID
	}
	if ar, err := b.c.Approve(ctxT(t), id, client.NewOp(), callID, true); err != nil || ar.State != record.ApprovalAllowed {
		t.Fatalf("approve through b: %+v %v", ar, err)
	}
	w.idle()
	got := lastResult(t, checkRows(t, url, id, true))
	if got.Outcome != record.OK || !strings.Contains(got.Content, "ran-after-approval") {
		t.Fatalf("the approved call's result %+v", got)
	}

	// The transcript through b is a's.
	if tr, err := b.c.Transcript(ctxT(t), id); err != nil || len(tr.Messages) == 0 {
		t.Fatalf("the transcript through b: %d messages, %v", len(tr.Messages), err)
	}

	// A fork through b is made by a, the parent's owner.
	fork, _, err := b.c.Fork(ctxT(t), id, client.NewOp(), 0)
	if err != nil {
		t.Fatalf("fork through b: %v", err)
	}
	if _, held := a.st.Holds(fork.ID); !held {
		t.Fatalf("the fork %s was not made by a", fork.ID)
	}
	if st := b.h.Stats(); st.Open != 0 {
		t.Fatalf("b opened %d sessions; every change was a's to make", st.Open)
	}

	// The other way round: made through b, reached through a.
	mine := b.create("owned by b")
	a.send(mine, "hello through a")
	b.settle(mine)
	if st := a.h.Stats(); st.Open != 2 {
		t.Fatalf("a has %d sessions open, want its own two", st.Open)
	}
	checkRows(t, url, mine, true)
}

// TestSharedForwardedRequestIsNeverForwardedAgain: a request that says it was forwarded is served
// or refused by the host it reached, never handed on, so two hosts that each think the other owns
// a conversation cannot pass a request between them.
func TestSharedForwardedRequestIsNeverForwardedAgain(t *testing.T) {
	pgtest.Need(t, pg)
	url := pg.Database(t)
	a := sharedRig(t, url, "host-a", rigOptions{})
	b := sharedRig(t, url, "host-b", rigOptions{})
	id := a.create("owned by a")
	body := fmt.Sprintf(`{"op_id":%q,"text":"forwarded once already"}`, client.NewOp())
	req, err := http.NewRequestWithContext(ctxT(t), "POST", b.srv.URL+"/api/conversations/"+id+"/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(host.ForwardedHeader, "host-c")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || resp.Header.Get(host.ServedByHeader) != "host-b" {
		t.Fatalf("a forwarded request to the non-owner: %d, served by %q; want 409 from host-b", resp.StatusCode, resp.Header.Get(host.ServedByHeader))
	}
	// Unmarked, the same request is handed on, and a answers it.
	req, _ = http.NewRequestWithContext(ctxT(t), "POST", b.srv.URL+"/api/conversations/"+id+"/messages", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || resp.Header.Get(host.ServedByHeader) != "host-a" {
		t.Fatalf("the request to the non-owner: %d, served by %q; want 202 from host-a", resp.StatusCode, resp.Header.Get(host.ServedByHeader))
	}
	a.settle(id)
}

// TestSharedOwnerGoneWhileForwarding: the owner dies with its lease live. A send through b finds
// no one to hand it to: it is refused not_owner, naming the owner, saying it did not answer, with
// a Retry-After to when its lease ends. Once the lease has lapsed, the same send through b is
// taken by b (a takeover): accepted once, and answered.
func TestSharedOwnerGoneWhileForwarding(t *testing.T) {
	pgtest.Need(t, pg)
	url := pg.Database(t)
	a := sharedRig(t, url, "host-a", rigOptions{quiet: true})
	b := sharedRig(t, url, "host-b", rigOptions{quiet: true})
	id := a.create("owner gone")
	a.send(id, "before")
	a.settle(id)
	a.die()
	msg := api.Message{Op: client.NewOp(), Text: "after the owner died"}
	_, err := b.c.Send(ctxT(t), id, msg)
	var refusal *api.Error
	if !errors.As(err, &refusal) || refusal.Code != api.NotOwner || !strings.Contains(refusal.Message, "host-a") ||
		!strings.Contains(refusal.Message, "did not answer") || refusal.RetryAfter <= 0 {
		t.Fatalf("a send while the owner is gone: %v, want not_owner naming host-a, saying it did not answer, with a Retry-After", err)
	}
	lapse(t, url, id)
	res, err := b.c.Send(ctxT(t), id, msg)
	if err != nil {
		t.Fatalf("the send retried once the lease lapsed: %v", err)
	}
	b.settle(id)
	recs := checkRows(t, url, id, true)
	if s := submission(recs, res.MessageID); s == nil || s.State != record.SubmissionAnswered {
		t.Fatalf("the retried send ended %+v, want answered", s)
	}
}

// TestSharedCreateRace: hosts creating under one operation id at the same instant make one
// conversation, and every create is answered with it (rapid draws how many hosts and creates;
// the seed is printed on failure).
func TestSharedCreateRace(t *testing.T) {
	pgtest.Need(t, pg)
	url := pg.Database(t)
	var hosts []*rig
	for _, name := range []string{"host-a", "host-b", "host-c"} {
		hosts = append(hosts, sharedRig(t, url, name, rigOptions{quiet: true, caps: caps{createRate: 1e6, createBurst: 1000}}))
	}
	rapid.Check(t, func(rt *rapid.T) {
		op := client.NewOp()
		n := rapid.IntRange(2, 6).Draw(rt, "creates")
		at := make([]int, n)
		for i := range at {
			at[i] = rapid.IntRange(0, len(hosts)-1).Draw(rt, fmt.Sprintf("host%d", i))
		}
		start := make(chan struct{})
		ids := make([]string, n)
		errs := make([]error, n)
		created := 0
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				v, replayed, err := hosts[at[i]].c.Create(ctxT(t), op, "raced")
				ids[i], errs[i] = v.ID, err
				if err == nil && !replayed {
					mu.Lock()
					created++
					mu.Unlock()
				}
			}()
		}
		close(start)
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				rt.Fatalf("create %d on host %d: %v", i, at[i], errs[i])
			}
			if ids[i] != ids[0] {
				rt.Fatalf("creates under one op answered conversations %v", ids)
			}
		}
		if created != 1 {
			rt.Fatalf("%d creates answered created, want 1", created)
		}
		vs, err := hosts[0].c.List(ctxT(t))
		if err != nil {
			rt.Fatal(err)
		}
		same := 0
		for _, v := range vs {
			if v.Title == "raced" && v.ID != ids[0] {
				same++
			}
		}
		if same != 0 {
			rt.Fatalf("%d more conversations titled raced", same)
		}
		// The conversation made is whole: its record is admissible and a send is answered.
		hosts[at[0]].send(ids[0], "hello")
		for _, h := range hosts {
			if c, err := h.h.Get(ids[0]); err == nil {
				c.Wait(ctxT(t))
			}
		}
		checkRows(t, url, ids[0], true)
		for _, h := range hosts {
			if err := h.h.Rest(); err != nil {
				rt.Fatal(err)
			}
		}
		// Then renamed, so that the next check's list tells its conversation from this one.
		if _, err := hosts[0].c.Rename(ctxT(t), ids[0], client.NewOp(), "done"); err != nil {
			rt.Fatal(err)
		}
	})
}

// TestSharedForkOfARestingConversation: a conversation a made and let rest is forked through b,
// which writes its copy out from the rows first — it never had one, and later a stale one — so the
// fork inherits everything the rows hold, and any host can open the fork.
func TestSharedForkOfARestingConversation(t *testing.T) {
	pgtest.Need(t, pg)
	url := pg.Database(t)
	a := sharedRig(t, url, "host-a", rigOptions{})
	b := sharedRig(t, url, "host-b", rigOptions{})
	id := a.create("parent")
	a.send(id, "one")
	a.settle(id)
	if err := a.h.Rest(); err != nil {
		t.Fatal(err)
	}
	inherits := func(fork string, want ...string) {
		t.Helper()
		recs := checkRows(t, url, fork, true)
		inh, ok := lastOf[*record.Inherited](recs)
		if !ok {
			t.Fatalf("fork %s has no inherited record", fork)
		}
		text := mustJSON(inh)
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Fatalf("fork %s does not inherit %q: %s", fork, w, text)
			}
		}
	}
	first, _, err := b.c.Fork(ctxT(t), id, client.NewOp(), 0)
	if err != nil {
		t.Fatalf("fork through b: %v", err)
	}
	inherits(first.ID, "one")
	// a takes the parent up again and adds to it: b's copy is stale.
	a.send(id, "two")
	a.settle(id)
	if err := a.h.Rest(); err != nil {
		t.Fatal(err)
	}
	second, _, err := b.c.Fork(ctxT(t), id, client.NewOp(), 0)
	if err != nil {
		t.Fatalf("the second fork through b: %v", err)
	}
	inherits(second.ID, "one", "two")
	// The fork is a conversation of the store: a opens it and answers.
	if err := b.h.Rest(); err != nil {
		t.Fatal(err)
	}
	a.send(second.ID, "three")
	a.settle(second.ID)
	checkRows(t, url, second.ID, true)
}

// TestSharedInheritedTurnsReadBackOnAnyHost: a fork made on a names the turns it inherited by
// pointers into a's copy of the parent. b reads them back — to fork the fork — from the parent's
// rows, and again, from rows its copy of them does not reach yet, once the parent has grown and
// been forked anew; and still once a is gone, state directory and all.
func TestSharedInheritedTurnsReadBackOnAnyHost(t *testing.T) {
	pgtest.Need(t, pg)
	url := pg.Database(t)
	a := sharedRig(t, url, "host-a", rigOptions{quiet: true})
	b := sharedRig(t, url, "host-b", rigOptions{})
	id := a.create("parent")
	a.send(id, "one")
	a.settle(id)
	a.send(id, "two")
	a.settle(id)
	// A fork on a whose turns up to turn leave its context: only their pointers into a's copy of
	// the parent say them.
	forkEvicted := func(turn int64) string {
		t.Helper()
		fork, _, err := a.c.Fork(ctxT(t), id, client.NewOp(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.c.Evict(ctxT(t), fork.ID, client.NewOp(), 1, turn, "gone"); err != nil {
			t.Fatal(err)
		}
		if err := a.h.Rest(); err != nil {
			t.Fatal(err)
		}
		return fork.ID
	}
	inherits := func(fork string, want string) {
		t.Helper()
		recs := checkRows(t, url, fork, true)
		inh, ok := lastOf[*record.Inherited](recs)
		if !ok || !strings.Contains(mustJSON(inh), want) {
			t.Fatalf("fork %s inherits %s, want %q", fork, mustJSON(inh), want)
		}
	}
	first := forkEvicted(2)
	grand, _, err := b.c.Fork(ctxT(t), first, client.NewOp(), 0)
	if err != nil {
		t.Fatalf("fork of the fork on b: %v", err)
	}
	inherits(grand.ID, "two")
	// The parent grows on a, and a new fork points past b's copy of it.
	a.send(id, "three")
	a.settle(id)
	second := forkEvicted(6)
	if err := b.h.Rest(); err != nil {
		t.Fatal(err)
	}
	root := a.root
	a.die()
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	grand, _, err = b.c.Fork(ctxT(t), second, client.NewOp(), 0)
	if err != nil {
		t.Fatalf("fork of the second fork on b, a gone: %v", err)
	}
	inherits(grand.ID, "three")
	b.send(grand.ID, "four")
	b.settle(grand.ID)
	checkRows(t, url, grand.ID, true)
}

// TestSharedPointersIntoAStaleCopy: b forks a parent whose copy on b is older than its rows (a
// wrote to it since b let it go). The fork's pointers name b's own path of the parent; reading
// them back on b — to fork the fork, its turns out of context — reads the rows, not that stale
// copy.
func TestSharedPointersIntoAStaleCopy(t *testing.T) {
	pgtest.Need(t, pg)
	url := pg.Database(t)
	a := sharedRig(t, url, "host-a", rigOptions{})
	b := sharedRig(t, url, "host-b", rigOptions{})
	id := a.create("parent")
	a.send(id, "one")
	a.settle(id)
	rest := func(hosts ...*rig) {
		t.Helper()
		for _, h := range hosts {
			if err := h.h.Rest(); err != nil {
				t.Fatal(err)
			}
		}
	}
	rest(a)
	b.send(id, "two")
	b.settle(id)
	rest(b)
	a.send(id, "three")
	a.settle(id)
	rest(a)
	fork, _, err := b.c.Fork(ctxT(t), id, client.NewOp(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.c.Evict(ctxT(t), fork.ID, client.NewOp(), 1, 6, "gone"); err != nil {
		t.Fatal(err)
	}
	grand, _, err := b.c.Fork(ctxT(t), fork.ID, client.NewOp(), 0)
	if err != nil {
		t.Fatalf("fork of the fork on b: %v", err)
	}
	recs := checkRows(t, url, grand.ID, true)
	if inh, ok := lastOf[*record.Inherited](recs); !ok || !strings.Contains(mustJSON(inh), "three") {
		t.Fatalf("the fork of the fork inherits %s", mustJSON(inh))
	}
}
