package agent

import (
	"context"
	"encoding/json"

	"github.com/reinhq/rein/internal/checkpoint"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// Workspace checkpoints (Config.Checkpoints): the loop snapshots the workspace when it takes a
// prompt up (the person's own edits) and after each tool batch that could have changed files, and
// records each snapshot that made a commit as a checkpoint event.
//
// A snapshot adds no latency to a turn: it runs beside the next provider request, and the loop
// waits for it only before the next tool batch runs and before the exchange ends, so snapshots
// are taken, and recorded, in turn order, and none is still running when a session closes.

// snapResult is what a snapshot running in the background took.
type snapResult struct {
	turn int64
	cp   checkpoint.Checkpoint
	err  error
}

// startSnapshot snapshots the workspace for turn in the background, after the one still running
// (if any) is recorded.
func (a *Agent) startSnapshot(turn int64) error {
	repo := a.cfg.Checkpoints
	if repo == nil {
		return nil
	}
	err := a.settleSnapshot()
	done := make(chan snapResult, 1)
	a.mu.Lock()
	a.snap = done
	a.mu.Unlock()
	id := a.sess.ID()
	go func() {
		// Not the exchange's context: a Stop ends the exchange, not the snapshot of what its
		// tools did, which the loop waits for before it returns.
		cp, err := repo.Snapshot(context.Background(), id, turn)
		done <- snapResult{turn: turn, cp: cp, err: err}
	}()
	return err
}

// settleSnapshot waits for the snapshot running in the background, if any, and records it: a
// checkpoint event when it made a commit or failed; nothing when the tree was unchanged.
func (a *Agent) settleSnapshot() error {
	a.mu.Lock()
	done := a.snap
	a.snap = nil
	a.mu.Unlock()
	if done == nil {
		return nil
	}
	r := <-done
	switch {
	case r.err != nil:
		return a.sess.Append(&record.Checkpoint{Turn: r.turn, Error: r.err.Error()})
	case r.cp.Changed:
		return a.sess.Append(&record.Checkpoint{Turn: r.turn, Commit: r.cp.Commit, Skipped: skippedPaths(r.cp.Skipped)})
	}
	return nil
}

// skippedPaths are a snapshot's skipped paths as a record holds them.
func skippedPaths(skips []checkpoint.Skip) []record.SkippedPath {
	if len(skips) == 0 {
		return nil
	}
	out := make([]record.SkippedPath, len(skips))
	for i, s := range skips {
		out[i] = record.SkippedPath{Path: s.Path, Reason: string(s.Reason), Size: s.Size}
	}
	return out
}

// mayWrite reports whether a batch could have changed files: it holds a call of a tool not known
// to only read (bash, the file tools that write, any tool that declares no effect). The doors act
// on the session, never on files.
func (a *Agent) mayWrite(calls []tool.Call) bool {
	if a.cfg.Runner == nil || a.cfg.Runner.Tools == nil {
		return false
	}
	for _, c := range calls {
		t, ok := a.cfg.Runner.Tools.Get(c.Name)
		if !ok {
			continue // a door, or no such tool: nothing ran
		}
		if !readsOnly(t, c.Args) {
			return true
		}
	}
	return false
}

func readsOnly(t tool.Tool, args json.RawMessage) bool {
	acc, ok := t.(tool.Accessor)
	return ok && acc.Access(args).Effect == tool.EffectRead
}
