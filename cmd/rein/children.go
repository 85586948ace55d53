package main

import (
	"path/filepath"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// spawner makes child agents beside their parent's session: each a session of its own whose
// session_started names the parent, inheriting the parent's context when asked. A child has its
// own tools (its own shell) and the same provider; it may start children of its own.
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
		runner, err := buildRunner(ws, f.permission, f.allow, f.deny)
		if err != nil {
			child.Close()
			return nil, err
		}
		cfg := parent.Config()
		cfg.Session, cfg.Runner = child, runner
		cfg.Doors = append(agent.Doors(), &agent.Children{Spawn: spawn})
		return agent.New(cfg), nil
	}
	return spawn
}
