package host_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// kin gives a rig's conversations the agents tool. Each child is a session beside its parent's
// (so the rig's end checks replay it too) talking to the same simulator; its requests wait until
// the test lets the children answer. The parent's requests can be held one by one as well.
type kin struct {
	t       testing.TB
	answer  chan struct{} // closed: children may send their requests
	mu      sync.Mutex
	parent  *agent.Agent // the agent that started the first child
	kids    []*session.Session
	sends   int                   // the parent agents' requests so far
	holdAt  int                   // hold the parent's request with this number (from 1) …
	holding chan struct{}         // … until this closes
	held    chan struct{}         // closed once that request is held
	spawned chan *session.Session // each child's session as it starts
}

func newKin(t testing.TB) *kin {
	return &kin{t: t, answer: make(chan struct{}), spawned: make(chan *session.Session, 16)}
}

// configure is the rig's agent option.
func (k *kin) configure(cfg *agent.Config) {
	inner := cfg.Client
	cfg.Client = &heldWire{Model: inner, before: func(ctx context.Context) error {
		k.mu.Lock()
		k.sends++
		hold := k.holdAt == k.sends
		held, holding := k.held, k.holding
		k.mu.Unlock()
		if !hold {
			return nil
		}
		close(held)
		select {
		case <-holding:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	cfg.Doors = append(agent.Doors(), &agent.Children{Spawn: k.spawn})
}

// hold holds the parent's request number n until release is called; held is closed when it is.
func (k *kin) hold(n int) (held <-chan struct{}, release func()) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.holdAt, k.held, k.holding = n, make(chan struct{}), make(chan struct{})
	return k.held, func() { close(k.holding) }
}

func (k *kin) spawn(parent *agent.Agent, inherit bool) (*agent.Agent, error) {
	ps := parent.Session()
	id := session.NewID(time.Now())
	sess, err := session.Create(filepath.Join(filepath.Dir(filepath.Dir(ps.Path())), id), session.Options{}, &record.SessionStarted{
		Session: id, Provider: "sim", Model: "sim-1", ContextWindow: 200_000, Version: "test", Parent: ps.ID(),
	})
	if err != nil {
		return nil, err
	}
	cfg := parent.Config()
	cfg.Session, cfg.AwaitChildren = sess, true
	cfg.Client = &heldWire{Model: cfg.Client.(*heldWire).Model, before: func(ctx context.Context) error {
		select {
		case <-k.answer:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	cfg.Doors = agent.Doors()
	k.mu.Lock()
	if k.parent == nil {
		k.parent = parent
	}
	k.kids = append(k.kids, sess)
	k.mu.Unlock()
	k.spawned <- sess
	return agent.New(cfg), nil
}

// child waits for the next child to start and returns its session.
func (k *kin) child() *session.Session {
	k.t.Helper()
	select {
	case s := <-k.spawned:
		return s
	case <-time.After(20 * time.Second):
		k.t.Fatal("no child started within 20s")
		return nil
	}
}

// heldWire wraps a client: it calls before ahead of each Send; an error from it ends the Send as a
// Stop would.
type heldWire struct {
	provider.Model
	before func(ctx context.Context) error
}

func (w *heldWire) Send(ctx context.Context, b []byte, on func(provider.Event)) (provider.Reply, error) {
	if err := w.before(ctx); err != nil {
		return provider.Reply{}, &provider.Error{Class: provider.Cancelled, Message: err.Error(), Err: err}
	}
	return w.Model.Send(ctx, b, on)
}

func protocolKinds(recs []record.Record) []string {
	var out []string
	for _, r := range recs {
		if r.Class() == record.Protocol && r.Kind() != record.KindSystem {
			out = append(out, string(r.Kind()))
		}
	}
	return out
}

func quiescedReasons(recs []record.Record) []string {
	var out []string
	for _, r := range recs {
		if q, ok := r.Body.(*record.Quiesced); ok {
			out = append(out, q.Reason)
		}
	}
	return out
}

const kinScript = `[
	{"conversation":"hello kids","text":"Starting a helper.","tool_calls":[{"name":"agents","arguments":{"op":"start","prompt":"the sub task","inherit":false}}]},
	{"conversation":"hello kids","text":"Started; I will tell you."},
	{"conversation":"the sub task","text":"Sub task done."},
	%s
]`

// TestChildReplyRevivesConversation: a child's reply that arrives while its parent conversation is
// idle starts a new exchange on it — an import in the harness's voice, not a prompt — which the
// conversation shows and counts as working; while the child works the conversation does not rest.
func TestChildReplyRevivesConversation(t *testing.T) {
	k := newKin(t)
	r := newRig(t, rigOptions{agent: k.configure, script: fmt.Sprintf(kinScript, `{"conversation":"hello kids","text":"The helper says: Sub task done."}`)})
	id := r.create("kids")
	w := r.events(id, 0)
	sent := r.send(id, "hello kids")
	kid := k.child()
	w.idle()
	// The child works: the conversation keeps its session (and the child's) open.
	if err := r.h.Rest(); err != nil {
		t.Fatal(err)
	}
	if st := r.h.Stats(); st.Open != 1 {
		t.Errorf("after Rest %d conversations are open, want the parent's: its child still works", st.Open)
	}

	close(k.answer)
	imp := w.record(record.KindImport)
	if !imp.State.Working {
		t.Errorf("the revived exchange is not working: %+v", imp.State)
	}
	w.idle()
	recs := r.records(id)
	if got, want := protocolKinds(recs), []string{"user_prompt", "assistant_message", "tool_results", "assistant_message",
		"import", "assistant_message"}; !slices.Equal(got, want) {
		t.Fatalf("protocol records\n got %v\nwant %v", got, want)
	}
	if got := quiescedReasons(recs); !slices.Equal(got, []string{fold.Replied, fold.Replied}) {
		t.Errorf("quiesced %v, want two exchanges replied", got)
	}
	im, _ := lastOf[*record.Import](recs)
	if im.Source != "child" || im.Child != kid.ID() || im.Message.Role != record.User ||
		im.Message.Parts[0].Text != "[rein: child agent "+kid.ID()+" finished (replied). Its reply:]\nSub task done." {
		t.Errorf("the import is %+v", im)
	}
	if s := submission(recs, sent.MessageID); s == nil || s.State != "answered" {
		t.Errorf("the person's message ended %+v", s)
	}
	if n := r.requestsWith("Sub task done."); n != 1 {
		t.Errorf("%d requests carried the child's reply, want 1", n)
	}
}

// TestStopEndsRevivedExchange: the parent conversation's Stop ends an exchange a child's reply
// started, as it ends any other; the session then takes the person's next message.
func TestStopEndsRevivedExchange(t *testing.T) {
	k := newKin(t)
	r := newRig(t, rigOptions{agent: k.configure, script: fmt.Sprintf(kinScript, slowText("hello kids", 100, 300)+`,{"conversation":"hello kids","text":"Back."}`)})
	id := r.create("kids")
	w := r.events(id, 0)
	r.send(id, "hello kids")
	k.child()
	w.until("the first exchange's end", func(e api.Event) bool { return e.Kind == string(record.KindQuiesced) })
	close(k.answer)
	w.record(record.KindImport)
	w.live("text") // the revived exchange streams
	start := time.Now()
	res := r.stop(id)
	if !res.Stopped || !res.Interrupted {
		t.Fatalf("Stop answered %+v, want the revived exchange interrupted", res)
	}
	w.idle()
	t.Logf("Stop of a revived exchange: not working %s after the press", time.Since(start).Round(time.Microsecond))
	recs := r.records(id)
	if got := quiescedReasons(recs); !slices.Equal(got, []string{fold.Replied, fold.Cancelled}) {
		t.Errorf("quiesced %v, want the revived exchange cancelled", got)
	}
	r.send(id, "and now?")
	w.idle()
	if got := quiescedReasons(r.records(id)); len(got) != 3 || got[2] != fold.Replied {
		t.Errorf("after the Stop the next message ended %v", got)
	}
}

// TestChildReplyAfterLastBoundary: a reply that arrives while the parent's exchange runs but after
// its last turn boundary (its final request is already on the wire) is taken up when the exchange
// ends, in a new exchange — never dropped.
func TestChildReplyAfterLastBoundary(t *testing.T) {
	k := newKin(t)
	r := newRig(t, rigOptions{agent: k.configure, script: fmt.Sprintf(kinScript, `{"conversation":"hello kids","text":"The helper says: Sub task done."}`)})
	id := r.create("kids")
	held, release := k.hold(2) // the parent's second, final request
	w := r.events(id, 0)
	r.send(id, "hello kids")
	k.child()
	<-held
	close(k.answer)
	// The reply waits in the parent's inbox while its final request is held.
	deadline := time.Now().Add(20 * time.Second)
	for {
		k.mu.Lock()
		p := k.parent
		k.mu.Unlock()
		if p.Arrivals() == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child's reply did not reach the parent within 20s")
		}
		time.Sleep(time.Millisecond)
	}
	release()
	w.record(record.KindImport)
	w.idle()
	recs := r.records(id)
	if got, want := protocolKinds(recs), []string{"user_prompt", "assistant_message", "tool_results", "assistant_message",
		"import", "assistant_message"}; !slices.Equal(got, want) {
		t.Fatalf("protocol records\n got %v\nwant %v", got, want)
	}
	if got := quiescedReasons(recs); !slices.Equal(got, []string{fold.Replied, fold.Replied}) {
		t.Errorf("quiesced %v, want the exchange and the one the reply started", got)
	}
}

// TestHostCloseStopsChildren: closing the host stops a conversation's children: each child's
// record is settled, quiesced cancelled.
func TestHostCloseStopsChildren(t *testing.T) {
	k := newKin(t)
	r := newRig(t, rigOptions{agent: k.configure, script: fmt.Sprintf(kinScript, `{"conversation":"hello kids","text":"unused"}`)})
	id := r.create("kids")
	w := r.events(id, 0)
	r.send(id, "hello kids")
	kid := k.child()
	w.until("the first exchange's end", func(e api.Event) bool { return e.Kind == string(record.KindQuiesced) })
	r.close()
	st, _, err := session.Replay(nil, kid.Path())
	if err != nil {
		t.Fatal(err)
	}
	if st.InFlight() || !st.IsReady() {
		t.Errorf("the child's record is unsettled after the host closed: phase %s", st.Phase())
	}
	if got := quiescedReasons(records(t, kid.Path())); !slices.Equal(got, []string{fold.Cancelled}) {
		t.Errorf("the child quiesced %v, want cancelled", got)
	}
	for _, q := range r.sim.Requests() {
		if q.Conversation == "the sub task" {
			t.Errorf("the held child sent a request: %s", q.Body)
		}
	}
	r.open()
	if got := quiescedReasons(r.records(id)); !slices.Equal(got, []string{fold.Replied}) {
		t.Errorf("the parent quiesced %v after the host closed, want its one exchange", got)
	}
}
