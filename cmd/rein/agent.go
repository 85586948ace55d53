package main

import (
	"context"
	"fmt"
	"io"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/rewind"
	osbox "github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fetch"
	fstool "github.com/reinhq/rein/internal/tool/fs"
	"github.com/reinhq/rein/internal/tool/shell"
	"github.com/reinhq/rein/internal/tool/todo"
	"github.com/reinhq/rein/internal/tool/toolset"
	"github.com/spf13/pflag"
)

// This file is where rein's agents are wired, for rein run and for a host's conversations alike:
// the tools (buildRunner), the doors, the child agents and the configuration that joins them to a
// session and a provider (wire.go resolves the provider).

// agentConfig is the configuration of the agent of sess working in ws, as the flags f and the
// provider wired say, with runner's tools and the doors: the context and transcript doors, and the
// agents door unless the child limits turn it off. What a caller sets beyond this (a resume's
// recorded settings, awaiting children) it sets on the Config.
func agentConfig(sess *session.Session, ws string, wired *wiring, f runFlags, runner *tool.Runner) agent.Config {
	set := wired.toolSet(wired.model)
	cfg := agent.Config{Tools: string(set),
		Session: sess, Client: wired.client, Provider: wired.name, Model: wired.model, MaxTokens: f.maxTokens,
		Thinking: wired.thinking, Effort: wired.effort, WebSearch: f.web.search, System: agent.SystemPrompt(ws) + sandboxNote(f.sandbox.chosen), Runner: runner,
		Doors: agent.Doors(), MaxTurns: f.maxTurns, Window: wired.window, Sandbox: f.sandbox.chosen.String(),
		Checkpoints: f.checkpoints.repo,
		Hooks:       f.hooks,
	}
	if src := sess.Snapshot().Meta().Source; src.Kind != "" {
		cfg.System += importNote(src)
	}
	if lim, ok := f.children.limits(); ok {
		// A child is a session beside its parent's, on the same provider, with tools of its own.
		spawn := agent.Beside(session.Options{Redact: redactText}, record.SessionStarted{
			Provider: wired.name, Model: wired.model, ContextWindow: wired.window, Cwd: ws, Version: version,
			Sandbox: f.sandbox.chosen.String(), Tools: string(set),
		}, func() (*tool.Runner, error) {
			r, err := buildRunner(ws, set, f.permission, f.allow, f.deny, f.sandbox.chosen, f.web.fetchOptions(f.sandbox.chosen))
			if err == nil {
				showImages(r, wired.name, wired.model)
			}
			return r, err
		})
		cfg.Doors = append(cfg.Doors, &agent.Children{Spawn: spawn, Limits: lim})
	}
	return cfg
}

// buildRunner wires the workspace tools of the tool set set (the tools the model was trained on,
// package toolset), todo and web_fetch, the permission policy and the OS sandbox of the bash tool
// (its temporary directory lives until closeSandboxes). A rule naming no tool of any tool set or
// door is refused, saying which was meant: one configuration serves every model.
func buildRunner(ws string, set toolset.Set, mode string, allow, deny []string, box osbox.Policy, web fetch.Options) (*tool.Runner, error) {
	return buildRunnerWith(ws, set, mode, allow, deny, box, web, shell.Options{})
}

// buildRunnerWith is buildRunner with the bash tool's options as opts says (its sandbox aside).
func buildRunnerWith(ws string, set toolset.Set, mode string, allow, deny []string, box osbox.Policy, web fetch.Options, opts shell.Options) (*tool.Runner, error) {
	pol, err := policyFrom(mode, allow, deny)
	if err != nil {
		return nil, err
	}
	sb, err := openSandbox(box, ws)
	if err != nil {
		return nil, err
	}
	opts.Sandbox = sb
	sh, err := shell.New(ws, opts)
	if err != nil {
		return nil, err
	}
	// The file tools (read_file, write_file, edit_file, glob, grep, and the text editor and
	// apply_patch that stand in for them) are confined to the workspace with os.Root.
	files, err := fstool.Open(ws)
	if err != nil {
		return nil, err
	}
	// todo keeps the plan the person sees; it changes nothing outside the session. web_fetch
	// reaches public addresses only, and is offline when the sandbox is (webflags.go).
	tools := append(set.Tools(sh, files), todo.Tool{}, fetch.New(web))
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		return nil, err
	}
	// Rules naming MCP tools are judged once the servers are known (withMCP).
	judged := pol
	judged.Allow, judged.Ask, judged.Deny = notMCP(pol.Allow), notMCP(pol.Ask), notMCP(pol.Deny)
	if err := judged.Check(append(append(toolset.Names(), record.TodoTool, fetch.Name), doorNames()...)); err != nil {
		return nil, err
	}
	return &tool.Runner{Tools: reg, Policy: pol, Owned: []io.Closer{sh}}, nil
}

// doorNames are the names of the doors a session may have (context, transcript, agents), for
// judging the names rules give.
func doorNames() []string {
	var names []string
	for _, d := range append(agent.Doors(), &agent.Children{}) {
		names = append(names, d.Spec().Name)
	}
	return names
}

// hostAgent builds each conversation's agent for a host (rein serve, rein chat): its own tools
// (its own shell and working directory), the conversation's model, and the host's approver, which
// puts the calls the policy asks about (--permission-mode ask) to the person.
func hostAgent(ws string, wired *wiring, f runFlags, servers hostMCP, back offered) func(sess *session.Session, s host.Setup) (*agent.Agent, error) {
	return func(sess *session.Session, s host.Setup) (*agent.Agent, error) {
		if s.Backend != "" && s.Backend != api.BackendRein {
			be := back.backends[s.Backend]
			if be == nil {
				return nil, fmt.Errorf("this conversation runs in %s, which this host does not offer: start it with --backends %s", s.Backend, s.Backend)
			}
			return externalAgent(sess, ws, be, f.permission, s.Approver), nil
		}
		if s.Provider != "" && s.Provider != wired.name {
			return nil, fmt.Errorf("this host talks to provider %s; it cannot switch a conversation to %s", wired.name, s.Provider)
		}
		// A rewind with files that a crash cut short is finished before the conversation goes on
		// (its snapshots are refused until then).
		if repo := f.checkpoints.repo; repo != nil {
			if _, _, err := rewind.Complete(context.Background(), sess, repo); err != nil {
				return nil, fmt.Errorf("finish the restore of the files a rewind began: %w", err)
			}
		}
		model := wired.model
		if s.Model != "" {
			model = s.Model
		}
		set := wired.toolSet(model)
		runner, err := buildRunner(ws, set, f.permission, f.allow, f.deny, f.sandbox.chosen, f.web.fetchOptions(f.sandbox.chosen))
		if err != nil {
			return nil, err
		}
		runner.Approver = s.Approver
		if err := servers.attach(sess, runner); err != nil {
			return nil, err
		}
		cfg := agentConfig(sess, ws, wired, f, runner)
		if servers.m != nil {
			cfg.System += servers.m.Note()
		}
		cfg.Model, cfg.Tools = model, string(set)
		showImages(runner, wired.name, cfg.Model)
		return agent.New(cfg), nil
	}
}

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

// toolSet is the tool set for model on the wire this provider speaks (package toolset).
func (w *wiring) toolSet(model string) toolset.Set {
	wire := toolset.Chat
	switch w.name {
	case "anthropic", "sim":
		wire = toolset.Anthropic
	case "openai-responses":
		wire = toolset.Responses
	}
	return toolset.For(wire, model)
}
