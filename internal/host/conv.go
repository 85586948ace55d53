package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/store"
)

// Conv is one conversation: a session (open while it has work, subscribers or recent requests),
// its agent, and the one lock its requests are served under. What becomes of its messages is not
// decided here: the fold judges every step of a submission's life, and the host writes what the
// fold's plans return (fold.StopPlan, HandPlan, FinishPlan, RestartPlan) and carries out their
// effects — start an exchange, cancel one.
type Conv struct {
	h    *Host
	id   string
	path string // its record file

	mu      sync.Mutex
	sess    *session.Session // nil while the conversation rests
	ag      *agent.Agent
	ex      *exchange
	subs    int         // event subscribers holding the session open
	last    time.Time   // the last request that used the session
	timer   *time.Timer // rests the conversation after Config.IdleAfter
	op      string      // the operation that created it, and the title it gave
	opTitle string
	known   bool // op and opTitle have been read
	// answered is closed, and replaced, when a person's answer to an approval is recorded: the
	// calls waiting for one read theirs from the state (approve.go).
	answered chan struct{}
	// held is the other process that held the conversation's record when this host last tried to
	// open it (a rein run, another host), or nil: the host lists it as held and refuses what needs
	// its session until that process lets go.
	held *fsys.Holder
	// dropping says the conversation's session is to be closed once its running exchange ends:
	// another host took it over (shared.go).
	dropping bool
}

// exchange is the running exchange of a conversation: the handle that cancels it and says when
// its goroutine has finished.
type exchange struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// ID returns the conversation's id.
func (c *Conv) ID() string { return c.id }

// Path returns the conversation's record file.
func (c *Conv) Path() string { return c.path }

// public is the state a client is shown for st (api.Accepted, ...): handed is the host's own
// step of accepted.
func public(st record.SubmissionState) string {
	if st == record.SubmissionHanded {
		return api.Accepted
	}
	return string(st)
}

// openLocked opens the conversation's session if it rests: the record is replayed and a new agent
// built, once the host has a place for it among its open conversations (Host.admit). Called with
// c.mu held; every method that needs the session calls it, then restLocked.
func (c *Conv) openLocked() error {
	c.last = c.h.cfg.Now()
	shared := c.h.cfg.Store != nil
	if c.sess != nil && c.ex == nil && !c.dropping && c.sess.Failed() != nil {
		// A write failed (a full disk; with a store, a write fenced because another host took the
		// conversation over, or the store failing under it): what was written is the truth, so
		// the session is let go and opened again from it, as at a restart — a line half written
		// is set aside — and the conversation goes on once the disk or the store takes writes.
		fmt.Fprintf(c.h.cfg.Log, "rein serve: conversation %s: opened again from its record after %v\n", c.id, c.sess.Failed())
		c.dropLocked()
	}
	if c.sess != nil {
		if c.dropping {
			return errf(api.NotOwner, "this host has let conversation %s go (another host took it over, or the store could not be reached); retry, and it is served from wherever it is now", c.id)
		}
		return nil
	}
	if c.h.ctx.Err() != nil {
		return errHostClosed
	}
	if err := c.h.admit(c); err != nil {
		return err
	}
	if shared {
		if err := c.acquireLocked(); err != nil {
			c.h.release(c)
			return err
		}
	}
	sess, _, err := session.Open(c.path, c.h.cfg.Session)
	var he *journal.HeldError
	if err != nil {
		c.h.release(c)
	}
	if errors.As(err, &he) {
		c.held = &he.Holder
		return heldError(c.id, he.Holder)
	}
	if err != nil {
		return fmt.Errorf("open conversation %s: %w", c.id, err)
	}
	ag, err := c.newAgent(sess)
	if err != nil {
		sess.Close()
		c.h.release(c)
		return fmt.Errorf("open conversation %s: %w", c.id, err)
	}
	c.sess, c.ag, c.held = sess, ag, nil
	// A conversation this host let rest is settled. One that is not was written since by another
	// process (a rein run, another host) that died or was killed mid-exchange: settle it now, as a
	// restart would, before anything is taken up.
	st := sess.Snapshot()
	unsettled := st.InFlight() || !st.IsReady()
	for _, sub := range st.OpenSubmissions() {
		unsettled = unsettled || sub.State == record.SubmissionDelivered
	}
	if unsettled || (shared && c.unsettledShared()) {
		if err := c.reconcileLocked(); err != nil {
			if shared && fenced(err) {
				c.closeLocked()
				return errf(api.NotOwner, "conversation %s was taken over by another host while this one took it up: retry, and it is served from wherever it is now", c.id)
			}
			return errors.Join(fmt.Errorf("open conversation %s: %w", c.id, err), c.closeLocked())
		}
	}
	return nil
}

// heldError is the refusal of a request that needs the session of a conversation another process
// holds.
func heldError(id string, h fsys.Holder) error {
	return errf(api.Held, "conversation %s is held by %s: another rein process is writing it, and a session has one writer at a time. "+
		"If that is a rein serve, talk to the conversation there (rein chat --connect <its URL>); if it is a rein run, resume or chat, wait for it to finish or stop it", id, h)
}

// probeHeldLocked asks again whether the process that held the resting conversation still does,
// without taking the lock from anyone; once it has let go, the conversation's row is read anew
// from what it wrote. Called with c.mu held.
func (c *Conv) probeHeldLocked() {
	if c.held == nil || c.sess != nil {
		return
	}
	h, held, err := journal.Live(c.h.fs(), c.path)
	switch {
	case err != nil:
		return
	case held:
		c.held = &h
		return
	}
	c.held = nil
	if err := c.indexLocked(); err != nil {
		fmt.Fprintf(c.h.cfg.Log, "rein serve: conversation %s: %v\n", c.id, err)
	}
}

// idleLocked reports whether the conversation could rest now: its session is open and nothing
// needs it — no exchange, no subscriber, no child agent at work or reply of one waiting.
func (c *Conv) idleLocked() bool {
	return c.sess != nil && c.ex == nil && c.subs == 0 && !c.childrenBusyLocked() && !c.parkedLocked()
}

// restLocked arms the timer that rests the conversation once it has been idle for IdleAfter.
func (c *Conv) restLocked() {
	if !c.idleLocked() || c.h.cfg.IdleAfter < 0 {
		return
	}
	if c.timer == nil {
		c.timer = time.AfterFunc(c.h.cfg.IdleAfter, c.rest)
		return
	}
	c.timer.Reset(c.h.cfg.IdleAfter)
}

// rest closes the session if the conversation is still idle and has not been used since the timer
// was armed.
func (c *Conv) rest() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.idleLocked() {
		return
	}
	if wait := c.h.cfg.IdleAfter - c.h.cfg.Now().Sub(c.last); wait > 0 {
		c.timer.Reset(wait)
		return
	}
	if err := c.closeLocked(); err != nil {
		fmt.Fprintf(c.h.cfg.Log, "rein serve: conversation %s: %v\n", c.id, err)
	}
}

// closeLocked closes the session and drops the agent; the conversation rests.
func (c *Conv) closeLocked() error {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if c.sess == nil {
		return nil
	}
	err := errors.Join(c.closeChildrenLocked(), c.sess.Close())
	if c.ag != nil {
		err = errors.Join(err, c.ag.Close())
	}
	c.sess, c.ag = nil, nil
	c.h.release(c)
	return err
}

// recover opens a conversation found on disk whose index row could not vouch for it, settles it
// (reconcile), indexes it and lets it rest.
func (c *Conv) recover() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.openLocked(); err != nil {
		if c.held != nil {
			// Another process is writing it: list it as held, from what its record says now.
			return c.indexLocked()
		}
		return err
	}
	err := c.reconcileLocked()
	if err == nil {
		err = c.indexLocked()
	}
	if err == nil && c.parkedLocked() {
		return nil // a held conversation stays open, its hold in its view, until released or stopped
	}
	return errors.Join(err, c.closeLocked())
}

// reconcileLocked settles a conversation opened after a restart: an exchange a crash left in
// flight is quiesced (reason crashed), submissions it had delivered end cancelled, and submissions
// accepted but never delivered are rejected as "host restarted" (fold.RestartPlan), so nothing is
// delivered twice and nothing is silently dropped.
func (c *Conv) reconcileLocked() error {
	if st := c.sess.Snapshot(); st.InFlight() || !st.IsReady() {
		if err := c.ag.Settle(st.Meta().Cwd, c.h.cfg.Version); err != nil {
			return err
		}
	}
	return c.sess.CommitPlan((*fold.State).RestartPlan)
}

// indexLocked writes the conversation's row to the index.
func (c *Conv) indexLocked() error {
	r, err := c.rowLocked()
	if err != nil {
		return err
	}
	return c.h.ix.Put(r)
}

// rowLocked computes the conversation's index row: from the live state when its session is open,
// else from its record, replayed read-only.
func (c *Conv) rowLocked() (Row, error) {
	if !c.known {
		op, title, err := origin(c.path)
		if err != nil {
			return Row{}, err
		}
		c.op, c.opTitle, c.known = op, title, true
	}
	var v view
	if c.sess != nil {
		v = viewOf(c.id, c.sess.Snapshot())
	} else {
		st, _, err := session.Replay(c.h.cfg.Session.FS, c.path)
		if err != nil {
			return Row{}, err
		}
		v = viewOf(c.id, st)
	}
	return Row{ID: c.id, Title: v.Title, Closed: v.Closed, Created: v.created, Updated: v.updated, Working: v.State.Working,
		Phase: v.State.Phase, Seq: v.State.Seq, Path: c.path, Size: fileSize(c.path), Op: c.op, OpTitle: c.opTitle, Backend: v.Backend}, nil
}

// View returns the conversation's view: live while its session is open, else its index row.
func (c *Conv) View() (api.View, error) {
	v, err := c.view()
	return v.View, err
}

// view is the conversation's view with its times.
func (c *Conv) view() (view, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == nil {
		c.probeHeldLocked()
		r, ok, err := c.h.ix.Get(c.id)
		if err != nil {
			return view{}, err
		}
		if ok {
			return c.restingLocked(r), nil
		}
		// No row: read the record and index it (read-only if another process holds it).
		if err := c.openLocked(); err != nil {
			if c.h.cfg.Store != nil && (api.CodeOf(err) == api.NotOwner || errors.Is(err, store.ErrNoConversation)) {
				// Another host owns it and has not indexed it yet (it is being created there):
				// the view is the fold of its rows.
				return c.rowsViewLocked()
			}
			if c.held == nil {
				return view{}, err
			}
			if err := c.indexLocked(); err != nil {
				return view{}, err
			}
			r, _, err := c.h.ix.Get(c.id)
			return c.restingLocked(r), err
		}
		defer c.restLocked()
		if err := c.indexLocked(); err != nil {
			return view{}, err
		}
	}
	return c.liveLocked(), nil
}

// viewOr returns the live view while the session is open, else the view of r.
func (c *Conv) viewOr(r Row) view {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == nil {
		if c.held != nil {
			c.probeHeldLocked()
			if fresh, ok, err := c.h.ix.Get(c.id); err == nil && ok {
				r = fresh // indexed anew if the holder let go
			}
		}
		return c.restingLocked(r)
	}
	return c.liveLocked()
}

// restingLocked is the view of a resting conversation from its row, saying who holds it if
// another process does.
func (c *Conv) restingLocked(r Row) view {
	v := rowView(r)
	if c.held != nil {
		v.Held = holderOf(*c.held)
	}
	return v
}

func (c *Conv) liveLocked() view { return viewOf(c.id, c.sess.Snapshot()) }

// Send accepts a message. It returns as soon as the submission is durable; delivery happens
// behind it, in order. A repeat of op with the same payload answers the recorded outcome.
func (c *Conv) Send(op, text string, atts []record.Attachment, queue bool) (api.SendResult, error) {
	if op == "" {
		return api.SendResult{}, errf(api.BadRequest, "op_id is required: give every send an operation id, and reuse it only to retry that send")
	}
	if text == "" && len(atts) == 0 {
		return api.SendResult{}, errf(api.BadRequest, "the message is empty: send text or an attachment")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sendLocked(op, text, atts, queue, true)
}

// sendLocked is Send under c.mu. again allows one more try after a write fenced by another host's
// takeover, once the session is dropped: the message was not recorded, and the conversation is
// taken up again from the rows wherever it can be.
func (c *Conv) sendLocked(op, text string, atts []record.Attachment, queue, again bool) (api.SendResult, error) {
	if err := c.openLocked(); err != nil {
		return api.SendResult{}, err
	}
	defer c.restLocked()
	st := c.sess.Snapshot()
	prev, seen := st.SubmissionByOp(op)
	closed := st.Meta().Closed
	if seen {
		if !prev.Carries(text, atts) || prev.Queue != queue {
			return api.SendResult{}, errf(api.OpConflict, "operation %s already sent a different message (%s); use a new op_id for a new message", op, prev.ID)
		}
		return api.SendResult{MessageID: prev.ID, State: public(prev.State), Replayed: true}, nil
	}
	if closed {
		return api.SendResult{}, errf(api.Closed, "conversation %s is closed", c.id)
	}
	id := newMessageID()
	if err := c.sess.Commit(&record.Submission{ID: id, Op: op, State: record.SubmissionAccepted, Text: text, Attachments: atts, Queue: queue}); err != nil {
		if c.h.cfg.Store != nil && fenced(err) {
			c.dropLocked()
			if again && c.sess == nil {
				return c.sendLocked(op, text, atts, queue, false)
			}
			return api.SendResult{}, errf(api.NotOwner, "conversation %s was taken over by another host: nothing was accepted here; send it again, and it reaches the conversation wherever it is served now", c.id)
		}
		return api.SendResult{}, err
	}
	if c.ex == nil && c.parkedLocked() && c.h.ctx.Err() == nil {
		// A message to a held conversation releases it: the message is handed to the release's
		// exchange (pump) and delivered once the held window is answered.
		c.releaseLocked("message", "")
	}
	c.pump()
	if err := c.indexLocked(); err != nil {
		return api.SendResult{}, err
	}
	return api.SendResult{MessageID: id, State: api.Accepted}, nil
}

// pump moves waiting submissions on: when no exchange runs, the oldest becomes the next
// exchange's prompt; while one runs, those not queued are handed to it (fold.HandPlan), to be
// delivered as steering at its next turn boundary — unless a Stop has interrupted it, in which case
// they wait for the next exchange. Called with c.mu held.
func (c *Conv) pump() {
	if c.sess.Snapshot().Meta().Closed {
		return
	}
	if c.ex == nil && c.parkedLocked() {
		return // waiting messages wait for a release (Send releases on a new one) or a Stop
	}
	for c.ex == nil {
		s, ok := c.sess.Snapshot().NextPrompt()
		if !ok || !c.start(s) {
			break
		}
	}
	if c.ex == nil {
		return
	}
	if err := c.sess.AppendPlan((*fold.State).HandPlan); err != nil {
		fmt.Fprintf(c.h.cfg.Log, "rein serve: conversation %s: %v\n", c.id, err)
	}
}

// RejectedRefused is the reason a submission is rejected with when the agent refused to take it
// up (a prompt hook refused it, or it cannot fit the window); the detail says why.
const RejectedRefused = agent.RejectedRefused

// start runs an exchange for submission s, and reports whether the next waiting submission may
// be taken up: s began an exchange (then none is), or s was refused and rejected. Called with
// c.mu held.
func (c *Conv) start(s fold.Submission) bool {
	ctx, cancel := context.WithCancel(c.h.ctx)
	ex := &exchange{cancel: cancel, done: make(chan struct{})}
	ag := c.ag
	// The prompt is committed here, under the conversation's lock, so a Stop finds the message
	// either still waiting (and withdraws it, giving its text back) or delivered (and interrupts
	// the exchange): never in between.
	if err := ag.Begin(agent.Prompt{Text: s.Text, Attachments: s.Attachments, Submission: s.ID}); err != nil {
		cancel()
		var refused *agent.PromptRefused
		if !errors.As(err, &refused) {
			fmt.Fprintf(c.h.cfg.Log, "rein serve: conversation %s: %v\n", c.id, err)
			return false // it waits, first in line, for the next pump (a write that failed)
		}
		// A message that can never be taken up as it is must not wait first in line, refused
		// again at every pump with everything behind it: it is rejected, saying why, and the
		// clients keep its text to send again.
		err = c.sess.Commit(&record.Submission{ID: s.ID, State: record.SubmissionRejected, Reason: RejectedRefused, Detail: err.Error()})
		if err != nil {
			fmt.Fprintf(c.h.cfg.Log, "rein serve: conversation %s: %v\n", c.id, err)
			return false
		}
		return true
	}
	c.ex = ex
	c.launch(ctx, ex, ag)
	return true
}

// launch runs the exchange ex has begun, on a goroutine the host waits for at Close. Called with
// c.mu held.
func (c *Conv) launch(ctx context.Context, ex *exchange, ag *agent.Agent) {
	c.h.wg.Add(1)
	go func() {
		defer c.h.wg.Done()
		defer close(ex.done)
		out := ag.Continue(ctx)
		ex.cancel()
		c.finish(ex, out)
	}()
}

// finish ends an exchange: every submission it delivered becomes answered or cancelled, in one
// write (fold.FinishPlan), then the next waiting submission is taken up. What was handed to it and
// not delivered was handed back when it quiesced, and waits with the rest.
func (c *Conv) finish(ex *exchange, out agent.Outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.restLocked()
	var detail string
	if out.Err != nil && !errors.Is(out.Err, context.Canceled) {
		detail = out.Err.Error()
	}
	if !held(out) { // a parked exchange has not ended: its submissions wait with it
		err := c.sess.CommitPlan(func(st *fold.State) []record.Payload { return st.FinishPlan(out.Reason, detail) })
		if err != nil {
			fmt.Fprintf(c.h.cfg.Log, "rein serve: conversation %s: %v\n", c.id, err)
		}
	}
	c.ex = nil
	if c.dropping || (c.h.cfg.Store != nil && c.sess.Failed() != nil) {
		c.dropping = false
		c.dropLocked()
		return
	}
	// A failed session (an fsync error) takes nothing more up: its record says where it stopped.
	if c.h.ctx.Err() == nil && !errors.Is(out.Err, session.ErrFailed) {
		c.pump()
		// A child's reply that came after the exchange's last turn boundary is taken up now — or,
		// after a Stop, recorded without waking the agent (Stop means stop).
		c.afterExchangeLocked()
	}
	if err := c.indexLocked(); err != nil {
		fmt.Fprintf(c.h.cfg.Log, "rein serve: conversation %s: %v\n", c.id, err)
	}
}

// Stop stops whatever the conversation has in flight (DESIGN §12.3). In order, in one write: it
// withdraws every accepted submission, records the Stop; then it interrupts the running exchange,
// which quiesces. turn, when non-zero, is a precondition: stop only if that turn is in hand. A
// Stop whose write fails withdraws and interrupts nothing.
func (c *Conv) Stop(op string, turn int64) (api.StopResult, error) {
	if op == "" {
		return api.StopResult{}, errf(api.BadRequest, "op_id is required: give every Stop press a new operation id")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.openLocked(); err != nil {
		return api.StopResult{}, err
	}
	defer c.restLocked()
	res, err := c.stopLocked(op, turn)
	if err == nil && res.Stopped && !res.Replayed {
		err = c.indexLocked()
	}
	return res, err
}

// stopLocked judges the press against the state at the writer (fold.StopPlan), writes what it
// withdraws and the Stop in one write, then — only once that is durable — interrupts the running
// exchange.
func (c *Conv) stopLocked(op string, turn int64) (api.StopResult, error) {
	ex := c.ex
	var plan fold.StopPlan
	err := c.sess.CommitPlan(func(st *fold.State) []record.Payload {
		plan = st.StopPlan(op, turn, ex != nil)
		return plan.Records
	})
	if err != nil {
		return api.StopResult{}, err
	}
	res := api.StopResult{Withdrawn: []api.Taken{}}
	for _, s := range plan.Withdraw {
		res.Withdrawn = append(res.Withdrawn, taken(s))
	}
	switch {
	case plan.Replay != nil && plan.Conflict:
		return api.StopResult{}, errf(api.OpConflict, "operation %s was a Stop with a different turn", op)
	case plan.Replay != nil:
		res.Stopped, res.Interrupted, res.Replayed = true, plan.Replay.Interrupted, true
		return res, nil
	case plan.Stale:
		res.Reason = fmt.Sprintf("turn %d is no longer in hand", turn)
		return res, nil
	case plan.Records == nil:
		return res, nil // nothing in flight: a quiet success, no record
	}
	if plan.Interrupt {
		ex.cancel()
	}
	if plan.Settle {
		if err := c.settleHeldLocked(); err != nil {
			return api.StopResult{}, err
		}
	}
	res.Stopped, res.Interrupted = true, plan.Interrupt || plan.Settle
	return res, nil
}

func taken(s fold.Submission) api.Taken {
	return api.Taken{ID: s.ID, Text: s.Text, Attachments: orEmpty(s.Attachments)}
}

func orEmpty(a []record.Attachment) []record.Attachment {
	if a == nil {
		return []record.Attachment{}
	}
	return a
}

// Rename records a new title. Renaming to the title it has writes nothing, so a retry is a no-op.
func (c *Conv) Rename(op, title string) error {
	if op == "" {
		return errf(api.BadRequest, "op_id is required")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.openLocked(); err != nil {
		return err
	}
	defer c.restLocked()
	if c.sess.Snapshot().Meta().Title == title {
		return nil
	}
	if err := c.sess.Commit(&record.Renamed{Title: title, Op: op}); err != nil {
		return err
	}
	return c.indexLocked()
}

// Close stops the conversation's work and records that it is closed, under one lock so that no
// message slips in between.
func (c *Conv) Close(op string) error {
	if op == "" {
		return errf(api.BadRequest, "op_id is required")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.openLocked(); err != nil {
		return err
	}
	defer c.restLocked()
	if c.sess.Snapshot().Meta().Closed {
		return nil
	}
	if _, err := c.stopLocked(op+"/stop", 0); err != nil {
		return err
	}
	c.stopChildrenLocked()
	if err := c.sess.Commit(&record.Closed{Op: op}); err != nil {
		return err
	}
	return c.indexLocked()
}

// Transcript answers the context as it would be sent, the survey, the turn index (all of it, a
// page, or none, as page says) and the residues (api.Transcript), encoded as JSON.
func (c *Conv) Transcript(page api.IndexPage) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.openLocked(); err != nil {
		return nil, err
	}
	defer c.restLocked()
	st := c.sess.Snapshot()
	t := api.Transcript{System: st.System(), Messages: st.Context(), Survey: surveyOf(st.Survey()), Index: []api.Row{},
		Residues: residuesOf(st.Residues())}
	switch {
	case page.None:
	case page.Paged:
		t.Index, t.IndexNext = indexPage(st, page.From)
	default:
		t.Index = rowsOf(st.Index())
	}
	return json.Marshal(t)
}

// indexPageBytes is api.IndexPageBytes, a variable for the tests.
var indexPageBytes = api.IndexPageBytes

// indexPage is the index from turn from on, at most indexPageBytes of rows (one at least), and
// the turn the next page starts at, 0 when this one reaches the last.
func indexPage(st *fold.State, from int64) (rows []api.Row, next int64) {
	return fold.IndexPage(st, from, indexPageBytes, func(r fold.Row) (api.Row, int) {
		row := rowOf(r)
		b, _ := json.Marshal(row)
		return row, len(b) + 1
	})
}

// Subscription is an events stream's hold on a conversation: the session stays open until End.
type Subscription struct {
	// Records are the records after the cursor, read back from the file, to send first.
	Records []record.Record
	// Updates are the records and live events published after the subscription began; they may
	// repeat the end of Records (compare sequence numbers).
	Updates <-chan session.Update
	c       *Conv
	sess    *session.Session
	cancel  func()
	once    sync.Once
	// remote says the records come from the store's rows (follow, shared.go), and snap holds the
	// fold of those read so far; holds, that the subscription holds the session open here too.
	remote bool
	holds  bool
	snap   atomic.Pointer[fold.State]
}

// Subscribe opens the conversation's session if it rests and subscribes to it, with the records
// after sequence number after to replay first.
func (c *Conv) Subscribe(after int64) (*Subscription, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h.cfg.Store != nil {
		if c.sess == nil {
			return c.follow(after, nil, nil)
		}
		// The owner's clients read the records from the rows too, and the live events from here.
		live, end := c.sess.Subscribe()
		sub, err := c.follow(after, live, end)
		if err != nil {
			end()
			return nil, err
		}
		sub.sess, sub.holds = c.sess, true
		c.subs++
		return sub, nil
	}
	if err := c.openLocked(); err != nil {
		return nil, err
	}
	updates, cancel := c.sess.Subscribe()
	recs, err := c.sess.RecordsAfter(after)
	if err != nil {
		cancel()
		c.restLocked()
		return nil, err
	}
	c.subs++
	return &Subscription{Records: recs, Updates: updates, c: c, sess: c.sess, cancel: cancel}, nil
}

// State returns the conversation's published state now.
func (s *Subscription) State() api.State {
	if s.remote {
		return StateOf(s.snap.Load())
	}
	return StateOf(s.sess.Snapshot())
}

// End ends the subscription; the conversation may rest again.
func (s *Subscription) End() {
	s.once.Do(func() {
		s.cancel()
		if s.remote && !s.holds {
			return
		}
		s.c.mu.Lock()
		s.c.subs--
		s.c.restLocked()
		s.c.mu.Unlock()
	})
}

// Wait blocks until the conversation has no running exchange (the one running now and any it
// leads to), or ctx ends.
func (c *Conv) Wait(ctx context.Context) error {
	for {
		c.mu.Lock()
		ex := c.ex
		c.mu.Unlock()
		if ex == nil {
			return nil
		}
		select {
		case <-ex.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func newMessageID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "m-" + hex.EncodeToString(b[:])
}
