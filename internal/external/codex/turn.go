package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/external"
)

// treeEvery is how often the app-server's process tree is read while a turn runs: a process of
// it that left its group (Codex's shell snapshot, a command in a session of its own) is known by
// then, and killed with the tree should the app-server die and leave it to be adopted elsewhere.
const treeEvery = 500 * time.Millisecond

// follow reads the turn's messages until turn/completed, carrying out a Stop when ctx ends.
func (r *run) follow() external.Result {
	stop := r.ctx.Done()
	var deadline <-chan time.Time
	r.seen = newMarks()
	r.s.look(r.seen)
	watch := time.NewTicker(treeEvery)
	defer watch.Stop()
	for {
		select {
		case <-watch.C:
			r.s.look(r.seen)
		case <-stop:
			stop = nil
			r.stop()
			deadline = time.After(StartWait)
		case <-deadline:
			// Codex did not end the turn in time (or never let it be interrupted): end it.
			r.s.kill(r.seen)
			r.killed = true
			return r.result(external.StatusInterrupted, nil)
		case err := <-r.s.bad:
			r.say(external.Item{Kind: external.ItemError, Text: "codex app-server: " + err.Error()})
		case m, ok := <-r.s.msgs:
			if !ok {
				err := r.s.died()
				r.s.kill(r.seen)
				r.killed = true
				return r.result(external.StatusFailed, err)
			}
			switch m.shape() {
			case shapeResponse:
				if err := r.answered(m); err != nil {
					return r.result(external.StatusFailed, err)
				}
				if r.accepted && r.interrupt == "" && deadline != nil && !r.graceSet {
					r.graceSet = true
					deadline = time.After(external.InterruptGrace)
				}
			case shapeRequest:
				if err := r.answer(m); err != nil {
					r.fail(err)
				}
			case shapeNotification:
				items, err := r.tr.note(m)
				if err != nil {
					r.say(external.Item{Kind: external.ItemError, Text: "codex app-server: " + err.Error(), Raw: m.Params})
				}
				for _, it := range items {
					r.say(it)
				}
				if m.Method == noteTurnStarted && r.stopping && r.refused && !r.accepted && r.interrupt == "" {
					r.refused = false
					r.sendInterrupt()
				}
				if r.tr.done {
					return r.ended()
				}
			}
		}
	}
}

// stop begins a Stop: interrupt the turn once its id is known.
func (r *run) stop() {
	if r.stopping {
		return
	}
	r.stopping = true
	if r.tr.turn != "" {
		r.sendInterrupt()
	}
}

func (r *run) sendInterrupt() {
	id := r.id()
	r.interrupt, _ = requestID(id)
	r.s.send(message{ID: id, Method: "turn/interrupt", Params: mustJSON(map[string]string{
		"threadId": r.tr.thread, "turnId": r.tr.turn,
	})})
}

// answered takes a response to one of the turn's requests: turn/start's, which names the turn,
// or turn/interrupt's.
func (r *run) answered(m message) error {
	key, _ := requestID(m.ID)
	switch key {
	case r.turnStart:
		r.reached = true
		if m.Error != nil {
			return fmt.Errorf("codex refused turn/start: %w", m.Error)
		}
		var res struct {
			Turn struct {
				ID string `json:"id"`
			} `json:"turn"`
		}
		if err := json.Unmarshal(m.Result, &res); err != nil || res.Turn.ID == "" {
			return fmt.Errorf("read codex's turn/start answer: no turn id in %.200s", m.Result)
		}
		if r.tr.turn == "" {
			r.tr.turn = res.Turn.ID
		}
		if r.stopping && r.interrupt == "" && !r.accepted {
			r.sendInterrupt()
		}
	case r.interrupt:
		r.interrupt = ""
		if m.Error == nil {
			r.accepted = true
			return nil
		}
		// "no active turn to interrupt": the turn has not started yet (or has just ended, and
		// turn/completed is on its way). Send again when it starts.
		if r.b.onRefusal != nil {
			r.b.onRefusal()
		}
		if r.tr.started && r.resent < 3 {
			r.resent++
			r.sendInterrupt()
		} else if !r.tr.started {
			r.refused = true
		}
	}
	return nil
}

// ended makes the Result of a turn Codex ended.
func (r *run) ended() external.Result {
	switch r.tr.status {
	case turnCompleted:
		return r.result(external.StatusCompleted, nil)
	case turnInterrupted:
		return r.result(external.StatusInterrupted, nil)
	case turnFailed:
		msg := r.tr.err.String()
		if msg == "" {
			msg = "codex says the turn failed, and not why"
		}
		return r.result(external.StatusFailed, errors.New(msg))
	}
	return r.result(external.StatusFailed, fmt.Errorf("codex ended the turn with a status rein does not know: %q", r.tr.status))
}

func (r *run) result(status string, err error) external.Result {
	if r.sinkErr != nil {
		status, err = external.StatusFailed, r.sinkErr
	}
	return external.Result{Status: status, Reply: r.tr.reply, Session: r.session, Err: err}
}

// say reports an item; a Sink that refuses one stops the turn, which then fails with its error.
func (r *run) say(it external.Item) error {
	if r.sinkErr != nil {
		return r.sinkErr
	}
	if err := r.sink.Item(it); err != nil {
		r.fail(fmt.Errorf("report codex's %s: %w", it.Kind, err))
		return r.sinkErr
	}
	return nil
}

// fail stops the turn, which then fails with err.
func (r *run) fail(err error) {
	if r.sinkErr == nil {
		r.sinkErr = err
	}
	r.stop()
}

// The approval requests rein answers: protocol v2's, and v1's Codex still defines.
const (
	reqCommandApproval = "item/commandExecution/requestApproval"
	reqFileApproval    = "item/fileChange/requestApproval"
	reqExecApprovalV1  = "execCommandApproval"
	reqPatchApprovalV1 = "applyPatchApproval"
)

// approvalParams is the part of an approval request rein reads.
type approvalParams struct {
	ItemID    string          `json:"itemId"`
	CallID    string          `json:"callId"`
	Command   json.RawMessage `json:"command"` // v2: a string; v1: argv
	Cwd       string          `json:"cwd"`
	Reason    *string         `json:"reason"`
	GrantRoot *string         `json:"grantRoot"`
}

// answer answers a request of the server's: an approval is put to the person through the Sink
// (unless the turn is being stopped, when it is denied); any other request is refused, since
// rein offers Codex no tools and no answers of its own.
func (r *run) answer(m message) error {
	var decision string
	switch m.Method {
	case reqCommandApproval, reqFileApproval, reqExecApprovalV1, reqPatchApprovalV1:
		var p approvalParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return r.s.send(refuse(m.ID, -32602, "rein could not read the request: "+err.Error()))
		}
		ok := !r.stopping && r.ctx.Err() == nil && r.approve(m.Method, p, m.Params)
		v1 := m.Method == reqExecApprovalV1 || m.Method == reqPatchApprovalV1
		switch {
		case ok && v1:
			decision = "approved"
		case ok:
			decision = "accept"
		case v1 && (r.stopping || r.ctx.Err() != nil):
			decision = "abort"
		case v1:
			decision = "denied"
		case r.stopping || r.ctx.Err() != nil:
			decision = "cancel" // denied, and the turn ends with it
		default:
			decision = "decline"
		}
		return r.s.send(reply(m.ID, map[string]string{"decision": decision}))
	}
	return r.s.send(refuse(m.ID, -32601, "rein does not answer "+m.Method))
}

// approve puts one approval request to the person. The wait ends, answered no, when the turn is
// stopped or the app-server dies.
func (r *run) approve(method string, p approvalParams, raw json.RawMessage) bool {
	a := external.Approval{ID: p.ItemID, Input: raw}
	if a.ID == "" {
		a.ID = p.CallID
	}
	switch method {
	case reqCommandApproval, reqExecApprovalV1:
		a.Tool = "command"
		var line string
		var argv []string
		if json.Unmarshal(p.Command, &line) != nil && json.Unmarshal(p.Command, &argv) == nil {
			line = strings.Join(argv, " ")
		}
		a.Summary = line
		if p.Cwd != "" {
			a.Summary += "\n(in " + p.Cwd + ")"
		}
	default:
		a.Tool = "file_change"
		a.Summary = r.tr.files[p.ItemID]
		if p.GrantRoot != nil && *p.GrantRoot != "" {
			a.Summary = strings.TrimSpace(a.Summary + "\nwrite access under " + *p.GrantRoot)
		}
	}
	if p.Reason != nil && *p.Reason != "" {
		a.Summary = strings.TrimSpace(a.Summary + "\n" + *p.Reason)
	}
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	go func() {
		select {
		case <-r.s.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	return r.sink.Approve(ctx, a)
}
