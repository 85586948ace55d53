package host

import (
	"context"
	"net/http"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// A person's part in a conversation's running: approving the tool calls the policy asks about
// (permission mode ask, DESIGN §8), and switching the conversation's model.

// newAgent builds the agent of the conversation's session sess: with NewAgentFor, under the
// conversation's provider and model (a switch recorded in sess, if the host still talks to that
// provider; else the host's) and the approver that asks the person through the host.
func (c *Conv) newAgent(sess *session.Session) (*agent.Agent, error) {
	ag, err := c.buildAgent(sess)
	if err == nil {
		c.wireChildren(ag)
	}
	return ag, err
}

func (c *Conv) buildAgent(sess *session.Session) (*agent.Agent, error) {
	if c.h.cfg.NewAgentFor == nil {
		return c.h.cfg.NewAgent(sess)
	}
	s := Setup{Provider: c.h.cfg.Provider, Model: c.h.cfg.Model, Approver: c.approver(sess)}
	m := sess.Snapshot().Meta()
	if m.Chosen && m.Provider == s.Provider && m.Model != "" {
		s.Model = m.Model
	}
	s.Backend = m.Backend
	return c.h.cfg.NewAgentFor(sess, s)
}

// maxArgs bounds the summary of a call's arguments an approval shows.
const maxArgs = 2000

// summarize shortens a call's arguments for the person to read.
func summarize(args []byte) string {
	if len(args) <= maxArgs {
		return string(args)
	}
	cut := maxArgs
	for cut > 0 && !utf8.RuneStart(args[cut]) {
		cut--
	}
	return string(args[:cut]) + "…"
}

// approver returns the Approver of the agent on sess: it records the call as asked, with what it
// would change and the rules the person may grant instead, then waits until the state holds the
// person's answer (Approve records it), or ctx (a Stop) ends the wait. An approval left asked is
// dropped from the published state when the exchange quiesces. It is also the tool.RuleSource of
// the rules the person granted for the conversation, as its record holds them.
func (c *Conv) approver(sess *session.Session) tool.Approver {
	return convApprover{c, sess}
}

type convApprover struct {
	c    *Conv
	sess *session.Session
}

func (a convApprover) Approve(ctx context.Context, call tool.Call) (bool, error) {
	c, sess := a.c, a.sess
	rules := make([]string, 0, len(call.Offer))
	for _, r := range call.Offer {
		rules = append(rules, r.String())
	}
	c.mu.Lock()
	err := sess.Commit(&record.Approval{CallID: call.ID, Name: call.Name, Args: summarize(call.Args), State: record.ApprovalAsked,
		Diff: call.Preview, Rules: rules})
	c.mu.Unlock()
	if err != nil {
		return false, err
	}
	for {
		c.mu.Lock()
		answer, ok := sess.Snapshot().ApprovalAnswer(call.ID)
		if c.answered == nil {
			c.answered = make(chan struct{})
		}
		wake := c.answered
		c.mu.Unlock()
		if ok {
			return answer.State == record.ApprovalAllowed, nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			if c.h.ctx.Err() != nil {
				// The host is stopping, not the person: the call is held, and the person is
				// asked again once the conversation is released, after the restart.
				return false, tool.ErrPark
			}
			return false, ctx.Err()
		}
	}
}

// Rules are the rules granted for the conversation. A granted rule that no longer reads (it never
// should: it was written by tool.Rule) grants nothing.
func (a convApprover) Rules() []tool.Rule {
	var out []tool.Rule
	for _, s := range a.sess.Snapshot().Grants() {
		if r, err := tool.ParseRule(s); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// Approve answers a tool call waiting for the person's approval: allow runs it, else it is
// refused (outcome denied, and the model is told the person declined). A repeat of op with the
// same answer replays it; a call no one is waiting on (unknown, answered, or its wait ended by a
// Stop) is not_found.
func (c *Conv) Approve(op, callID string, allow bool) (api.ApproveResult, error) {
	return c.ApproveScoped(op, callID, allow, "")
}

// ApproveScoped is Approve with the answer's scope: "" or "once" for the call alone;
// "conversation" allows it and grants the rules it was asked with for the rest of the
// conversation, recorded with the answer.
func (c *Conv) ApproveScoped(op, callID string, allow bool, scope string) (api.ApproveResult, error) {
	switch scope {
	case "", "once":
		scope = ""
	case record.ScopeConversation:
		if !allow {
			return api.ApproveResult{}, errf(api.BadRequest, "scope conversation is for allowing: a denial is for the one call")
		}
	default:
		return api.ApproveResult{}, errf(api.BadRequest, "unknown scope %q: give once (the call) or conversation (the call and calls like it, for the rest of the conversation)", scope)
	}
	if op == "" {
		return api.ApproveResult{}, errf(api.BadRequest, "op_id is required: give every answer an operation id")
	}
	if callID == "" {
		return api.ApproveResult{}, errf(api.BadRequest, "call_id is required: name the tool call you answer")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.openLocked(); err != nil {
		return api.ApproveResult{}, err
	}
	defer c.restLocked()
	if c.h.ctx.Err() != nil {
		return api.ApproveResult{}, errHostClosed // the waits are ending: no answer would be read
	}
	var plan fold.AnswerPlan
	noRules := false
	err := c.sess.CommitPlan(func(st *fold.State) []record.Payload {
		plan = st.ScopedAnswerPlan(op, callID, allow, scope)
		if plan.Record != nil && scope != "" && len(plan.Record.Rules) == 0 {
			noRules, plan.Record = true, nil
		}
		if plan.Record == nil {
			return nil
		}
		return []record.Payload{plan.Record}
	})
	switch {
	case err != nil:
		return api.ApproveResult{}, err
	case plan.Replay != nil && plan.Conflict:
		return api.ApproveResult{}, errf(api.OpConflict, "operation %s already answered call %s %s; use a new op_id for a new answer", op, plan.Replay.CallID, plan.Replay.State)
	case plan.Replay != nil:
		return api.ApproveResult{CallID: callID, State: plan.Replay.State, Scope: plan.Replay.Scope, Replayed: true}, nil
	case noRules:
		return api.ApproveResult{}, errf(api.BadRequest, "call %s can only be allowed once: no rule could cover calls like it (a command whose effects its words do not tell)", callID)
	case plan.Record == nil:
		return api.ApproveResult{}, errf(api.NotFound, "no tool call %s is waiting for approval in conversation %s", callID, c.id)
	}
	if c.answered != nil {
		close(c.answered) // the waiting calls read their answers
		c.answered = nil
	}
	return api.ApproveResult{CallID: callID, State: plan.Record.State, Scope: plan.Record.Scope}, nil
}

// SetModel switches the conversation to model (and provider, when not empty): the agent is built
// anew for it and the switch recorded (model_changed); the next exchange uses it. Refused busy
// while the conversation works.
func (c *Conv) SetModel(op, model, provider string) (api.ModelResult, error) {
	if op == "" {
		return api.ModelResult{}, errf(api.BadRequest, "op_id is required")
	}
	if model == "" {
		return api.ModelResult{}, errf(api.BadRequest, "model is required: name the model to switch to")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.openLocked(); err != nil {
		return api.ModelResult{}, err
	}
	defer c.restLocked()
	st := c.sess.Snapshot()
	prev, seen := st.ModelByOp(op)
	working, meta := api.Working(StateOf(st)), st.Meta()
	if seen {
		if prev.Model != model || (provider != "" && prev.Provider != provider) {
			return api.ModelResult{}, errf(api.OpConflict, "operation %s already switched to %s %s; use a new op_id for a new switch", op, prev.Provider, prev.Model)
		}
		return api.ModelResult{Provider: prev.Provider, Model: prev.Model, Replayed: true, Conversation: c.liveLocked().View}, nil
	}
	if c.ex != nil || working {
		return api.ModelResult{}, errf(api.Busy, "the conversation is working: stop it first, then switch its model")
	}
	if c.h.cfg.NewAgentFor == nil {
		return api.ModelResult{}, errf(api.Unsupported, "this host cannot switch a conversation's model")
	}
	if provider == "" {
		provider = meta.Provider
	}
	if b := meta.Backend; b != "" && b != api.BackendRein {
		return api.ModelResult{}, errf(api.Unsupported, "this conversation's turns run in %s, which chooses its own model: start a conversation on rein to choose one", b)
	}
	ag, err := c.h.cfg.NewAgentFor(c.sess, Setup{Provider: provider, Model: model, Approver: c.approver(c.sess)})
	if err != nil {
		return api.ModelResult{}, errf(api.BadRequest, "cannot switch to %s: %v", model, err)
	}
	if err := c.sess.Commit(&record.ModelChanged{Provider: provider, Model: model, Op: op}); err != nil {
		ag.Close()
		return api.ModelResult{}, err
	}
	if c.ag != nil {
		c.ag.Close() // its tools are the new agent's to start again (a spare shell, for one)
	}
	c.ag = ag
	if err := c.indexLocked(); err != nil {
		return api.ModelResult{}, err
	}
	return api.ModelResult{Provider: provider, Model: model, Conversation: c.liveLocked().View}, nil
}

func (s *Server) approveRoutes() {
	handle := func(pattern string, fn func(w http.ResponseWriter, r *http.Request) error) {
		s.mux.Handle(pattern, s.guard(fn))
	}
	handle("POST /api/conversations/{id}/approve", func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.conv(r)
		if err != nil {
			return err
		}
		var req api.ApproveRequest
		if err := decode(r, &req); err != nil {
			return err
		}
		if req.Allow == nil {
			return errf(api.BadRequest, "allow is required: true runs the call, false refuses it")
		}
		res, err := c.ApproveScoped(req.Op, req.CallID, *req.Allow, req.Scope)
		if err != nil {
			return err
		}
		writeJSON(w, 200, res)
		return nil
	})
	handle("POST /api/conversations/{id}/model", func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.conv(r)
		if err != nil {
			return err
		}
		var req api.ModelRequest
		if err := decode(r, &req); err != nil {
			return err
		}
		res, err := c.SetModel(req.Op, req.Model, req.Provider)
		if err != nil {
			return err
		}
		writeJSON(w, 200, res)
		return nil
	})
}
