package host

import (
	"context"
	"errors"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/rewind"
)

// RewindFiles withdraws every turn from turn on and puts the workspace's files back as they stood
// when it began (package rewind: a safety snapshot, the withdrawal, the restore, each recorded).
// Like every edit it is refused while the conversation works. A repeat of the operation answers
// the withdrawal it made, without restoring again.
func (c *Conv) RewindFiles(op string, turn int64) (api.EditResult, error) {
	repo := c.h.cfg.Checkpoints
	if repo == nil {
		return api.EditResult{}, errf(api.Unsupported, "this host takes no checkpoints of the files (it was started with --no-checkpoints, or without git): rewind without the files")
	}
	if op == "" {
		return api.EditResult{}, errf(api.BadRequest, "op_id is required")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.openLocked(); err != nil {
		return api.EditResult{}, err
	}
	defer c.restLocked()
	st := c.sess.Snapshot()
	if seq, ok := st.EditByOp(op); ok {
		return api.EditResult{Seq: seq, Survey: surveyOf(st.Survey()), Replayed: true}, nil
	}
	if c.ex != nil || api.Working(StateOf(st)) {
		return api.EditResult{}, errf(api.Busy, "the conversation is working: stop it first, then rewind it")
	}
	if err := st.CheckRewind(turn); err != nil {
		return api.EditResult{}, errf(api.BadRequest, "%v", err)
	}
	ctx := context.Background()
	if _, err := rewind.Target(ctx, st, repo, c.sess.ID(), turn); err != nil {
		return api.EditResult{}, errf(api.BadRequest, "%v", err)
	}
	// A restore an earlier rewind left owed is finished first.
	if _, _, err := rewind.Complete(ctx, c.sess, repo); err != nil {
		return api.EditResult{}, err
	}
	done, err := rewind.Files(ctx, c.sess, repo, turn, op)
	if err != nil {
		return api.EditResult{}, errors.Join(err, c.indexLocked())
	}
	st = c.sess.Snapshot()
	res := api.EditResult{Seq: st.Seq(), Survey: surveyOf(st.Survey()), Files: filesOf(done)}
	return res, c.indexLocked()
}

func filesOf(d record.FilesRestored) *api.FilesRestored {
	f := &api.FilesRestored{Target: d.Target, Safety: d.Safety, Changed: d.Changed, Removed: d.Removed, MoreIgnored: d.MoreIgnored, Outside: rewind.Outside}
	for _, s := range d.NotCovered {
		f.NotCovered = append(f.NotCovered, api.NotCovered{Path: s.Path, Reason: s.Reason})
	}
	return f
}
