package main

import (
	"path/filepath"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/spf13/pflag"
)

// childFlags bound the child agents a session may start through the agents tool (their ranges
// are judged with the other numeric flags: numberRanges).
type childFlags struct {
	running int // --max-children: at once, over the session's whole tree
	total   int // --max-children-total: in all, per session
}

func (f *childFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&f.running, "max-children", agent.DefaultRunning, "the most child agents (the agents tool) running at once, their own children included; 0 turns the agents tool off")
	fs.IntVar(&f.total, "max-children-total", agent.DefaultTotal, "the most child agents one session may start; 0 turns the agents tool off")
}

// limits are the flags as the agents door takes them; ok is false when either turns it off.
func (f childFlags) limits() (agent.Limits, bool) {
	return agent.Limits{Running: f.running, Total: f.total}, f.running > 0 && f.total > 0
}

// children is the agents door of a session built with f, or nil when the flags turn it off.
func children(ws string, wired *wiring, f runFlags) *agent.Children {
	lim, ok := f.children.limits()
	if !ok {
		return nil
	}
	return &agent.Children{Spawn: spawner(ws, wired, f), Limits: lim}
}

// spawner makes child agents beside their parent's session: each a session of its own whose
// session_started names the parent, inheriting the parent's context when asked. A child has its
// own tools (its own shell) and the same provider; it may start children of its own (its door
// takes the limits of its parent's), and it awaits them before its exchange ends, so its reply
// comes after theirs.
func spawner(ws string, wired *wiring, f runFlags) agent.Spawner {
	var spawn agent.Spawner
	spawn = func(parent *agent.Agent, inherit bool) (*agent.Agent, error) {
		ps := parent.Session()
		var inh *record.Inherited
		if inherit {
			var err error
			if inh, err = ps.Inheritance(0); err != nil {
				return nil, err
			}
		}
		id := session.NewID(time.Now())
		dir := filepath.Join(filepath.Dir(filepath.Dir(ps.Path())), id)
		child, err := session.Create(dir, session.Options{Redact: redactText}, &record.SessionStarted{
			Session: id, Provider: wired.name, Model: wired.model, ContextWindow: wired.window, Cwd: ws, Version: version, Parent: ps.ID(),
			Sandbox: parent.Config().Sandbox,
		})
		if err != nil {
			return nil, err
		}
		if inh != nil {
			if err := child.Commit(inh); err != nil {
				child.Close()
				return nil, err
			}
		}
		box, err := f.sandbox.policy()
		if err != nil {
			child.Close()
			return nil, err
		}
		runner, err := buildRunner(ws, f.permission, f.allow, f.deny, box)
		if err != nil {
			child.Close()
			return nil, err
		}
		cfg := parent.Config()
		cfg.Session, cfg.Runner, cfg.AwaitChildren = child, runner, true
		cfg.Doors = append(agent.Doors(), &agent.Children{Spawn: spawn})
		return agent.New(cfg), nil
	}
	return spawn
}
