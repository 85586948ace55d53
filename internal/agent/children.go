package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// Spawner makes a child agent of parent: a session of its own, linked to the parent's, whose first
// record inherits the parent's context when inherit is set (DESIGN §10). cmd/rein wires it. A child
// that may start children of its own carries its own Children among its doors; the parent's door
// hands it its limits and its count of running children.
type Spawner func(parent *Agent, inherit bool) (*Agent, error)

// Limits bound a session's child agents. Going past one is refused with a tool error the model
// reads, never dropped silently.
type Limits struct {
	// Running is the most child agents running at once, counted over the session's whole tree (its
	// children, their children, …); 0 means DefaultRunning.
	Running int
	// Total is the most child agents one session may start; 0 means DefaultTotal. The count lives
	// with the agent: a resumed session, or a conversation the host reopens, counts afresh.
	Total int
}

// The default limits.
const (
	DefaultRunning = 8
	DefaultTotal   = 32
)

func (l Limits) withDefaults() Limits {
	if l.Running <= 0 {
		l.Running = DefaultRunning
	}
	if l.Total <= 0 {
		l.Total = DefaultTotal
	}
	return l
}

// Children is the agents tool: it starts child agents that run concurrently, each with a session
// of its own and its own Stop (DESIGN §10).
//
// A child's reply reaches its parent as harness-authored text — an import record with source
// "child" and a [rein: child agent … finished (…)] line — at the parent's next turn boundary; a
// parent whose exchange has ended is revived on it by its owner (Agent.OnArrival). A reply the model
// has already read (a wait, a read, a cancel answered it) is not delivered again. A parent's Stop
// ends the parent's exchange, not its children; Stop and Close stop them.
type Children struct {
	Spawn  Spawner
	Limits Limits

	mu      sync.Mutex
	parent  *Agent
	kids    map[string]*child
	order   []string
	started int  // children this door has started
	halt    int  // Stops under way: nothing starts, runs again or is delivered
	closed  bool // Close was called: for good
	pool    *pool
	wg      sync.WaitGroup // one per running child
}

// pool counts the children running in one session's whole tree: every door of the tree shares it.
type pool struct {
	mu      sync.Mutex
	running int
}

func (p *pool) tryTake(limit int) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running >= limit {
		return p.running, false
	}
	p.running++
	return p.running, true
}

// take counts a run the limit does not apply to: a child run again on what reached it late.
func (p *pool) take() {
	p.mu.Lock()
	p.running++
	p.mu.Unlock()
}

func (p *pool) release() {
	p.mu.Lock()
	p.running--
	p.mu.Unlock()
}

// child is one child agent and its latest run.
type child struct {
	id      string
	prompt  string
	inherit bool
	ag      *Agent
	kids    *Children // the child's own agents door, if it has one

	busy   bool
	runs   int
	cancel context.CancelFunc
	done   chan struct{} // closed when the current run ends
	quiet  bool          // a cancel or a Stop ended this run: its ending is not delivered
	out    Outcome
	reply  string
}

// Spec describes the agents tool.
func (c *Children) Spec() provider.Tool {
	return provider.Tool{
		Name: "agents",
		Description: `Child agents that work in parallel, each in a session of its own. ` +
			`{"op":"start","prompt":"...","inherit":true|false} starts one (inherit: it begins with your context; false: empty) and answers its id; ` +
			`when it finishes, its reply comes to you as a [rein: child agent <id> finished (...)] message, even after you have ended your turn. ` +
			`{"op":"message","id":"...","text":"..."} tells a child more (or gives a finished one new work); {"op":"list"} lists them; ` +
			`{"op":"read","id":"..."} answers a child's state and last reply; {"op":"wait","id":"..."} waits until it finishes and answers its reply (no id: waits for all); ` +
			`{"op":"cancel","id":"..."} stops it and its own children. A session may run only so many children at once and start only so many in all; past either, start is refused.`,
		Schema: json.RawMessage(`{"type":"object","properties":{"op":{"type":"string","enum":["start","message","list","read","wait","cancel"]},"prompt":{"type":"string"},"inherit":{"type":"boolean"},"id":{"type":"string"},"text":{"type":"string"}},"required":["op"],"additionalProperties":false}`),
	}
}

// Run answers one call of the agents tool.
func (c *Children) Run(ctx context.Context, a *Agent, turn int64, call tool.Call) (tool.Result, []record.Payload) {
	var args struct {
		Op      string `json:"op"`
		Prompt  string `json:"prompt"`
		Inherit bool   `json:"inherit"`
		ID      string `json:"id"`
		Text    string `json:"text"`
	}
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return tool.Failure("agents: the arguments do not decode: %v", err), nil
	}
	c.mu.Lock()
	c.parent = a
	c.Limits = c.Limits.withDefaults()
	if c.pool == nil {
		c.pool = &pool{}
	}
	c.mu.Unlock()
	switch args.Op {
	case "start":
		return c.start(args.Prompt, args.Inherit), nil
	case "list":
		c.mu.Lock()
		defer c.mu.Unlock()
		rows := []map[string]any{}
		for _, id := range c.order {
			rows = append(rows, c.kids[id].row(false))
		}
		return answer(map[string]any{"agents": rows, "running": c.pool.count(), "started": c.started,
			"limits": map[string]int{"running": c.Limits.Running, "total": c.Limits.Total}}), nil
	case "wait":
		if args.ID == "" {
			return c.waitAll(ctx), nil
		}
	case "message", "read", "cancel":
	default:
		return tool.Failure(`agents: op must be start, message, list, read, wait or cancel, not %q`, args.Op), nil
	}
	k := c.get(args.ID)
	if k == nil {
		return tool.Failure("agents: no child %q (agents list names them)", args.ID), nil
	}
	switch args.Op {
	case "message":
		return c.message(k, args.Text), nil
	case "read":
		c.mu.Lock()
		row := k.row(true)
		c.consumeLocked(k)
		c.mu.Unlock()
		return answer(row), nil
	case "wait":
		return c.wait(ctx, k), nil
	}
	return c.cancelChild(ctx, k), nil
}

func (p *pool) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running
}

// start spawns a child and runs prompt in it, within the limits.
func (c *Children) start(prompt string, inherit bool) tool.Result {
	if strings.TrimSpace(prompt) == "" {
		return tool.Failure(`agents start needs a "prompt"`)
	}
	if c.Spawn == nil {
		return tool.Failure("agents: this session cannot start child agents")
	}
	c.mu.Lock()
	if why := c.refuseLocked("start", true); why != "" {
		c.mu.Unlock()
		return tool.Failure("%s", why)
	}
	// The slot and the count are held while the child's session is made, outside the lock.
	c.started++
	parent := c.parent
	c.mu.Unlock()
	ag, err := c.Spawn(parent, inherit)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && (c.halt > 0 || c.closed) {
		err = errors.Join(errStopping, ag.sess.Close(), ag.Close())
	}
	if err != nil {
		c.started--
		c.pool.release()
		return tool.Failure("agents start failed: %v", err)
	}
	k := &child{id: ag.sess.ID(), prompt: prompt, inherit: inherit, ag: ag, kids: ag.Children()}
	if k.kids != nil {
		k.kids.adopt(c)
	}
	ag.OnArrival(func() { c.revive(k) })
	if c.kids == nil {
		c.kids = map[string]*child{}
	}
	c.kids[k.id] = k
	c.order = append(c.order, k.id)
	c.runLocked(k, &Prompt{Text: prompt})
	return answer(map[string]any{"id": k.id, "state": "running", "inherit": inherit})
}

var errStopping = errors.New("the session is stopping its child agents")

// refuseLocked says why a child cannot start (or run again, for a message) now, or "". When it
// answers "", it has taken a running slot for the caller.
func (c *Children) refuseLocked(op string, starting bool) string {
	if c.halt > 0 || c.closed {
		return "agents " + op + " refused: " + errStopping.Error()
	}
	if starting && c.started >= c.Limits.Total {
		return fmt.Sprintf(`agents start refused: this session has started %s, the most one session may; `+
			`give one of them more work with {"op":"message","id":"...","text":"..."}`, agentsCount(c.started))
	}
	if n, ok := c.pool.tryTake(c.Limits.Running); !ok {
		verb := "are"
		if n == 1 {
			verb = "is"
		}
		return fmt.Sprintf(`agents %s refused: %s %s running (their own children count too), the most this session allows at once; `+
			`wait for one ({"op":"wait","id":"..."}) or cancel one, then try again`, op, agentsCount(n), verb)
	}
	return ""
}

func agentsCount(n int) string {
	if n == 1 {
		return "1 child agent"
	}
	return fmt.Sprintf("%d child agents", n)
}

// adopt makes d, a child's own door, share parent's limits and running count.
func (d *Children) adopt(parent *Children) {
	d.mu.Lock()
	d.Limits, d.pool = parent.Limits, parent.pool
	d.mu.Unlock()
}

func (c *Children) get(id string) *child {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kids[id]
}

// message tells a busy child more, at its next turn boundary, or runs an idle one again on text.
func (c *Children) message(k *child, text string) tool.Result {
	if strings.TrimSpace(text) == "" {
		return tool.Failure(`agents message needs "text"`)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if k.busy {
		// Steering that misses the run's last boundary comes back in its outcome, and the run
		// after it takes it up (ended).
		k.ag.Steer(text)
		return answer(map[string]any{"id": k.id, "state": "running", "delivered": "at the child's next turn boundary"})
	}
	if why := c.refuseLocked("message", false); why != "" {
		return tool.Failure("%s", why)
	}
	c.runLocked(k, &Prompt{Text: text})
	return answer(map[string]any{"id": k.id, "state": "running"})
}

// wait waits for k's run to end and answers its row with the reply.
func (c *Children) wait(ctx context.Context, k *child) tool.Result {
	for {
		c.mu.Lock()
		busy, done := k.busy, k.done
		if !busy {
			row := k.row(true)
			c.consumeLocked(k)
			c.mu.Unlock()
			return answer(row)
		}
		c.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return tool.Result{Content: "the wait for " + k.id + " was stopped; the child goes on", IsError: true, Outcome: record.Interrupted}
		}
	}
}

// waitAll waits until none of the children runs and answers every row with its reply.
func (c *Children) waitAll(ctx context.Context) tool.Result {
	for {
		c.mu.Lock()
		var done chan struct{}
		for _, id := range c.order {
			if k := c.kids[id]; k.busy {
				done = k.done
				break
			}
		}
		if done == nil {
			rows := []map[string]any{}
			for _, id := range c.order {
				k := c.kids[id]
				rows = append(rows, k.row(true))
				c.consumeLocked(k)
			}
			c.mu.Unlock()
			return answer(map[string]any{"agents": rows})
		}
		c.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return tool.Result{Content: "the wait for the child agents was stopped; they go on", IsError: true, Outcome: record.Interrupted}
		}
	}
}

// cancelChild stops k's run and its own children, and answers once it has ended.
func (c *Children) cancelChild(ctx context.Context, k *child) tool.Result {
	c.mu.Lock()
	if !k.busy {
		row := k.row(true)
		c.consumeLocked(k)
		c.mu.Unlock()
		row["note"] = "it was not running"
		return answer(row)
	}
	k.quiet = true
	cancel, done, kids := k.cancel, k.done, k.kids
	c.mu.Unlock()
	cancel()
	if kids != nil {
		kids.Stop()
	}
	select {
	case <-done:
	case <-ctx.Done():
		return tool.Result{Content: "the cancel of " + k.id + " was stopped before the child had ended; it is ending", IsError: true, Outcome: record.Interrupted}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	row := k.row(true)
	c.consumeLocked(k)
	return answer(row)
}

// consumeLocked takes back the delivery of k's latest run: the model has its reply in hand.
func (c *Children) consumeLocked(k *child) {
	if !k.busy && k.runs > 0 {
		c.parent.drop(k.id, k.runs)
	}
}

// runLocked runs p in k — or, with p nil, the arrivals waiting in k's inbox — on a goroutine of its
// own, under a context of its own: the parent's Stop does not reach it. The caller has taken k's
// running slot.
func (c *Children) runLocked(k *child, p *Prompt) {
	ctx, cancel := context.WithCancel(context.Background())
	k.cancel, k.done, k.busy, k.quiet = cancel, make(chan struct{}), true, false
	k.runs++
	c.wg.Add(1)
	go func() {
		var out Outcome
		took := true
		if p != nil {
			out = k.ag.TakeUp(ctx, *p)
		} else {
			out, took = k.ag.TakeUpArrivals(ctx)
		}
		cancel()
		c.ended(k, out, took)
	}()
}

// ended records how k's run ended and delivers its reply to the parent, unless a cancel or a Stop
// ended it (or the run found nothing to take up). What reached k after its run's last turn
// boundary — a message from the parent, a reply from a child of its own — runs it again.
func (c *Children) ended(k *child, out Outcome, took bool) {
	reply := lastReply(k.ag.sess.Snapshot())
	c.mu.Lock()
	parent := c.parent
	c.pool.release()
	k.busy = false
	close(k.done)
	quiet := k.quiet || c.halt > 0 || c.closed
	news := false
	if took {
		k.out, k.reply = out, reply
		if !quiet {
			parent.deliver(arrival{child: k.id, run: k.runs, text: arrivalText(k.id, out, reply)})
			news = true
		}
	} else {
		k.runs-- // the run took nothing up: the reply in hand is still the previous run's
	}
	if !quiet && out.Reason != fold.Cancelled {
		var late []string
		for _, s := range out.Withdrawn {
			late = append(late, s.Text)
		}
		if len(late) > 0 || k.ag.Arrivals() > 0 {
			c.pool.take()
			if len(late) > 0 {
				c.runLocked(k, &Prompt{Text: strings.Join(late, "\n\n")})
			} else {
				c.runLocked(k, nil)
			}
		}
	}
	c.mu.Unlock()
	parent.poke()
	c.wg.Done()
	if news {
		parent.announce()
	}
}

// revive is a child's arrival hook: an idle child takes up a reply from a child of its own. A
// busy one takes it at its next turn boundary, or when its run ends (ended).
func (c *Children) revive(k *child) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k.busy || c.halt > 0 || c.closed || k.ag.Arrivals() == 0 {
		return
	}
	c.pool.take()
	c.runLocked(k, nil)
}

// row is what the tool answers about k; with reply, its latest reply in full.
func (k *child) row(reply bool) map[string]any {
	r := map[string]any{"id": k.id, "prompt": clipText(k.prompt, 80), "inherit": k.inherit, "state": "running"}
	if k.busy {
		return r
	}
	r["state"] = stateWord(k.out.Reason)
	if k.out.Err != nil && !errors.Is(k.out.Err, context.Canceled) {
		r["error"] = firstLine(k.out.Err.Error())
	}
	if reply {
		r["reply"] = k.reply
	} else {
		r["reply_bytes"] = len(k.reply)
	}
	return r
}

// Running returns how many of this door's children are running.
func (c *Children) Running() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range c.kids {
		if k.busy {
			n++
		}
	}
	return n
}

// Stop stops every child and, through their own doors, their children: each running exchange is
// cancelled and quiesces (reason cancelled), and Stop returns once all have ended. Their endings
// are not delivered. The children stay: a message runs one again.
func (c *Children) Stop() {
	c.mu.Lock()
	c.halt++
	var doors []*Children
	for _, id := range c.order {
		k := c.kids[id]
		if k.busy {
			k.quiet = true
			k.cancel()
		}
		if k.kids != nil {
			doors = append(doors, k.kids)
		}
	}
	c.mu.Unlock()
	for _, d := range doors {
		d.Stop()
	}
	c.wg.Wait()
	c.mu.Lock()
	c.halt--
	c.mu.Unlock()
}

// Close stops every child (Stop) for good, records what still waited in each child's inbox, and
// closes their sessions, their own children's first. Nothing starts through the door after it; a
// second Close does nothing.
func (c *Children) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.Stop()
	c.mu.Lock()
	kids := make([]*child, 0, len(c.order))
	for _, id := range c.order {
		kids = append(kids, c.kids[id])
	}
	c.mu.Unlock()
	var errs []error
	for _, k := range kids {
		if k.kids != nil {
			errs = append(errs, k.kids.Close())
		}
		errs = append(errs, k.ag.RecordArrivals(fold.Cancelled), k.ag.sess.Close(), k.ag.Close())
	}
	return errors.Join(errs...)
}

// Children returns the agent's agents door, or nil.
func (a *Agent) Children() *Children {
	for _, d := range a.cfg.Doors {
		if c, ok := d.(*Children); ok {
			return c
		}
	}
	return nil
}

// lastReply is the text of the newest assistant turn the agent wrote itself (an inherited turn is
// its parent's).
func lastReply(st *fold.State) string {
	for i := st.NumTurns() - 1; i >= 0; i-- {
		t := st.TurnAt(i)
		if t.Role != record.Assistant || t.Kind != fold.Own {
			continue
		}
		var b strings.Builder
		for _, m := range t.Messages {
			if m.Role != record.Assistant {
				continue
			}
			for _, p := range m.Parts {
				if p.Type == record.PartText {
					b.WriteString(p.Text)
				}
			}
		}
		if b.Len() > 0 {
			return b.String()
		}
	}
	return ""
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// Config returns the agent's configuration, for building a child like it.
func (a *Agent) Config() Config { return a.cfg }
