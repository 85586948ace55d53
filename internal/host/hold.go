package host

import (
	"context"
	"net/http"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
)

// A conversation parked on a held tool call (DESIGN §7, Hold): a hook held the call, or the host
// stopped while the person had not answered an approval. It stays open (it is not idle: its
// exchange is in flight, unquiesced) across requests and host restarts, its view carries the hold,
// and it moves on only by a release — a person's (Release), or a message's (pump) — which asks the
// hooks and the person again and runs or refuses the call then, once; or by a Stop, which answers
// its calls not_executed (fold.StopPlan.Settle).

// parkedLocked reports whether the conversation's session is parked on a held call.
func (c *Conv) parkedLocked() bool { return c.sess != nil && c.sess.Snapshot().Parked() }

// Release releases the conversation's held call for op: a quiet success (Released false) when it
// is not held, or when its release is already running.
func (c *Conv) Release(op string) (api.ReleaseResult, error) {
	if op == "" {
		return api.ReleaseResult{}, errf(api.BadRequest, "op_id is required: give every release an operation id")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.openLocked(); err != nil {
		return api.ReleaseResult{}, err
	}
	defer c.restLocked()
	if c.h.ctx.Err() != nil {
		return api.ReleaseResult{}, errHostClosed
	}
	if c.ex != nil || !c.parkedLocked() {
		return api.ReleaseResult{}, nil
	}
	c.releaseLocked("person", op)
	if err := c.indexLocked(); err != nil {
		return api.ReleaseResult{}, err
	}
	return api.ReleaseResult{Released: true}, nil
}

// releaseLocked runs the release of the held window as the conversation's exchange. Called with
// c.mu held, no exchange running and the session parked.
func (c *Conv) releaseLocked(by, op string) {
	ctx, cancel := context.WithCancel(c.h.ctx)
	ex := &exchange{cancel: cancel, done: make(chan struct{})}
	c.ex = ex
	ag := c.ag
	c.h.wg.Add(1)
	go func() {
		defer c.h.wg.Done()
		defer close(ex.done)
		out := ag.Release(ctx, by, op)
		ex.cancel()
		c.finish(ex, out)
	}()
}

// settleHeldLocked answers a held window after a Stop's record is durable: every call that had not
// run is answered not_executed, and the exchange's submissions end cancelled.
func (c *Conv) settleHeldLocked() error {
	if err := c.ag.Abandon(); err != nil {
		return err
	}
	return c.sess.CommitPlan(func(st *fold.State) []record.Payload { return st.FinishPlan(fold.Cancelled, "") })
}

// held reports whether an exchange's outcome parked it.
func held(out agent.Outcome) bool { return out.Reason == agent.Held }

func (s *Server) releaseRoutes() {
	s.mux.Handle("POST /api/conversations/{id}/release", s.guard(func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.conv(r)
		if err != nil {
			return err
		}
		var req api.ReleaseRequest
		if err := decode(r, &req); err != nil {
			return err
		}
		res, err := c.Release(req.Op)
		if err != nil {
			return err
		}
		writeJSON(w, 200, res)
		return nil
	}))
}
