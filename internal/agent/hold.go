package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// Held is the Outcome.Reason of an exchange parked on a held call (DESIGN §7, Hold): it is not
// quiesced, its tool window stays open, and only Release or a Stop (Settle, Abandon) moves it on.
const Held = "held"

// MaxContinuations is how many times the stop hooks may have the agent go on in one exchange;
// after that the exchange ends, saying so.
const MaxContinuations = 3

// ErrNotHeld is Release's answer for a session that is not held.
var ErrNotHeld = errors.New("the session is not held: there is nothing to release")

// errHeld ends a tool batch that parked on a held call.
var errHeld = errors.New("the tool window is held")

// hold parks the session on call c, which the gate held: the gate's notes and the hold event, in
// one synced write. Nothing at or after c has run.
func (a *Agent) hold(c tool.Call, res tool.Result) error {
	ps := append(res.Notes, &record.Hold{CallID: c.ID, Reason: res.Content, By: res.Held})
	if err := a.sess.Commit(ps...); err != nil {
		return err
	}
	return errHeld
}

// Release enters a held window again: it records who released it (by: "resume", "message",
// "person"; op: the host operation, if any), puts the calls of the window that had not run to the
// hooks and the policy again, runs or refuses each exactly once, answers the window, and goes on
// with the exchange as Continue does. Calls that finished before the hold keep their results.
func (a *Agent) Release(ctx context.Context, by, op string) Outcome {
	st := a.sess.Snapshot()
	if !st.Parked() {
		return Outcome{Reason: fold.Aborted, Err: ErrNotHeld}
	}
	calls, err := owedCalls(st)
	if err != nil {
		return Outcome{Reason: fold.Aborted, Err: err}
	}
	if err := a.sess.Commit(&record.Released{By: by, Op: op}); err != nil {
		return Outcome{Reason: fold.Aborted, Err: err}
	}
	a.preStarted = ""
	return a.exchange(func() (string, error) {
		if err := a.runBatch(ctx, calls); err != nil {
			if errors.Is(err, errHeld) {
				return Held, nil
			}
			return fold.Aborted, err
		}
		if ctx.Err() != nil {
			return fold.Cancelled, nil
		}
		return a.deliberate(ctx)
	})
}

// ReleaseLast is Release for rein run: the exchange awaits the child agents its model starts, as
// TakeUpLast does.
func (a *Agent) ReleaseLast(ctx context.Context, by string) Outcome {
	kids := a.Children()
	if kids == nil {
		return a.Release(ctx, by, "")
	}
	stop := context.AfterFunc(ctx, kids.Stop)
	res := a.Release(ctx, by, "")
	stop()
	if res.Reason != Held {
		if err := a.CloseChildren(res.Reason); err != nil && res.Err == nil {
			res.Err = err
		}
	}
	return res
}

// Abandon settles a held session as a Stop does: every call of the window that had not run is
// answered not_executed (the held one saying it was held), the finished ones with their results,
// and the exchange is quiesced, reason cancelled.
func (a *Agent) Abandon() error {
	if !a.sess.Snapshot().Parked() {
		return ErrNotHeld
	}
	return a.quiesce(fold.Cancelled)
}

// owedCalls are the calls the newest assistant turn owes, in order, as the model made them.
func owedCalls(st *fold.State) ([]tool.Call, error) {
	t, ok := st.Turn(st.Newest())
	if !ok || len(t.Messages) == 0 {
		return nil, fmt.Errorf("the held turn %d is not in the record", st.Newest())
	}
	owed := map[string]bool{}
	for _, id := range st.Owed() {
		owed[id] = true
	}
	var calls []tool.Call
	for _, p := range t.Messages[0].Parts {
		if p.Type == record.PartToolCall && owed[p.CallID] {
			calls = append(calls, tool.Call{ID: p.CallID, Name: p.Name, Args: p.Args})
		}
	}
	if len(calls) != len(owed) {
		return nil, fmt.Errorf("the held turn %d makes %d of the %d calls it owes", st.Newest(), len(calls), len(owed))
	}
	return calls, nil
}

// afterTool runs the post_tool hooks on the result of a call that ran (not one refused or never
// started).
func (a *Agent) afterTool(ctx context.Context, c tool.Call, res tool.Result) tool.Result {
	if !a.hooks.Has(record.HookPostTool) || res.Outcome == record.NotExecuted || res.Outcome == record.Denied || ctx.Err() != nil {
		return res
	}
	out, notes := a.hooks.After(ctx, c, a.accessOf(c), res)
	out.Notes = append(res.Notes, notes...)
	return out
}

func (a *Agent) accessOf(c tool.Call) tool.Access {
	for _, d := range a.cfg.Doors {
		if d.Spec().Name == c.Name {
			return doorAccess(d, c)
		}
	}
	return a.cfg.Runner.AccessOf(c)
}

// promptHooks runs the prompt hooks on a prompt: the records to write before it, the steering
// lines to write after it, or why it is refused.
func (a *Agent) promptHooks(text string) (before, after []record.Payload, refused string) {
	if !a.hooks.Has(record.HookPrompt) {
		return nil, nil, ""
	}
	pa := a.hooks.Prompt(context.Background(), text)
	for _, c := range pa.Context {
		after = append(after, &record.Steering{Text: "[rein: a prompt hook adds: " + c + "]", Source: "hook"})
	}
	return pa.Notes, after, pa.Refused
}

// RejectedRefused is the reason a host's message is rejected with when it was refused as a prompt
// would be (a PromptRefused): a prompt hook refused it, or it cannot fit the window. The detail
// says why.
const RejectedRefused = "refused"

// judge judges text as a prompt is taken up: against the window room leaves under w, then by the
// prompt hooks (their notes to write before it, their context after it). A refusal is a
// *PromptRefused; a prompt too large runs no hook.
func (a *Agent) judge(text string, room, w int64) (before, after []record.Payload, err error) {
	if err := tooLarge(text, room, w); err != nil {
		return nil, nil, &PromptRefused{Err: err}
	}
	before, after, refused := a.promptHooks(text)
	if refused != "" {
		return before, nil, &PromptRefused{Reason: refused}
	}
	return before, after, nil
}

// deliverHanded delivers, at a turn boundary, the host's messages handed to the exchange, each
// judged as a prompt is (judge); one refused is rejected with the reason instead of delivered.
// With prompt hooks, they run before the write, on the messages handed by then; one handed
// meanwhile waits for the next boundary (or, the exchange ending, for its own).
func (a *Agent) deliverHanded() error {
	hooked := a.hooks.Has(record.HookPrompt)
	w := a.window()
	room := a.room(w) // outside the plan, which runs under the session's writer
	type verdict struct {
		before, after []record.Payload
		err           error
	}
	var judged map[string]verdict
	if hooked {
		judged = map[string]verdict{}
		for _, p := range a.sess.Snapshot().DeliveryPlan() {
			s := p.(*record.Steering)
			var v verdict
			v.before, v.after, v.err = a.judge(s.Text, room, w)
			judged[s.Submission] = v
		}
	}
	return a.sess.AppendPlan(func(st *fold.State) []record.Payload {
		var out []record.Payload
		for _, p := range st.DeliveryPlan() {
			s := p.(*record.Steering)
			v, ok := judged[s.Submission]
			switch {
			case hooked && !ok:
				continue // handed after the hooks ran: judged at the next boundary
			case !hooked:
				if err := tooLarge(s.Text, room, w); err != nil {
					v.err = &PromptRefused{Err: err}
				}
			}
			out = append(out, v.before...)
			if v.err != nil {
				out = append(out, &record.Submission{ID: s.Submission, State: record.SubmissionRejected, Reason: RejectedRefused, Detail: v.err.Error()})
				continue
			}
			out = append(out, s)
			out = append(out, v.after...)
		}
		return out
	})
}

// steer delivers a queued line as steering; a person's is judged first as a prompt is (judge), and
// one refused is kept for the Outcome instead.
func (a *Agent) steer(t Steer) error {
	var before, after []record.Payload
	var err error
	if t.Person {
		w := a.window()
		before, after, err = a.judge(t.Text, a.room(w), w)
	}
	if len(before) > 0 {
		if err := a.sess.Append(before...); err != nil {
			return err
		}
	}
	if err != nil {
		a.mu.Lock()
		a.refused = append(a.refused, Refusal{Text: t.Text, Why: err.Error()})
		a.mu.Unlock()
		return nil
	}
	return a.sess.Append(append([]record.Payload{&record.Steering{Text: t.Text, Source: "user"}}, after...)...)
}

// PromptRefused is Begin's error when the prompt cannot be taken up as it is: a prompt hook
// refused it (Reason), or rein did (Err: a *PromptTooLarge). Nothing was committed but the hooks'
// records. A host rejects the message, saying why; the person may send it again changed.
type PromptRefused struct {
	Reason string
	Err    error
}

func (e *PromptRefused) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return "a prompt hook refused the prompt: " + e.Reason
}

func (e *PromptRefused) Unwrap() error { return e.Err }

// stopHooks asks the stop hooks whether an exchange that would end should go on; continued counts
// how often they have had it go on already. Going on is harness-authored steering, never the
// person's voice, and bounded by MaxContinuations.
func (a *Agent) stopHooks(ctx context.Context, continued *int) (bool, error) {
	if !a.hooks.Has(record.HookStop) || ctx.Err() != nil {
		return false, nil
	}
	if *continued >= MaxContinuations {
		return false, a.sess.Append(&record.Failure{Message: fmt.Sprintf("the stop hooks had the agent go on %d times in this exchange, the most they may; it ends here", MaxContinuations)})
	}
	sa := a.hooks.Stop(ctx, *continued)
	ps := sa.Notes
	switch {
	case sa.Failed != "":
		ps = append(ps, &record.Failure{Message: sa.Failed})
	case sa.GoOn != "" && ctx.Err() == nil:
		*continued++
		ps = append(ps, &record.Steering{Text: "[rein: a stop hook asks you to go on: " + sa.GoOn + "]", Source: "hook"})
	}
	if len(ps) > 0 {
		if err := a.sess.Append(ps...); err != nil {
			return false, err
		}
	}
	return sa.GoOn != "" && sa.Failed == "" && ctx.Err() == nil, nil
}
