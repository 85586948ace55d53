package tool

import (
	"context"
	"errors"

	"github.com/reinhq/rein/internal/record"
)

// Hold is the verdict of a gate that parks the session on a call: it is not run, and the session
// waits, its tool window open, until a release asks again or a Stop settles it (DESIGN §7).
const Hold Verdict = Deny + 1

// ErrPark is an Approver's answer when nobody can answer now and the call is to be held instead
// of refused (a host shutting down while the person has not answered): the session parks on it,
// and a release asks the person again.
var ErrPark = errors.New("the approval is parked: nobody can answer it now")

// Gate is asked about every call before the policy (rein's pre_tool hooks, package hook). Its
// answer is Allow (the policy decides), Ask (the person decides, as the policy's ask does), Deny
// (refused, with the reason) or Hold. It must return once ctx is cancelled.
type Gate interface {
	Before(ctx context.Context, call Call, a Access) GateAnswer
}

// GateAnswer is a gate's answer: a verdict and its reason, and the records that say what was
// decided (one per hook asked), which the agent writes with the call's answer.
type GateAnswer struct {
	Verdict Verdict
	Reason  string
	Notes   []record.Payload
}

// Matches reports whether r applies to a call of tool that would do a, as a deny or ask rule does.
func (r Rule) Matches(tool string, a Access) bool {
	_, ok := r.matches(tool, a)
	return ok
}

// AccessOf is what a call of one of the registry's tools would do, as the policy reads it (the
// zero Access for a tool that does not say, or one the registry does not have).
func (r *Runner) AccessOf(call Call) Access {
	if r == nil || r.Tools == nil {
		return Access{}
	}
	t, ok := r.Tools.Get(call.Name)
	if !ok {
		return Access{}
	}
	if acc, ok := t.(Accessor); ok {
		return acc.Access(call.Args)
	}
	return Access{}
}
