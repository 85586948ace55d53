package host

import (
	"context"
	"fmt"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
)

// A conversation's agent may start child agents (the agents tool). They run beside it with their
// own sessions; the host keeps the conversation's session open while any works or its reply waits,
// and a child's reply that arrives while the conversation is idle starts a new exchange on it: an
// import record in the harness's voice, shown in the conversation like any record, Working while
// it runs, and ended by the conversation's Stop like any exchange. A reply that arrives while an
// exchange runs is delivered at its next turn boundary, or taken up when it ends; after a Stop it
// is recorded without waking the agent. Closing the conversation, or the host, stops its children.

// wireChildren hooks the conversation's revival onto ag's arrivals.
func (c *Conv) wireChildren(ag *agent.Agent) {
	ag.OnArrival(func() { c.arrived(ag) })
}

// arrived is ag's arrival hook: a child's reply waits in its inbox. It runs on the child's
// goroutine, holding no lock of the agent's.
func (c *Conv) arrived(ag *agent.Agent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ag != ag || c.ex != nil || c.h.ctx.Err() != nil {
		return // a put-away agent; or the running exchange takes it (its boundary, or finish)
	}
	if c.sess.Snapshot().Meta().Closed {
		return
	}
	c.last = c.h.cfg.Now()
	c.reviveLocked()
	if err := c.indexLocked(); err != nil {
		fmt.Fprintf(c.h.cfg.Log, "rein serve: conversation %s: %v\n", c.id, err)
	}
	c.restLocked()
}

// reviveLocked starts an exchange on the children's replies waiting in the agent's inbox, if any.
// Called with c.mu held and no exchange running.
func (c *Conv) reviveLocked() {
	ctx, cancel := context.WithCancel(c.h.ctx)
	ex := &exchange{cancel: cancel, done: make(chan struct{})}
	ag := c.ag
	// Committed here, under the conversation's lock, as Begin is: a Stop finds the exchange
	// either not yet begun or running.
	ok, err := ag.BeginArrivals()
	if !ok || err != nil {
		cancel()
		if err != nil {
			fmt.Fprintf(c.h.cfg.Log, "rein serve: conversation %s: %v\n", c.id, err)
		}
		return
	}
	c.ex = ex
	c.launch(ctx, ex, ag)
}

// afterExchangeLocked takes up the children's replies that waited for the exchange to end: in a
// new exchange, unless a person's message already started one (its first boundary delivers them),
// or a Stop interrupted the exchange that ended (fold.State.Stopped), in which case they are
// recorded (imports, quiesced cancelled) and the agent stays idle.
func (c *Conv) afterExchangeLocked() {
	if c.ex != nil || c.ag.Arrivals() == 0 {
		return
	}
	if c.sess.Snapshot().Stopped() {
		if err := c.ag.RecordArrivals(fold.Cancelled); err != nil {
			fmt.Fprintf(c.h.cfg.Log, "rein serve: conversation %s: %v\n", c.id, err)
		}
		return
	}
	c.reviveLocked()
}

// childrenBusyLocked reports whether a child agent of the conversation works, or its reply waits.
func (c *Conv) childrenBusyLocked() bool {
	if c.ag == nil {
		return false
	}
	kids := c.ag.Children()
	return kids != nil && kids.Running() > 0 || c.ag.Arrivals() > 0
}

// stopChildrenLocked stops the conversation's child agents (each quiesces, cancelled), as closing
// the conversation does.
func (c *Conv) stopChildrenLocked() {
	if c.ag == nil {
		return
	}
	if kids := c.ag.Children(); kids != nil {
		kids.Stop()
	}
}

// closeChildrenLocked stops and closes the children before the conversation's session closes,
// and records the replies still waiting. Called with no exchange running.
func (c *Conv) closeChildrenLocked() error {
	if c.ag == nil {
		return nil
	}
	return c.ag.CloseChildren(fold.Cancelled)
}
