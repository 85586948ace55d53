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
func (a *Agent) runBatch(ctx context.Context, calls []tool.Call) error {
	turn := a.sess.Snapshot().Newest()
	a.edited = nil
	results := make([]record.ToolResult, 0, len(calls))
	var after []record.Payload
	defer func() {
		a.edited = nil
		if p := recover(); p != nil {
			// A panic (in a door, say) ends the exchange, but the calls that finished keep their
			// real results; the rest are answered as the quiesce plan answers them.
			a.answerAfterPanic(results)
			panic(p)
		}
	}()
	for _, c := range calls {
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
		res, extra := a.runOne(ctx, turn, c)
		after = append(after, extra...)
		if res.Content == "" {
			res.Content = "(no output)"
		}
		if err := a.sess.Append(&record.ToolFinished{CallID: c.ID, DurationMs: a.cfg.Now().Sub(start).Milliseconds(), ExitCode: res.ExitCode, Outcome: res.Outcome}); err != nil {
			return err
		}
		a.sess.Publish(session.Live{Kind: "tool_end", CallID: c.ID, Name: c.Name, Text: string(res.Outcome)})
		results = append(results, record.ToolResult{CallID: c.ID, Content: fold.WithTrailer(res.Content, turn), IsError: res.IsError, Outcome: res.Outcome})
	}
	ps := append([]record.Payload{&record.ToolResults{Results: results}}, after...)
	return a.sess.Append(ps...)
}

func (a *Agent) runOne(ctx context.Context, turn int64, c tool.Call) (tool.Result, []record.Payload) {
	for _, d := range a.cfg.Doors {
		if d.Spec().Name == c.Name {
			if res, ok := a.judgeDoor(ctx, d, c); !ok {
				return res, nil
			}
			return d.Run(ctx, a, turn, c)
		}
	}
	if a.cfg.Runner == nil {
		return tool.Failure("there is no tool called %s", c.Name), nil
	}
	return a.cfg.Runner.Run(ctx, c), nil
}

// answerAfterPanic records the results of a batch cut short by a panic: the finished calls' own,
// the others the quiesce plan's (interrupted if started, else not_executed).
func (a *Agent) answerAfterPanic(finished []record.ToolResult) {
	plan := a.sess.Snapshot().QuiescePlan(fold.Aborted)
	if plan == nil {
		return
	}
	for i, r := range plan.Results {
		for _, f := range finished {
			if f.CallID == r.CallID {
				plan.Results[i] = f
			}
		}
	}
	_ = a.sess.Append(plan)
}
