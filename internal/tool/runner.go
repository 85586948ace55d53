package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/reinhq/rein/internal/record"
)

// Approver puts a call the policy routed to the person, and waits for the answer. It must return
// once ctx is cancelled (a Stop ends the wait).
type Approver interface {
	Approve(ctx context.Context, call Call) (bool, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, call Call) (bool, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, call Call) (bool, error) { return f(ctx, call) }

// Runner runs calls through the three gates every call passes: the registry (a known tool and
// arguments matching its schema), the policy (with the person's approval where it asks), then the
// tool. Every path returns a Result with a truthful Outcome, never an error: a call is always
// answered.
type Runner struct {
	Tools  *Registry
	Policy Policy
	// Approver is asked when the policy says ask. Nil refuses such calls, saying why.
	Approver Approver
	// Refresh, when set, is asked at each turn boundary whether the tools changed (an MCP server's
	// list did); it returns the new registry and the records that say so, or nil when nothing
	// changed. The agent swaps Tools between turns, when no call is running.
	Refresh func() (*Registry, []record.Payload)
	// Gate, when set, is asked before the policy (the pre_tool hooks).
	Gate Gate
	// Owned are what the runner's tools hold that end with it (the bash tool's spare shell), closed
	// by Close. Tools shared with other runners (a host's MCP servers) are not among them.
	Owned []io.Closer
}

// Close closes what the runner owns; calls still running go on.
func (r *Runner) Close() error {
	var errs []error
	for _, c := range r.Owned {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// Run answers call. A ctx cancelled before the tool starts yields NotExecuted; once started, the
// tool's own Result stands (Interrupted if the cancellation cut it short).
func (r *Runner) Run(ctx context.Context, call Call) Result {
	if ctx.Err() != nil {
		return notExecuted("the session was stopped before it started")
	}
	if err := r.Tools.Check(call); err != nil {
		return Result{Content: err.Error(), IsError: true, Outcome: record.Failed}
	}
	t, _ := r.Tools.Get(call.Name)
	if len(call.Args) == 0 {
		call.Args = json.RawMessage("{}")
	}
	var a Access
	if acc, ok := t.(Accessor); ok {
		a = acc.Access(call.Args)
	}
	judged, ok := r.Judge(ctx, call, a)
	if !ok {
		return judged
	}
	res := runSafely(ctx, t, call)
	res.Notes = append(judged.Notes, res.Notes...)
	return res
}

// Judge puts a call that would do a through the gate, the policy, and the person where either
// asks; ok is true when the call may run now, else res answers it (denied, held, or not_executed
// if ctx ended the wait). Either way res.Notes holds what the gate recorded. Run judges every call
// of the registry's tools with it; the agent judges its doors (context, transcript, agents) with
// it too, so that rules and hooks on them take effect.
func (r *Runner) Judge(ctx context.Context, call Call, a Access) (Result, bool) {
	var g GateAnswer
	if r.Gate != nil {
		g = r.Gate.Before(ctx, call, a)
	}
	with := func(res Result) Result { res.Notes = g.Notes; return res }
	switch {
	case ctx.Err() != nil:
		return with(notExecuted("the session was stopped before it started")), false
	case g.Verdict == Deny:
		return with(Denied("refused by a hook: " + g.Reason)), false
	case g.Verdict == Hold:
		return with(Result{Content: g.Reason, IsError: true, Outcome: record.NotExecuted, Held: "hook"}), false
	}
	p := r.Policy
	if rs, ok := r.Approver.(RuleSource); ok {
		p.Allow = append(p.Allow[:len(p.Allow):len(p.Allow)], rs.Rules()...)
	}
	d := p.Decide(call.Name, a)
	if g.Verdict == Ask && d.Verdict == Allow {
		d = Decision{Ask, "a hook asks the person: " + g.Reason}
	}
	switch d.Verdict {
	case Allow:
	case Ask:
		if r.Tools != nil {
			if pv, ok := r.Tools.lookup(call.Name).(Previewer); ok {
				call.Preview = pv.Preview(call.Args)
			}
		}
		call.Offer = Offer(call.Name, a)
		if res, ok := r.ask(ctx, call, d); !ok {
			return with(res), false
		}
	default:
		return with(Denied("refused: " + d.Reason)), false
	}
	if ctx.Err() != nil {
		return with(notExecuted("the session was stopped before it started")), false
	}
	return with(Result{}), true
}

// ask puts call to the approver; ok is true when it may run, else res answers it.
func (r *Runner) ask(ctx context.Context, call Call, d Decision) (res Result, ok bool) {
	if r.Approver == nil {
		return Denied(fmt.Sprintf("refused: this call needs the person's approval (%s), and no one can be asked in this session", d.Reason)), false
	}
	yes, err := r.Approver.Approve(ctx, call)
	switch {
	case errors.Is(err, ErrPark):
		return Result{Content: "the person's approval was not answered before the host stopped (" + d.Reason + ")", IsError: true, Outcome: record.NotExecuted, Held: "approval"}, false
	case ctx.Err() != nil:
		return notExecuted("the session was stopped while the call waited for approval"), false
	case err != nil:
		return Denied(fmt.Sprintf("refused: asking for approval failed: %v", err)), false
	case !yes:
		return Denied(fmt.Sprintf("refused: the person declined this call (%s)", d.Reason)), false
	}
	return Result{}, true
}

// runSafely runs t, turning a panic into a failed result and an unset Outcome into the one
// IsError implies.
func runSafely(ctx context.Context, t Tool, call Call) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			res = Result{Content: fmt.Sprintf("the tool %s failed unexpectedly: %v", call.Name, p), IsError: true, Outcome: record.Failed}
		}
	}()
	res = t.Run(ctx, call)
	if res.Outcome == "" {
		res.Outcome = record.OK
		if res.IsError {
			res.Outcome = record.Failed
		}
	}
	return res
}

// Success is the Result of a call that did what it was asked.
func Success(content string) Result {
	return Result{Content: content, Outcome: record.OK}
}

// Denied is the Result of a refused call.
func Denied(reason string) Result {
	return Result{Content: reason, IsError: true, Outcome: record.Denied}
}

// Failure is the Result of a call that ran and failed, or whose arguments were wrong.
func Failure(format string, a ...any) Result {
	return Result{Content: fmt.Sprintf(format, a...), IsError: true, Outcome: record.Failed}
}

func notExecuted(why string) Result {
	return Result{Content: "not run: " + why, IsError: true, Outcome: record.NotExecuted}
}

// lookup is the tool called name, or nil.
func (r *Registry) lookup(name string) Tool {
	t, _ := r.Get(name)
	return t
}
