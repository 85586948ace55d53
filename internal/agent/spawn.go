package agent

import (
	"context"
	"errors"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// Beside returns the Spawner rein's agents use: each child is a session of its own beside its
// parent's (session.Start in the directory of sessions the parent lives in, or session.Fork when it
// inherits), whose session_started is started with the parent's id as Parent. The child runs with
// its parent's configuration but its own tools, from tools (its own shell), and an agents door of
// its own, which takes its parent's limits; it awaits its children before its exchange ends, so its
// reply comes after theirs.
func Beside(opts session.Options, started record.SessionStarted, tools func() (*tool.Runner, error)) Spawner {
	var spawn Spawner
	spawn = func(parent *Agent, inherit bool) (*Agent, error) {
		ps := parent.Session()
		var child *session.Session
		var err error
		if inherit {
			child, err = session.Fork(ps, 0, opts, started)
		} else {
			s := started
			s.Parent = ps.ID()
			child, err = session.Start(ps.ProjectDir(), opts, s)
		}
		if err != nil {
			return nil, err
		}
		runner, err := tools()
		if err != nil {
			return nil, errors.Join(err, child.Close())
		}
		cfg := parent.Config()
		cfg.Session, cfg.Runner, cfg.AwaitChildren, cfg.NoHold = child, runner, true, true
		cfg.Doors = append(Doors(), &Children{Spawn: spawn})
		return New(cfg), nil
	}
	return spawn
}

// CloseChildren ends the agent's children for good: each is stopped, settled and closed, its own
// children first (Children.Close), and then the replies still waiting in the agent's inbox are
// recorded, quiesced with reason, so that nothing a child said is lost. Call it only while no
// exchange runs, when the agent is put away.
func (a *Agent) CloseChildren(reason string) error {
	var err error
	if kids := a.Children(); kids != nil {
		err = kids.Close()
	}
	return errors.Join(err, a.RecordArrivals(reason))
}

// TakeUpLast is TakeUp for an owner whose agent ends with the exchange (rein run). A Stop (ctx
// cancelled) stops the agent's children beside the exchange, not after it; and however the
// exchange ended, no child outlives it (CloseChildren, with the exchange's reason). An error in
// closing them is the outcome's when the exchange had none.
func (a *Agent) TakeUpLast(ctx context.Context, p Prompt) Outcome {
	kids := a.Children()
	if kids == nil {
		return a.TakeUp(ctx, p)
	}
	stop := context.AfterFunc(ctx, kids.Stop)
	res := a.TakeUp(ctx, p)
	stop()
	if err := a.CloseChildren(res.Reason); err != nil && res.Err == nil {
		res.Err = err
	}
	return res
}
