package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/hook"
	"github.com/reinhq/rein/internal/mcp"
	"github.com/spf13/cobra"
)

// config is rein's configuration file, $XDG_CONFIG_HOME/rein/config.toml (or
// ~/.config/rein/config.toml). Flags override the environment, which overrides the file
// (DESIGN §13). Keys are never read from it: they come from the environment.
type config struct {
	Provider       string   `toml:"provider"`
	Model          string   `toml:"model"`
	BaseURL        string   `toml:"base_url"`
	ContextWindow  int64    `toml:"context_window"`
	PermissionMode string   `toml:"permission_mode"`
	Allow          []string `toml:"allow"`
	Deny           []string `toml:"deny"`
	MaxTurns       int      `toml:"max_turns"`
	MaxTokens      int      `toml:"max_tokens"`
	Thinking       int      `toml:"thinking"` // a budget in tokens, applied where the provider takes one
	Effort         string   `toml:"effort"`   // applied where the provider takes one
	// The child agent limits; 0 is a value of its own (the agents tool off), so unset is nil.
	MaxChildren      *int `toml:"max_children"`
	MaxChildrenTotal *int `toml:"max_children_total"`
	// The OS sandbox of commands (--sandbox, --allow-network, --sandbox-write, --protect-git).
	Sandbox      string   `toml:"sandbox"`
	AllowNetwork bool     `toml:"allow_network"`
	SandboxWrite []string `toml:"sandbox_write"`
	ProtectGit   bool     `toml:"protect_git"`
	// MCP servers, with Codex's keys (internal/mcp).
	MCPServers map[string]mcp.ConfigServer `toml:"mcp_servers"`
	// Workspace checkpoints: on unless checkpoints = false; in / and the home directory only with
	// checkpoints_anywhere.
	Checkpoints         *bool `toml:"checkpoints"`
	CheckpointsAnywhere bool  `toml:"checkpoints_anywhere"`
	// Hooks are the person's own hooks ([[hooks.pre_tool]] and so on, package hook).
	Hooks hook.Config `toml:"hooks"`
	// The model's reach onto the web (--allow-web-fetch, --web-fetch-private, --web-search).
	AllowWebFetch   bool `toml:"allow_web_fetch"`
	WebFetchPrivate bool `toml:"web_fetch_private"`
	WebSearch       bool `toml:"web_search"`
	// Store is rein serve's --store: a PostgreSQL URL to keep conversations in, shared with other
	// hosts ($REIN_STORE and the flag come first).
	Store string `toml:"store"`
}

func configPath(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "rein", "config.toml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "rein", "config.toml")
	}
	return ""
}

// loadConfig reads the file (absent is fine), refusing unknown keys by name, then lets
// REIN_PROVIDER, REIN_MODEL and REIN_BASE_URL override it.
func loadConfig(getenv func(string) string) (config, error) {
	var c config
	if path := configPath(getenv); path != "" {
		md, err := toml.DecodeFile(path, &c)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return c, fmt.Errorf("the config file %s does not read: %v", path, err)
		default:
			values := map[string]int64{"max_turns": int64(c.MaxTurns), "max_tokens": int64(c.MaxTokens), "context_window": c.ContextWindow}
			for k, v := range map[string]*int{"max_children": c.MaxChildren, "max_children_total": c.MaxChildrenTotal} {
				if v != nil {
					values[k] = int64(*v)
				}
			}
			if err := checkConfigNumbers(path, func(k string) bool { return md.IsDefined(k) }, func(k string) int64 { return values[k] }); err != nil {
				return c, err
			}
			if un := md.Undecoded(); len(un) > 0 {
				var keys []string
				for _, k := range un {
					keys = append(keys, k.String())
				}
				sort.Strings(keys)
				return c, fmt.Errorf("the config file %s has keys rein does not know: %s (it knows provider, model, base_url, context_window, permission_mode, allow, deny, max_turns, max_tokens, thinking, effort, max_children, max_children_total, sandbox, allow_network, sandbox_write, protect_git, mcp_servers, checkpoints, checkpoints_anywhere, allow_web_fetch, web_fetch_private, web_search, store, and hooks.pre_tool, hooks.post_tool, hooks.prompt, hooks.stop with match, command, timeout_sec)", path, strings.Join(keys, ", "))
			}
			if c.Thinking != 0 && c.Thinking < agent.MinThinking {
				return c, fmt.Errorf("the config file %s sets thinking = %d: a budget is at least %d tokens (or 0 for off)", path, c.Thinking, agent.MinThinking)
			}
			if c.Effort != "" && !slices.Contains(efforts, c.Effort) {
				return c, fmt.Errorf("the config file %s sets effort = %q: it takes %s", path, c.Effort, strings.Join(efforts, ", "))
			}
		}
	}
	for env, dst := range map[string]*string{"REIN_PROVIDER": &c.Provider, "REIN_MODEL": &c.Model, "REIN_BASE_URL": &c.BaseURL} {
		if v := getenv(env); v != "" {
			*dst = v
		}
	}
	return c, nil
}

// configure loads the configuration (the file, then the environment) once, for a command that
// talks to a model, and fills every flag of cmd the person did not set from it. The provider,
// model, base URL, thinking budget and effort are kept in f (providerFlags.file) and applied later,
// in resolveProvider, because a resumed session's recorded settings come before them.
func (f *runFlags) configure(cmd *cobra.Command) error {
	c, err := loadConfig(os.Getenv)
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	f.file = c
	if ws, err := workspace(f.cwd); err == nil { // a bad --cwd is said where it is used
		if f.hooks, err = loadHooks(cmd.ErrOrStderr(), c, ws); err != nil {
			return exitf(exitUsage, "%v", err)
		}
	}
	set := func(name, value string) error {
		fl := cmd.Flags().Lookup(name)
		if fl == nil || fl.Changed || value == "" {
			return nil
		}
		if err := fl.Value.Set(value); err != nil {
			return exitf(exitUsage, "the config file's %s: %v", strings.ReplaceAll(name, "-", "_"), err)
		}
		return nil
	}
	num := func(n int64) string {
		if n == 0 {
			return ""
		}
		return strconv.FormatInt(n, 10)
	}
	yes := func(b bool) string {
		if b {
			return "true"
		}
		return ""
	}
	opt := func(n *int) string {
		if n == nil {
			return ""
		}
		return strconv.Itoa(*n)
	}
	for name, value := range map[string]string{
		"permission-mode": c.PermissionMode, "context-window": num(c.ContextWindow),
		"max-turns": num(int64(c.MaxTurns)), "max-tokens": num(int64(c.MaxTokens)),
		"max-children": opt(c.MaxChildren), "max-children-total": opt(c.MaxChildrenTotal),
		"sandbox": c.Sandbox, "allow-network": yes(c.AllowNetwork), "protect-git": yes(c.ProtectGit),
		"no-checkpoints": yes(c.Checkpoints != nil && !*c.Checkpoints), "checkpoints-anywhere": yes(c.CheckpointsAnywhere),
		"allow-web-fetch": yes(c.AllowWebFetch), "web-fetch-private": yes(c.WebFetchPrivate), "web-search": yes(c.WebSearch),
	} {
		if err := set(name, value); err != nil {
			return err
		}
	}
	// Rules are set one by one (each Set appends): a rule may hold a comma. Allow rules given as
	// flags replace the file's, as every setting does; deny rules add to them, so that a --deny
	// for one run never lifts a refusal the file makes.
	for _, r := range c.Allow {
		if err := set("allow", r); err != nil {
			return err
		}
	}
	for _, d := range c.SandboxWrite {
		if err := set("sandbox-write", d); err != nil {
			return err
		}
	}
	if fl := cmd.Flags().Lookup("deny"); fl != nil {
		for _, r := range c.Deny {
			if err := fl.Value.Set(r); err != nil {
				return exitf(exitUsage, "the config file's deny: %v", err)
			}
		}
	}
	return nil
}

// withSettings fills the provider flags the person left empty from the configuration.
func withSettings(f providerFlags) providerFlags {
	if f.recorded {
		return f
	}
	if f.provider == "" {
		f.provider = f.file.Provider
	}
	if f.model == "" && (f.provider == "" || f.provider == f.file.Provider) {
		f.model = f.file.Model
	}
	if f.baseURL == "" && (f.provider == "" || f.provider == f.file.Provider) {
		f.baseURL = f.file.BaseURL
	}
	return f
}
