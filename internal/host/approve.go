package host

import (
	"context"
	"net/http"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/agent"
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
	if m := sess.Snapshot().Meta(); m.Chosen && m.Provider == s.Provider && m.Model != "" {
		s.Model = m.Model
	}
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

// approver returns the Approver of the agent on sess: it records the call as asked, then waits
// for Approve to answer it, or for ctx (a Stop) to end the wait. An approval left asked is
// dropped from the published state when the exchange quiesces.
func (c *Conv) approver(sess *session.Session) tool.Approver {
	return tool.ApproverFunc(func(ctx context.Context, call tool.Call) (bool, error) {
		ch := make(chan bool, 1)
		c.mu.Lock()
		if c.waits == nil {
			c.waits = map[string]chan bool{}
		}
		c.waits[call.ID] = ch
		err := sess.Commit(&record.Approval{CallID: call.ID, Name: call.Name, Args: summarize(call.Args), State: record.ApprovalAsked})
		if err != nil {
			delete(c.waits, call.ID)
		}
		c.mu.Unlock()
		if err != nil {
			return false, err
		}
		select {
		case yes := <-ch:
			return yes, nil
		case <-ctx.Done():
			c.mu.Lock()
			if c.waits[call.ID] == ch {
				delete(c.waits, call.ID)
			}
			c.mu.Unlock()
			return false, ctx.Err()
		}
	})
}

// ApproveResult is what Approve answers.
type ApproveResult struct {
	CallID   string `json:"call_id"`
	State    string `json:"state"` // allowed or denied
	Replayed bool   `json:"replayed"`
}

// Approve answers a tool call waiting for the person's approval: allow runs it, else it is
// refused (outcome denied, and the model is told the person declined). A repeat of op with the
// same answer replays it; a call no one is waiting on (unknown, answered, or its wait ended by a
// Stop) is not_found.
func (c *Conv) Approve(op, callID string, allow bool) (ApproveResult, error) {
	if op == "" {
		return ApproveResult{}, errf("bad_request", "op_id is required: give every answer an operation id")
	}
	if callID == "" {
		return ApproveResult{}, errf("bad_request", "call_id is required: name the tool call you answer")
	}
	state := record.ApprovalDenied
	if allow {
		state = record.ApprovalAllowed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.openLocked(); err != nil {
		return ApproveResult{}, err
	}
	defer c.restLocked()
	prev, seen := c.sess.Snapshot().ApprovalByOp(op)
	if seen {
		if prev.CallID != callID || prev.State != state {
			return ApproveResult{}, errf("op_conflict", "operation %s already answered call %s %s; use a new op_id for a new answer", op, prev.CallID, prev.State)
		}
		return ApproveResult{CallID: callID, State: state, Replayed: true}, nil
	}
	ch, ok := c.waits[callID]
	if !ok {
		return ApproveResult{}, errf("not_found", "no tool call %s is waiting for approval in conversation %s", callID, c.id)
	}
	if err := c.sess.Commit(&record.Approval{CallID: callID, State: state, By: string(record.ByUser), Op: op}); err != nil {
		return ApproveResult{}, err
	}
	delete(c.waits, callID)
	ch <- allow
	return ApproveResult{CallID: callID, State: state}, nil
}

// ModelResult is what SetModel answers.
type ModelResult struct {
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	Replayed     bool   `json:"replayed"`
	Conversation View   `json:"conversation"`
}

// SetModel switches the conversation to model (and provider, when not empty): the agent is built
// anew for it and the switch recorded (model_changed); the next exchange uses it. Refused busy
// while the conversation works.
func (c *Conv) SetModel(op, model, provider string) (ModelResult, error) {
	if op == "" {
		return ModelResult{}, errf("bad_request", "op_id is required")
	}
	if model == "" {
		return ModelResult{}, errf("bad_request", "model is required: name the model to switch to")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.openLocked(); err != nil {
		return ModelResult{}, err
	}
	defer c.restLocked()
	var prev record.ModelChanged
	var seen, working bool
	var meta fold.Meta
	st := c.sess.Snapshot()
	prev, seen = st.ModelByOp(op)
	working = Working(StateOf(st))
	meta = st.Meta()
	if seen {
		if prev.Model != model || (provider != "" && prev.Provider != provider) {
			return ModelResult{}, errf("op_conflict", "operation %s already switched to %s %s; use a new op_id for a new switch", op, prev.Provider, prev.Model)
		}
		return ModelResult{Provider: prev.Provider, Model: prev.Model, Replayed: true, Conversation: c.liveLocked()}, nil
	}
	if c.ex != nil || working {
		return ModelResult{}, errf("busy", "the conversation is working: stop it first, then switch its model")
	}
	if c.h.cfg.NewAgentFor == nil {
		return ModelResult{}, errf("unsupported", "this host cannot switch a conversation's model")
	}
	if provider == "" {
		provider = meta.Provider
	}
	ag, err := c.h.cfg.NewAgentFor(c.sess, Setup{Provider: provider, Model: model, Approver: c.approver(c.sess)})
	if err != nil {
		return ModelResult{}, errf("bad_request", "cannot switch to %s: %v", model, err)
	}
	if err := c.sess.Commit(&record.ModelChanged{Provider: provider, Model: model, Op: op}); err != nil {
		return ModelResult{}, err
	}
	c.ag = ag
	if err := c.indexLocked(); err != nil {
		return ModelResult{}, err
	}
	return ModelResult{Provider: provider, Model: model, Conversation: c.liveLocked()}, nil
}

func (s *Server) approveRoutes() {
	api := func(pattern string, fn func(w http.ResponseWriter, r *http.Request) error) {
		s.mux.Handle(pattern, s.guard(fn))
	}
	api("POST /api/conversations/{id}/approve", func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.conv(r)
		if err != nil {
			return err
		}
		var req struct {
			Op     string `json:"op_id"`
			CallID string `json:"call_id"`
			Allow  *bool  `json:"allow"`
		}
		if err := decode(r, &req); err != nil {
			return err
		}
		if req.Allow == nil {
			return errf("bad_request", "allow is required: true runs the call, false refuses it")
		}
		res, err := c.Approve(req.Op, req.CallID, *req.Allow)
		if err != nil {
			return err
		}
		writeJSON(w, 200, res)
		return nil
	})
	api("POST /api/conversations/{id}/model", func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.conv(r)
		if err != nil {
			return err
		}
		var req struct {
			Op       string `json:"op_id"`
			Model    string `json:"model"`
			Provider string `json:"provider"`
		}
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
