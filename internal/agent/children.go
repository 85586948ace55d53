package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// Spawner makes a child agent of parent: a session of its own, linked to the parent's, whose first
// record inherits the parent's context when inherit is set (DESIGN §10). cmd/rein wires it.
type Spawner func(parent *Agent, inherit bool) (*Agent, error)

// Children is the agents tool: it starts child agents that run concurrently with their own
// records and their own Stop. A child's reply reaches the parent's inbox and is delivered at the
// parent's next turn boundary. A parent's Stop ends the parent's exchange, not its children.
type Children struct {
	Spawn Spawner

	mu   sync.Mutex
	kids map[string]*child
	seq  []string
}

type child struct {
	id     string
	prompt string
	ag     *Agent
	cancel context.CancelFunc
	done   chan struct{}
	out    Outcome
	reply  string
	busy   bool
}

// Spec describes the agents tool.
func (c *Children) Spec() provider.Tool {
	return provider.Tool{
		Name: "agents",
		Description: `Child agents that work in parallel, each in a session of its own. ` +
			`{"op":"start","prompt":"...","inherit":true|false} starts one (inherit: it begins with your context; false: empty) and answers its id; ` +
			`its reply is delivered to you when it finishes. {"op":"message","id":"...","text":"..."} tells a child more; ` +
			`{"op":"list"} lists them; {"op":"read","id":"..."} answers a child's state and last reply; ` +
			`{"op":"wait","id":"..."} waits until it finishes (wait for the children whose replies you need before you end your turn); {"op":"cancel","id":"..."} stops it.`,
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
	switch args.Op {
	case "start":
		if strings.TrimSpace(args.Prompt) == "" {
			return tool.Failure(`agents start needs a "prompt"`), nil
		}
		if c.Spawn == nil {
			return tool.Failure("agents: this session cannot start child agents"), nil
		}
		ag, err := c.Spawn(a, args.Inherit)
		if err != nil {
			return tool.Failure("agents start failed: %v", err), nil
		}
		k := &child{id: ag.sess.ID(), prompt: args.Prompt, ag: ag}
		c.mu.Lock()
		if c.kids == nil {
			c.kids = map[string]*child{}
		}
		c.kids[k.id] = k
		c.seq = append(c.seq, k.id)
		c.mu.Unlock()
		c.run(a, k, args.Prompt)
		return answer(map[string]any{"id": k.id, "state": "running", "inherit": args.Inherit}), nil
	case "list":
		c.mu.Lock()
		defer c.mu.Unlock()
		rows := []map[string]any{}
		for _, id := range c.seq {
			rows = append(rows, c.kids[id].row())
		}
		return answer(map[string]any{"agents": rows}), nil
	}
	k := c.get(args.ID)
	if k == nil {
		return tool.Failure("agents: no child %q (agents list names them)", args.ID), nil
	}
	switch args.Op {
	case "message":
		if strings.TrimSpace(args.Text) == "" {
			return tool.Failure(`agents message needs "text"`), nil
		}
		c.mu.Lock()
		busy := k.busy
		c.mu.Unlock()
		if busy {
			k.ag.Steer(args.Text)
			return answer(map[string]any{"id": k.id, "delivered": "at the child's next turn boundary"}), nil
		}
		c.run(a, k, args.Text)
		return answer(map[string]any{"id": k.id, "state": "running"}), nil
	case "read":
		c.mu.Lock()
		defer c.mu.Unlock()
		return answer(k.row()), nil
	case "wait":
		c.mu.Lock()
		done := k.done
		c.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return tool.Result{Content: "the wait for " + k.id + " was stopped; the child goes on", IsError: true, Outcome: record.Interrupted}, nil
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		return answer(k.row()), nil
	case "cancel":
		c.mu.Lock()
		cancel := k.cancel
		c.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return answer(map[string]any{"id": k.id, "state": "stopping"}), nil
	}
	return tool.Failure(`agents: op must be start, message, list, read, wait or cancel, not %q`, args.Op), nil
}

func (c *Children) get(id string) *child {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kids[id]
}

// run takes up text in the child on its own goroutine, under a context of its own: the parent's
// Stop does not reach it.
func (c *Children) run(parent *Agent, k *child, text string) {
	ctx, cancel := context.WithCancel(context.Background())
	c.mu.Lock()
	k.cancel, k.done, k.busy = cancel, make(chan struct{}), true
	done := k.done
	c.mu.Unlock()
	go func() {
		defer close(done)
		out := k.ag.TakeUp(ctx, Prompt{Text: text})
		cancel()
		reply := lastReply(k.ag.sess.State())
		c.mu.Lock()
		k.out, k.reply, k.busy = out, reply, false
		c.mu.Unlock()
		msg := fmt.Sprintf("[rein: child agent %s finished (%s). Its reply: %s]", k.id, out.Reason, clipText(reply, 4000))
		if out.Err != nil {
			msg = fmt.Sprintf("[rein: child agent %s ended (%s): %v. Its last reply: %s]", k.id, out.Reason, out.Err, clipText(reply, 4000))
		}
		parent.SteerSubmission(Steer{Text: msg})
	}()
}

func (k *child) row() map[string]any {
	state := "running"
	if !k.busy {
		state = k.out.Reason
	}
	r := map[string]any{"id": k.id, "prompt": clipText(k.prompt, 80), "state": state}
	if !k.busy {
		r["reply"] = k.reply
	}
	return r
}

// lastReply is the text of the newest assistant turn.
func lastReply(st *fold.State) string {
	ts := st.Turns()
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].Role != record.Assistant {
			continue
		}
		var b strings.Builder
		for _, m := range ts[i].Messages {
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

// Running returns how many children are still working.
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

// WaitAll waits until no child is working, or ctx ends (then it stops them all).
func (c *Children) WaitAll(ctx context.Context) {
	for {
		c.mu.Lock()
		var done chan struct{}
		for _, k := range c.kids {
			if k.busy {
				done = k.done
				break
			}
		}
		c.mu.Unlock()
		if done == nil {
			return
		}
		select {
		case <-done:
		case <-ctx.Done():
			c.mu.Lock()
			for _, k := range c.kids {
				if k.cancel != nil {
					k.cancel()
				}
			}
			c.mu.Unlock()
			return
		}
	}
}

// Pending reports whether lines wait for the next turn boundary (a child's reply, say).
func (a *Agent) Pending() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pending) > 0
}
