package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// Conv is one conversation: a session, its agent, and the one lock every decision about it is
// made under.
type Conv struct {
	h    *Host
	id   string
	sess *session.Session
	ag   *agent.Agent

	mu     sync.Mutex
	ex     *exchange
	handed map[string]bool // submissions handed to the running exchange as steering
}

// exchange is the running exchange of a conversation.
type exchange struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// ID returns the conversation's id.
func (c *Conv) ID() string { return c.id }

// Session returns the conversation's session (for subscriptions and reads).
func (c *Conv) Session() *session.Session { return c.sess }

// Submission states (DESIGN §12.2).
const (
	Accepted  = "accepted"
	Delivered = "delivered"
	Answered  = "answered"
	Cancelled = "cancelled"
	Withdrawn = "withdrawn"
	Rejected  = "rejected"
)

// reconcile settles a conversation opened after a restart: an exchange a crash left in flight is
// quiesced (reason crashed), submissions it had delivered end cancelled, and submissions accepted
// but never delivered are rejected as "host restarted", so nothing is delivered twice and nothing
// is silently dropped.
func (c *Conv) reconcile() error {
	st := c.sess.State()
	if st.InFlight() || !st.IsReady() {
		if err := c.ag.Settle(st.Meta().Cwd, c.h.cfg.Version); err != nil {
			return err
		}
	}
	var ps []record.Payload
	for _, s := range st.Submissions() {
		switch s.State {
		case Accepted:
			ps = append(ps, &record.Submission{ID: s.ID, State: Rejected, Reason: "host_restarted",
				Detail: "the host restarted before this message was delivered; send it again to retry"})
		case Delivered:
			ps = append(ps, &record.Submission{ID: s.ID, State: Cancelled, Reason: "host_restarted",
				Detail: "the host restarted while this message's exchange was running"})
		}
	}
	if len(ps) == 0 {
		return nil
	}
	return c.sess.Commit(ps...)
}

// SendResult is what Send answers.
type SendResult struct {
	MessageID string `json:"message_id"`
	State     string `json:"state"`
	Replayed  bool   `json:"replayed"`
}

// Send accepts a message. It returns as soon as the submission is durable; delivery happens
// behind it, in order. A repeat of op with the same payload answers the recorded outcome.
func (c *Conv) Send(op, text string, atts []record.Attachment, queue bool) (SendResult, error) {
	if op == "" {
		return SendResult{}, errf("bad_request", "op_id is required: give every send an operation id, and reuse it only to retry that send")
	}
	if text == "" && len(atts) == 0 {
		return SendResult{}, errf("bad_request", "the message is empty: send text or an attachment")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.sess.State()
	if prev, ok := st.SubmissionByOp(op); ok {
		if prev.Text != text || !slices.Equal(prev.Attachments, atts) {
			return SendResult{}, errf("op_conflict", "operation %s already sent a different message (%s); use a new op_id for a new message", op, prev.ID)
		}
		return SendResult{MessageID: prev.ID, State: prev.State, Replayed: true}, nil
	}
	if st.Meta().Closed {
		return SendResult{}, errf("closed", "conversation %s is closed", c.id)
	}
	id := newMessageID()
	if err := c.sess.Commit(&record.Submission{ID: id, Op: op, State: Accepted, Text: text, Attachments: atts, Queue: queue}); err != nil {
		return SendResult{}, err
	}
	c.pump()
	return SendResult{MessageID: id, State: Accepted}, nil
}

// pump hands accepted submissions on: the oldest becomes the next exchange's prompt when none is
// running; while one runs, those not queued are handed to it as steering. Called with c.mu held.
func (c *Conv) pump() {
	st := c.sess.State()
	for _, s := range st.Submissions() {
		if s.State != Accepted {
			continue
		}
		if c.ex == nil {
			c.start(s)
			continue
		}
		if !s.Queue && !c.handed[s.ID] {
			if c.handed == nil {
				c.handed = map[string]bool{}
			}
			c.handed[s.ID] = true
			c.ag.SteerSubmission(agent.Steer{Text: text(s), Submission: s.ID})
		}
	}
}

func text(s fold.Submission) string {
	t := s.Text
	for _, a := range s.Attachments {
		if a.Text != "" {
			t += "\n\nAttached " + a.Name + ":\n" + a.Text
		}
	}
	return t
}

// start runs an exchange for submission s. Called with c.mu held.
func (c *Conv) start(s fold.Submission) {
	if c.handed == nil {
		c.handed = map[string]bool{}
	}
	c.handed[s.ID] = true // being delivered as this exchange's prompt
	ctx, cancel := context.WithCancel(c.h.ctx)
	ex := &exchange{cancel: cancel, done: make(chan struct{})}
	c.ex = ex
	c.h.wg.Add(1)
	go func() {
		defer c.h.wg.Done()
		defer close(ex.done)
		out := c.ag.TakeUp(ctx, agent.Prompt{Text: s.Text, Attachments: s.Attachments, Submission: s.ID})
		cancel()
		c.finish(ex, out)
	}()
	// TakeUp commits the prompt (which marks the submission delivered) on its own goroutine; until
	// it does, the submission reads accepted, and Working holds either way.
}

// finish ends an exchange: every submission it delivered becomes answered or cancelled, in one
// write, then the next accepted submission is taken up.
func (c *Conv) finish(ex *exchange, out agent.Outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.sess.State()
	state, reason := Answered, out.Reason
	if out.Reason != fold.Replied {
		state = Cancelled
	}
	var ps []record.Payload
	for _, s := range st.Submissions() {
		if s.State == Delivered {
			p := &record.Submission{ID: s.ID, State: state, Reason: reason}
			if out.Err != nil && !errors.Is(out.Err, context.Canceled) {
				p.Detail = out.Err.Error()
			}
			ps = append(ps, p)
		}
	}
	// Steering handed over but never delivered goes back to accepted ones: it is taken up next.
	for _, w := range out.Withdrawn {
		delete(c.handed, w.Submission)
	}
	if len(ps) > 0 {
		if err := c.sess.Commit(ps...); err != nil {
			fmt.Fprintf(osStderr, "rein serve: conversation %s: %v\n", c.id, err)
		}
	}
	if c.ex == ex {
		c.ex = nil
	}
	clear(c.handed)
	// A failed session (an fsync error) takes nothing more up: its record says where it stopped.
	if c.h.ctx.Err() == nil && !errors.Is(out.Err, session.ErrFailed) {
		c.pump()
	}
}

// StopResult is what Stop answers.
type StopResult struct {
	Stopped     bool    `json:"stopped"`
	Interrupted bool    `json:"interrupted"`
	Withdrawn   []Taken `json:"withdrawn"`
	Reason      string  `json:"reason,omitempty"`
	Replayed    bool    `json:"replayed"`
}

// Taken is a message a Stop took back, returned so the client can put its text back.
type Taken struct {
	ID          string              `json:"id"`
	Text        string              `json:"text"`
	Attachments []record.Attachment `json:"attachments"`
}

// Stop stops whatever the conversation has in flight (DESIGN §12.3). In order, in one write: it
// withdraws every accepted submission, records the Stop; then it interrupts the running exchange,
// which quiesces. turn, when non-zero, is a precondition: stop only if that turn is in hand. A
// Stop whose write fails withdraws and interrupts nothing.
func (c *Conv) Stop(op string, turn int64) (StopResult, error) {
	if op == "" {
		return StopResult{}, errf("bad_request", "op_id is required: give every Stop press a new operation id")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.sess.State()
	if prev, ok := st.StopByOp(op); ok {
		if prev.Turn != turn {
			return StopResult{}, errf("op_conflict", "operation %s was a Stop with a different turn", op)
		}
		res := StopResult{Stopped: true, Interrupted: prev.Interrupted, Replayed: true, Withdrawn: []Taken{}}
		for _, id := range prev.Withdrawn {
			if s, ok := st.Submission(id); ok {
				res.Withdrawn = append(res.Withdrawn, Taken{ID: s.ID, Text: s.Text, Attachments: orEmpty(s.Attachments)})
			}
		}
		return res, nil
	}
	if turn != 0 && (!st.InFlight() || st.Newest() != turn) {
		return StopResult{Withdrawn: []Taken{}, Reason: fmt.Sprintf("turn %d is no longer in hand", turn)}, nil
	}
	// Take back what the running exchange has not yet delivered; what it already took is being
	// delivered and is stopped with the exchange.
	pulled := map[string]bool{}
	var back []agent.Steer
	if c.ex != nil {
		back = c.ag.Withdraw()
		for _, s := range back {
			pulled[s.Submission] = true
		}
	}
	res := StopResult{Withdrawn: []Taken{}}
	var ps []record.Payload
	var ids []string
	for _, s := range st.Submissions() {
		if s.State != Accepted || (c.handed[s.ID] && !pulled[s.ID]) {
			continue
		}
		ps = append(ps, &record.Submission{ID: s.ID, State: Withdrawn, Reason: "cancelled before it started"})
		ids = append(ids, s.ID)
		res.Withdrawn = append(res.Withdrawn, Taken{ID: s.ID, Text: s.Text, Attachments: orEmpty(s.Attachments)})
	}
	running := c.ex != nil
	if !running && len(ps) == 0 {
		return res, nil // nothing in flight: a quiet success, no record
	}
	ps = append(ps, &record.Stop{Op: op, Turn: turn, Withdrawn: ids, Interrupted: running})
	if err := c.sess.Commit(ps...); err != nil {
		for _, s := range back {
			c.ag.SteerSubmission(s)
		}
		return StopResult{}, err
	}
	if running {
		c.ex.cancel()
	}
	res.Stopped, res.Interrupted = true, running
	return res, nil
}

func orEmpty(a []record.Attachment) []record.Attachment {
	if a == nil {
		return []record.Attachment{}
	}
	return a
}

// Rename records a new title.
func (c *Conv) Rename(op, title string) error {
	if op == "" {
		return errf("bad_request", "op_id is required")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess.Commit(&record.Renamed{Title: title, Op: op})
}

// Close stops the conversation's work and records that it is closed.
func (c *Conv) Close(op string) error {
	if op == "" {
		return errf("bad_request", "op_id is required")
	}
	if _, err := c.Stop(op+"/stop", 0); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess.State().Meta().Closed {
		return nil
	}
	return c.sess.Commit(&record.Closed{Op: op})
}

// Wait blocks until the running exchange (if any) has finished, or ctx ends.
func (c *Conv) Wait(ctx context.Context) error {
	c.mu.Lock()
	ex := c.ex
	c.mu.Unlock()
	if ex == nil {
		return nil
	}
	select {
	case <-ex.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

var _ = time.Now
