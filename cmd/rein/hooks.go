package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/BurntSushi/toml"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/hook"
	"github.com/spf13/cobra"
)

// projectConfig is a project's own configuration, <workspace>/.rein/config.toml. Its hooks run only
// once the person has trusted the file as it is now (rein hooks trust): a changed file asks again.
type projectConfig struct {
	Hooks hook.Config `toml:"hooks"`
}

func projectConfigPath(ws string) string { return filepath.Join(ws, ".rein", "config.toml") }

// maxProjectConfig is the longest project configuration rein reads: settings, not data.
const maxProjectConfig = 1 << 20

// trustPath is where rein keeps the digests of the project files the person trusted: beside the
// sessions, in rein's state directory, never in the project.
func trustPath() (string, error) {
	root, err := stateRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "trusted-hooks.json"), nil
}

func readTrust() (map[string]string, error) {
	p, err := trustPath()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s does not read (%v): remove it and trust the projects again", p, err)
	}
	return m, nil
}

// projectHooks reads a project's hooks file: its hooks, its digest, and whether the person trusted
// this very content. A workspace without the file has no project hooks.
type projectHooks struct {
	path    string
	hooks   []hook.Hook
	digest  string
	trusted bool
}

func readProjectHooks(ws string) (*projectHooks, error) {
	path := projectConfigPath(ws)
	b, size, err := fsys.ReadRegular(path, maxProjectConfig)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the project's configuration: %w", err)
	}
	if size > int64(len(b)) {
		return nil, fmt.Errorf("the project's configuration %s is %d KiB; rein reads at most %d KiB of configuration", path, size>>10, maxProjectConfig>>10)
	}
	var pc projectConfig
	md, err := toml.Decode(string(b), &pc)
	if err != nil {
		return nil, fmt.Errorf("the project's configuration %s does not read: %v", path, err)
	}
	if un := md.Undecoded(); len(un) > 0 {
		var keys []string
		for _, k := range un {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		return nil, fmt.Errorf("the project's configuration %s has keys rein does not know: %s (it knows hooks.pre_tool, hooks.post_tool, hooks.prompt and hooks.stop, each with match, command and timeout_sec)", path, strings.Join(keys, ", "))
	}
	hs, err := hook.Compile(pc.Hooks, path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	ph := &projectHooks{path: path, hooks: hs, digest: hex.EncodeToString(sum[:])}
	trust, err := readTrust()
	if err != nil {
		return nil, err
	}
	ph.trusted = trust[path] == ph.digest
	return ph, nil
}

// loadHooks is the hooks a session in ws runs: the config file's, then the project's if the person
// trusted it as it is. An untrusted project file runs nothing, and says so on warn.
func loadHooks(warn io.Writer, c config, ws string) (*hook.Set, error) {
	var hs []hook.Hook
	if !c.Hooks.Empty() {
		user, err := hook.Compile(c.Hooks, configPath(os.Getenv))
		if err != nil {
			return nil, err
		}
		hs = append(hs, user...)
	}
	ph, err := readProjectHooks(ws)
	if err != nil {
		return nil, err
	}
	if ph != nil && len(ph.hooks) > 0 {
		if ph.trusted {
			hs = append(hs, ph.hooks...)
		} else {
			fmt.Fprintf(warn, "rein: %s has %d hook(s) that are not trusted (new, or changed since trusted): none of them runs; read it, then `rein hooks trust` runs them\n", ph.path, len(ph.hooks))
		}
	}
	if err := hook.Check(hs, append(hookToolNames(), doorNames()...)); err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, nil
	}
	return &hook.Set{Hooks: hs, Workspace: ws}, nil
}

// hookToolNames are the names of the workspace tools every session has.
func hookToolNames() []string {
	return []string{"bash", "read_file", "write_file", "edit_file", "glob", "grep"}
}

func newHooksCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hooks",
		Short: "List the hooks a session here runs, or trust this project's hooks file",
		Long: `Hooks are commands rein runs before and after each tool call (pre_tool, post_tool), on
each prompt (prompt) and when an exchange ends (stop). They come from rein's config
file and from the project's .rein/config.toml. A project's hooks run only once you
have trusted the file as it is now: rein hooks trust records its digest, and a changed
file runs nothing until you trust it again. The README's hooks section says how a
hook answers.`,
	}
	var cwd string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the hooks a session in this workspace runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := workspace(cwd)
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			c, err := loadConfig(os.Getenv)
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			user, err := hook.Compile(c.Hooks, configPath(os.Getenv))
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			ph, err := readProjectHooks(ws)
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			out := cmd.OutOrStdout()
			tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "EVENT\tMATCH\tTIMEOUT\tCOMMAND\tFROM")
			row := func(h hook.Hook, from string) {
				m := "*"
				if h.Match != nil {
					m = h.Match.String()
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.Event, m, h.Timeout, h.Command, from)
			}
			for _, h := range user {
				row(h, h.Source)
			}
			if ph != nil {
				state := "trusted"
				if !ph.trusted {
					state = "NOT TRUSTED: does not run"
				}
				for _, h := range ph.hooks {
					row(h, h.Source+" ("+state+")")
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if len(user) == 0 && (ph == nil || len(ph.hooks) == 0) {
				fmt.Fprintln(out, "no hooks: the README's hooks section shows how to add one")
			}
			return nil
		},
	}
	list.Flags().StringVar(&cwd, "cwd", "", "the workspace (default: the current directory)")
	trust := &cobra.Command{
		Use:   "trust",
		Short: "Trust this project's .rein/config.toml as it is now, so its hooks run",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := workspace(cwd)
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			ph, err := readProjectHooks(ws)
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			if ph == nil {
				return exitf(exitUsage, "%s does not exist: there is nothing to trust", projectConfigPath(ws))
			}
			m, err := readTrust()
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			m[ph.path] = ph.digest
			b, _ := json.MarshalIndent(m, "", "  ")
			p, err := trustPath()
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				return exitf(exitFailed, "%v", err)
			}
			tmp := p + ".tmp"
			if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
				return exitf(exitFailed, "%v", err)
			}
			if err := os.Rename(tmp, p); err != nil {
				return exitf(exitFailed, "%v", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "trusted %s (sha256 %s): its %d hook(s) run from now on; a change to the file stops them until you trust it again\n", ph.path, ph.digest[:16], len(ph.hooks))
			for _, h := range ph.hooks {
				fmt.Fprintf(cmd.OutOrStdout(), "  %s  %s\n", h.Event, h.Command)
			}
			return nil
		},
	}
	trust.Flags().StringVar(&cwd, "cwd", "", "the workspace (default: the current directory)")
	cmd.AddCommand(list, trust, newImportClaudeCmd())
	return cmd
}

func newImportClaudeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "import-claude <settings.json>",
		Short: "Print Claude Code's hooks settings as rein's, to add to a config file",
		Long: `import-claude reads the "hooks" object of a Claude Code settings file
(~/.claude/settings.json, or a project's .claude/settings.json) and prints the hooks
rein can run as rein's [[hooks.…]] tables, for its config file or the project's
.rein/config.toml. It writes nothing itself. What it cannot take over (other events,
matchers written as regular expressions, tools rein does not have) is said on
standard error.

A hook written for Claude Code reads its payload by Claude Code's names; rein's payload
carries hook_event_name, session_id, cwd and tool_input beside its own. Exit 0 and
exit 2 mean the same in both; a JSON answer must be rein's (the README's Hooks section).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := os.ReadFile(args[0])
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			c, skipped, err := hook.ImportClaude(b)
			if err != nil {
				return exitf(exitUsage, "%s: %v", args[0], err)
			}
			for _, s := range skipped {
				fmt.Fprintf(cmd.ErrOrStderr(), "rein: not imported: %s\n", s)
			}
			if c.Empty() {
				return exitf(exitFailed, "%s has no hooks rein can run", args[0])
			}
			if _, err := hook.Compile(c, args[0]); err != nil {
				return exitf(exitFailed, "%v", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "# rein hooks imported from %s\n", args[0])
			return toml.NewEncoder(cmd.OutOrStdout()).Encode(struct {
				Hooks hook.Config `toml:"hooks"`
			}{c})
		},
	}
}
