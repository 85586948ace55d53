package host_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// writeElsewhere opens a conversation's record as another writer would (a rein run, another
// host): its own Session, holding the record's lock.
func (r *rig) writeElsewhere(id string) *session.Session {
	r.t.Helper()
	s, _, err := session.Open(r.path(id), session.Options{})
	if err != nil {
		r.t.Fatalf("open %s elsewhere: %v", id, err)
	}
	return s
}

// listed returns a conversation's view in the host's list.
func (r *rig) listed(id string) api.View {
	r.t.Helper()
	vs, err := r.c.List(ctxT(r.t))
	if err != nil {
		r.t.Fatalf("list: %v", err)
	}
	for _, v := range vs {
		if v.ID == id {
			return v
		}
	}
	r.t.Fatalf("conversation %s is not listed", id)
	return api.View{}
}

// refusedAsHeld checks that err is the host's "held" refusal naming this process (the other
// writer), with status 409.
func refusedAsHeld(t *testing.T, what string, err error) {
	t.Helper()
	var ce *api.Error
	if !errors.As(err, &ce) || ce.Code != "held" || ce.Status != 409 {
		t.Fatalf("%s of a held conversation = %v; want 409 held", what, err)
	}
	for _, want := range []string{fmt.Sprintf("pid %d", os.Getpid()), "one writer at a time", "rein chat --connect"} {
		if !strings.Contains(ce.Message, want) {
			t.Errorf("%s: the refusal %q does not say %q", what, ce.Message, want)
		}
	}
}

// TestHeldConversation: a conversation whose record another process writes is listed as held,
// naming that process, and every request that needs its session is refused with 409 "held" —
// never a 500, never a second writer. Once the other writer lets go the host reads what it wrote
// and carries on.
func TestHeldConversation(t *testing.T) {
	r := newRig(t, rigOptions{})
	id := r.create("shared")
	r.send(id, "hello")
	r.settle(id)
	if err := r.h.Rest(); err != nil {
		t.Fatal(err)
	}
	if v := r.listed(id); v.Held != nil {
		t.Fatalf("listed as held by %+v before anyone else held it", v.Held)
	}

	other := r.writeElsewhere(id)
	_, err := r.c.Send(ctxT(t), id, api.Message{Op: client.NewOp(), Text: "are you there?"})
	refusedAsHeld(t, "Send", err)
	_, err = r.c.Stop(ctxT(t), id, 0)
	refusedAsHeld(t, "Stop", err)
	v := r.listed(id)
	if v.Held == nil || v.Held.PID != os.Getpid() {
		t.Fatalf("listed with held %+v; want this process", v.Held)
	}
	if v := r.get(id); v.Held == nil {
		t.Error("Get does not say the conversation is held")
	}
	// A fork only reads its parent: it works while the parent is held.
	parent, err := r.h.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.h.Fork(parent, client.NewOp(), 0); err != nil {
		t.Errorf("fork of a held conversation: %v", err)
	}

	if err := other.Commit(&record.Renamed{Title: "renamed elsewhere"}); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	v = r.listed(id)
	if v.Held != nil || v.Title != "renamed elsewhere" {
		t.Fatalf("after the other writer closed: held %+v, title %q; want not held, its title", v.Held, v.Title)
	}
	r.send(id, "back again")
	r.settle(id)
}

// TestHostOpensBesideAHolder: a host started while another process holds a conversation — one it
// left mid-exchange — lists it as held instead of skipping it, and does not settle it under its
// writer's feet. When that process dies with the exchange in flight, the host settles it (reason
// crashed) the first time it opens it, and goes on.
func TestHostOpensBesideAHolder(t *testing.T) {
	r := newRig(t, rigOptions{})
	id := r.create("shared")
	r.send(id, "hello")
	r.settle(id)
	r.close()

	other := r.writeElsewhere(id)
	if err := other.Commit(&record.UserPrompt{Turn: other.Snapshot().Next(), Text: "working elsewhere"}, &record.TurnStarted{Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	r.open()
	v := r.listed(id)
	if v.Held == nil || !v.State.Working {
		t.Fatalf("listed with held %+v, working %v; want held, working (its exchange is in flight)", v.Held, v.State.Working)
	}
	_, err := r.c.Send(ctxT(t), id, api.Message{Op: client.NewOp(), Text: "are you there?"})
	refusedAsHeld(t, "Send", err)

	other.Close() // its process dies mid-exchange
	if v := r.listed(id); v.Held != nil {
		t.Fatalf("still listed as held by %+v", v.Held)
	}
	r.send(id, "take over")
	r.settle(id)
	recs := r.records(id)
	var crashed bool
	for _, rec := range recs {
		if q, ok := rec.Body.(*record.Quiesced); ok && q.Reason == fold.Crashed {
			crashed = true
		}
	}
	if !crashed {
		t.Errorf("the exchange the other writer left in flight was not settled as crashed: %v", kinds(recs))
	}
}
