package agent

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// arrival is harness-authored news waiting in an agent's inbox: a child agent's reply. It reaches
// the model as an import record (source "child") — never as the person's prompt or steering — at
// the next turn boundary of the running exchange, or, when the agent is idle, as the opening of an
// exchange of its own once the agent's owner revives it (BeginArrivals).
type arrival struct {
	child string // the child's session id
	run   int    // which of the child's runs ended with it
	text  string // the message, opening with its [rein: …] line
}

// OnArrival sets fn to be called each time an arrival comes to wait in the inbox, outside every
// lock of the agent and its children: the agent's owner revives an idle agent on it (the host
// starts an exchange; a parent's agents door runs its child again). fn must not wait for the
// agent's children.
func (a *Agent) OnArrival(fn func()) {
	a.mu.Lock()
	a.onArrival = fn
	a.mu.Unlock()
}

// Arrivals returns how many arrivals wait in the inbox, not yet committed.
func (a *Agent) Arrivals() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.inbox)
}

// deliver puts an arrival in the inbox and wakes an exchange waiting for its children. The caller
// calls announce once it holds no lock.
func (a *Agent) deliver(x arrival) {
	a.mu.Lock()
	a.inbox = append(a.inbox, x)
	a.pokeLocked()
	a.mu.Unlock()
}

// announce tells the agent's owner that an arrival waits.
func (a *Agent) announce() {
	a.mu.Lock()
	fn := a.onArrival
	a.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// drop takes back the arrival of one run of a child while it is still waiting: the model has read
// that reply already, in the answer of a wait, a read or a cancel.
func (a *Agent) drop(child string, run int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	kept := a.inbox[:0]
	for _, x := range a.inbox {
		if x.child != child || x.run != run {
			kept = append(kept, x)
		}
	}
	clear(a.inbox[len(kept):])
	a.inbox = kept
}

func (a *Agent) takeArrivals() []arrival { return drain(&a.mu, &a.inbox) }

// wakeup returns a channel closed at the next arrival or change in the agent's children.
func (a *Agent) wakeup() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.woke == nil {
		a.woke = make(chan struct{})
	}
	return a.woke
}

// poke wakes whoever waits on the agent's children.
func (a *Agent) poke() {
	a.mu.Lock()
	a.pokeLocked()
	a.mu.Unlock()
}

func (a *Agent) pokeLocked() {
	if a.woke != nil {
		close(a.woke)
		a.woke = nil
	}
}

// imports are the records that commit arrivals, each a turn of its own from next on.
func imports(xs []arrival, next int64) []record.Payload {
	ps := make([]record.Payload, 0, len(xs))
	for i, x := range xs {
		ps = append(ps, &record.Import{Turn: next + int64(i), Source: "child", Child: x.child,
			Message: record.Message{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: x.text}}}})
	}
	return ps
}

// BeginArrivals opens an exchange on the arrivals waiting in the inbox, committed as imports
// (after settling anything a previous exchange left owed, and the system prompt if it changed),
// and reports whether there were any. It is Begin for harness-authored news: a host calls it under
// its conversation's lock to revive an idle conversation. Continue must follow a true answer.
func (a *Agent) BeginArrivals() (bool, error) {
	xs := a.takeArrivals()
	if len(xs) == 0 {
		return false, nil
	}
	if err := a.settle(); err != nil {
		return true, err
	}
	return true, a.sess.Append(imports(xs, a.sess.Snapshot().Next())...)
}

// TakeUpArrivals runs an exchange on the arrivals waiting in the inbox, and reports whether there
// were any (with none it does nothing). Like TakeUp, it returns once a fresh prompt is admissible.
func (a *Agent) TakeUpArrivals(ctx context.Context) (Outcome, bool) {
	ok, err := a.BeginArrivals()
	if !ok {
		return Outcome{}, false
	}
	if err != nil {
		return Outcome{Reason: fold.Aborted, Err: err}, true
	}
	return a.Continue(ctx), true
}

// RecordArrivals commits the arrivals waiting in the inbox without taking them up — imports, then
// a quiesced event with reason — so that nothing a child said is lost when no exchange will take
// it up: after a Stop, or when the agent is put away. Call it only while no exchange runs.
func (a *Agent) RecordArrivals(reason string) error {
	xs := a.takeArrivals()
	if len(xs) == 0 {
		return nil
	}
	if !a.sess.Snapshot().IsReady() {
		if err := a.quiesce(reason); err != nil {
			return err
		}
	}
	if err := a.sess.Append(imports(xs, a.sess.Snapshot().Next())...); err != nil {
		return err
	}
	return a.quiesce(reason)
}

// await keeps an exchange whose model has replied open while the agent's children work, when the
// agent awaits them (Config.AwaitChildren): it waits until a child's reply arrives, commits it as
// an import and answers true (the exchange goes on), or until no child is running (false: the
// exchange ends replied). A Stop ends the wait (false; the caller sees ctx).
func (a *Agent) await(ctx context.Context) (bool, error) {
	kids := a.Children()
	if !a.cfg.AwaitChildren || kids == nil {
		return false, nil
	}
	said := 0
	for {
		woke := a.wakeup()
		if xs := a.takeArrivals(); len(xs) > 0 {
			return true, a.sess.Append(imports(xs, a.sess.Snapshot().Next())...)
		}
		n := kids.Running()
		if n == 0 {
			return false, nil
		}
		if n != said {
			said = n
			a.sess.Publish(session.Live{Kind: "status", Text: waitingFor(n)})
		}
		select {
		case <-woke:
		case <-ctx.Done():
			return false, nil
		}
	}
}

func waitingFor(n int) string {
	if n == 1 {
		return "waiting for 1 child agent"
	}
	return "waiting for " + strconv.Itoa(n) + " child agents"
}

// arrivalText is what a child's ending says to its parent: a [rein: …] line naming the child and
// how it ended, then its reply (clipped; the agents tool's read gives all of it).
func arrivalText(id string, out Outcome, reply string) string {
	var b strings.Builder
	b.WriteString("[rein: child agent " + id + " finished (" + stateWord(out.Reason))
	if out.Err != nil && !errors.Is(out.Err, context.Canceled) {
		b.WriteString(": " + firstLine(out.Err.Error()))
	}
	b.WriteString(")")
	if reply == "" {
		b.WriteString(" without a reply.]")
		return b.String()
	}
	if out.Reason == fold.Replied {
		b.WriteString(". Its reply:]\n")
	} else {
		b.WriteString(". Its last reply:]\n")
	}
	b.WriteString(clipText(reply, maxReply))
	if len(reply) > maxReply {
		b.WriteString("\n[rein: the reply was clipped at " + strconv.Itoa(maxReply/1024) + ` KiB; {"op":"read","id":"` + id + `"} gives all of it]`)
	}
	return b.String()
}

// maxReply bounds the reply an import carries.
const maxReply = 16 << 10

// stateWord names how a child's run ended, for the model.
func stateWord(reason string) string {
	switch reason {
	case fold.Aborted:
		return "failed"
	case "":
		return "running"
	}
	return reason // replied, cancelled, limit
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
