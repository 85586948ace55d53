package host

import (
	"fmt"
	"net/http"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// A person's context edits: evict with a note, rewind, clear, and fork. They are refused while the
// conversation is working — Stop first — so a person's edit never races the agent's loop.

func (c *Conv) edit(op string, p record.Payload, check func(st *fold.State) error) (api.EditResult, error) {
	if op == "" {
		return api.EditResult{}, errf(api.BadRequest, "op_id is required")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.openLocked(); err != nil {
		return api.EditResult{}, err
	}
	defer c.restLocked()
	var res api.EditResult
	var replayed, working bool
	var refusal error
	st := c.sess.Snapshot()
	if seq, ok := st.EditByOp(op); ok {
		res, replayed = api.EditResult{Seq: seq, Survey: surveyOf(st.Survey()), Replayed: true}, true
	} else if working = api.Working(StateOf(st)); !working {
		refusal = check(st)
	}
	switch {
	case replayed:
		return res, nil
	case c.ex != nil || working:
		return api.EditResult{}, errf(api.Busy, "the conversation is working: stop it first, then edit its context")
	case refusal != nil:
		return api.EditResult{}, errf(api.BadRequest, "%v", refusal)
	}
	if err := c.sess.Commit(p); err != nil {
		return api.EditResult{}, err
	}
	st = c.sess.Snapshot()
	res = api.EditResult{Seq: st.Seq(), Survey: surveyOf(st.Survey())}
	return res, c.indexLocked()
}

// Evict takes turns [from, to] out of the context, leaving a residue with the note (authority
// user).
func (c *Conv) Evict(op string, from, to int64, note string) (api.EditResult, error) {
	return c.edit(op, &record.Evicted{From: from, To: to, Note: note, By: record.ByUser, Op: op}, func(st *fold.State) error {
		_, err := st.CheckEviction(from, to, note)
		return err
	})
}

// Rewind withdraws every turn from turn on.
func (c *Conv) Rewind(op string, turn int64) (api.EditResult, error) {
	return c.edit(op, &record.Rewound{Anchor: turn, Op: op}, func(st *fold.State) error { return st.CheckRewind(turn) })
}

// Clear withdraws every turn.
func (c *Conv) Clear(op string) (api.EditResult, error) {
	return c.edit(op, &record.Cleared{Op: op}, func(st *fold.State) error { return nil })
}

// Fork starts a new conversation whose first record inherits this one's context up to turn at
// (0: all of it). A repeat of the operation answers the conversation it made.
func (h *Host) Fork(parent *Conv, op string, at int64) (*Conv, bool, error) {
	if op == "" {
		return nil, false, errf(api.BadRequest, "op_id is required")
	}
	if c := h.madeHere(op); c != nil {
		return c, true, nil
	}
	// A fork only reads its parent: the open session if the parent has one, else its record read
	// read-only, which takes no lock (the parent may be resting, or held by another process). With
	// a store, a resting parent is read from its rows: another host may have written it since this
	// one last did, and the fork's pointers name its record file here, as if it were open here.
	parent.mu.Lock()
	ps := parent.sess
	if ps == nil {
		var err error
		if pfs, ok := h.cfg.Session.FS.(*pointerFS); ok {
			// Read from the rows (pointers.go), as they are now.
			if err = pfs.Refresh(parent.id); err != nil {
				parent.mu.Unlock()
				return nil, false, fmt.Errorf("fork conversation %s: %w", parent.id, err)
			}
		}
		if ps, _, err = session.Load(parent.path, h.cfg.Session); err != nil {
			parent.mu.Unlock()
			return nil, false, fmt.Errorf("fork conversation %s: %w", parent.id, err)
		}
	}
	inh, err := ps.Inheritance(at)
	title := ps.Snapshot().Meta().Title
	parent.mu.Unlock()
	if err != nil {
		return nil, false, errf(api.BadRequest, "cannot fork: %v", err)
	}
	if title != "" {
		title = "fork of " + title
	}
	return h.make(op, title, parent.id, inh)
}

func (s *Server) editRoutes() {
	handle := func(pattern string, fn func(w http.ResponseWriter, r *http.Request) error) {
		s.mux.Handle(pattern, s.guard(fn))
	}
	handle("POST /api/conversations/{id}/evict", func(w http.ResponseWriter, r *http.Request) error {
		var req api.EvictRequest
		return s.editWith(w, r, &req, func(c *Conv) (api.EditResult, error) { return c.Evict(req.Op, req.From, req.To, req.Note) })
	})
	handle("POST /api/conversations/{id}/rewind", func(w http.ResponseWriter, r *http.Request) error {
		var req api.RewindRequest
		return s.editWith(w, r, &req, func(c *Conv) (api.EditResult, error) {
			if req.Files {
				return c.RewindFiles(req.Op, req.Turn)
			}
			return c.Rewind(req.Op, req.Turn)
		})
	})
	handle("POST /api/conversations/{id}/clear", func(w http.ResponseWriter, r *http.Request) error {
		var req api.ClearRequest
		return s.editWith(w, r, &req, func(c *Conv) (api.EditResult, error) { return c.Clear(req.Op) })
	})
	handle("POST /api/conversations/{id}/fork", func(w http.ResponseWriter, r *http.Request) error {
		var req api.ForkRequest
		c, err := s.conv(r)
		if err != nil {
			return err
		}
		if err := decode(r, &req); err != nil {
			return err
		}
		child, replayed, err := s.h.Fork(c, req.Op, req.At)
		if err != nil {
			return err
		}
		status := http.StatusCreated
		if replayed {
			status = http.StatusOK
		}
		v, err := child.View()
		if err != nil {
			return err
		}
		writeJSON(w, status, api.Created{Conversation: v, Replayed: replayed})
		return nil
	})
}

func (s *Server) editWith(w http.ResponseWriter, r *http.Request, req any, do func(c *Conv) (api.EditResult, error)) error {
	c, err := s.conv(r)
	if err != nil {
		return err
	}
	if err := decode(r, req); err != nil {
		return err
	}
	res, err := do(c)
	if err != nil {
		return err
	}
	writeJSON(w, 200, res)
	return nil
}
