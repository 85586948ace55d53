package main

import (
	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/shell"
)

// buildRunner wires the workspace tools and the permission policy.
func buildRunner(ws, mode string, allow, deny []string) (*tool.Runner, error) {
	m, err := tool.ParseMode(mode)
	if err != nil {
		return nil, err
	}
	pol := tool.Policy{Mode: m}
	for _, s := range allow {
		r, err := tool.ParseRule(s)
		if err != nil {
			return nil, err
		}
		pol.Allow = append(pol.Allow, r)
	}
	for _, s := range deny {
		r, err := tool.ParseRule(s)
		if err != nil {
			return nil, err
		}
		pol.Deny = append(pol.Deny, r)
	}
	sh, err := shell.New(ws, shell.Options{})
	if err != nil {
		return nil, err
	}
	tools := []tool.Tool{sh}
	fsTools, err := workspaceTools(ws)
	if err != nil {
		return nil, err
	}
	tools = append(tools, fsTools...)
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		return nil, err
	}
	return &tool.Runner{Tools: reg, Policy: pol}, nil
}

// doors are the tools that act on the session itself: context, transcript and agents (unless the
// child limits turn it off).
func doors(ws string, wired *wiring, f runFlags) []agent.Door {
	ds := agent.Doors()
	if kids := children(ws, wired, f); kids != nil {
		ds = append(ds, kids)
	}
	return ds
}
