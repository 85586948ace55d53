package agent

import (
	"context"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// runBatch runs a reply's tool calls in order and commits all their results at once. A Stop
// (ctx cancelled) stops starting calls: the one running answers for itself (interrupted), the
// finished ones keep their real results, and those never started are answered not_executed — in
// the same one record, so nothing owed outlives the batch.
//
// Each call's result is made durable as soon as the call ends (DESIGN §3.3): its tool_finished
// carries the result exactly as tool_results will, and the next call's tool_started, or the
// results' sync (which runs beside the next request, and which the reply's commit waits for),
// syncs it. So an exchange cut short anywhere (a crash, a panic, a failed write) is settled by the
// quiesce plan with every finished call's own result; only a call still running is answered
// interrupted.
func (a *Agent) runBatch(ctx context.Context, calls []tool.Call) error {
	st := a.sess.Snapshot()
	turn := st.Newest()
	a.edited = nil
	defer func() { a.edited = nil }()
	results := make([]record.ToolResult, 0, len(calls))
	var after []record.Payload
	used, limit := 0, a.batchCap()
	for i, c := range calls {
		if kept, ok := st.Finished(c.ID); ok {
			// A released window: the call finished before the hold, and keeps its result.
			results = append(results, kept)
			continue
		}
		if ctx.Err() != nil {
			results = append(results, record.ToolResult{CallID: c.ID, IsError: true, Outcome: record.NotExecuted,
				Content: fold.WithTrailer(c.Name+" was not executed: the session was stopped before it started.", turn)})
			continue
		}
		if c.ID != a.preStarted {
			if err := a.sess.Commit(&record.ToolStarted{CallID: c.ID, Name: c.Name}); err != nil {
				return err
			}
		}
		a.sess.Publish(session.Live{Kind: "tool_start", CallID: c.ID, Name: c.Name, Text: string(c.Args)})
		start := a.cfg.Now()
		live := newLiveOutput(func(text string) {
			a.sess.Publish(session.Live{Kind: "tool_output", CallID: c.ID, Name: c.Name, Text: text})
		})
		a.mark(MarkTool)
		res, extra := a.runOne(tool.WithLiveOutput(ctx, live), turn, c)
		a.mark(MarkToolDone)
		live.Close()
		if res.Held != "" && a.cfg.NoHold {
			res = tool.Result{Content: "refused: the call was held (" + res.Content + "), and a child agent cannot wait for a release", IsError: true, Outcome: record.Denied, Notes: res.Notes}
		} else if res.Held != "" {
			return a.hold(c, res)
		}
		res = a.afterTool(ctx, c, res)
		after = append(after, extra...)
		if res.Content == "" {
			res.Content = "(no output)"
		}
		res.Content = clipToBatch(res.Content, &used, limit, len(calls)-i)
		r := record.ToolResult{CallID: c.ID, Content: fold.WithTrailer(res.Content, turn), IsError: res.IsError, Outcome: res.Outcome, Images: res.Images}
		fin := &record.ToolFinished{CallID: c.ID, DurationMs: a.cfg.Now().Sub(start).Milliseconds(), ExitCode: res.ExitCode, Outcome: res.Outcome}
		// A result that rests on records written only with the batch's results (an eviction, and
		// every answer after it in the batch, which may have been judged against the context the
		// eviction leaves) is not kept: before those records land it would say what the record
		// does not, so a crash answers it interrupted.
		if len(after) == 0 {
			fin.Content, fin.IsError = r.Content, r.IsError
		}
		if err := a.sess.Append(append(res.Notes, fin)...); err != nil {
			return err
		}
		a.sess.Publish(session.Live{Kind: "tool_end", CallID: c.ID, Name: c.Name, Text: string(res.Outcome)})
		results = append(results, r)
	}
	// The results' fsync runs beside the next request's building and sending; the reply is
	// committed only once it is done (session.AppendBehind).
	ps := append([]record.Payload{&record.ToolResults{Results: results}}, after...)
	if err := a.sess.AppendBehind(ps...); err != nil {
		return err
	}
	a.mark(MarkResults)
	return nil
}

func (a *Agent) runOne(ctx context.Context, turn int64, c tool.Call) (tool.Result, []record.Payload) {
	for _, d := range a.cfg.Doors {
		if d.Spec().Name == c.Name {
			judged, ok := a.judgeDoor(ctx, d, c)
			if !ok {
				return judged, nil
			}
			res, extra := d.Run(ctx, a, turn, c)
			res.Notes = append(judged.Notes, res.Notes...)
			return res, extra
		}
	}
	if a.cfg.Runner == nil {
		return tool.Failure("there is no tool called %s", c.Name), nil
	}
	return a.cfg.Runner.Run(ctx, c), nil
}
