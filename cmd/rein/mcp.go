package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/reinhq/rein/internal/mcp"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
	"github.com/spf13/cobra"
)

// This file wires MCP servers (internal/mcp) into rein's sessions and gives rein mcp.

const mcpHelp = `MCP servers give the model more tools. rein reads them from two places:

  - rein's config file, as Codex writes them:
      [mcp_servers.memory]
      command = "npx"
      args = ["-y", "@modelcontextprotocol/server-memory"]
      env = { MEMORY_FILE_PATH = "/tmp/memory.json" }
      # url = "https://example.com/mcp"; bearer_token_env_var = "EXAMPLE_TOKEN"
      # startup_timeout_sec, tool_timeout_sec, enabled, required,
      # enabled_tools, disabled_tools
  - a project's .mcp.json, in Claude Code's shape ({"mcpServers": {"name":
    {"command", "args", "env"} or {"type": "http", "url", "headers"}}}), with
    ${VAR} and ${VAR:-default} taken from the environment. A project's servers
    start only once you have trusted the file (rein mcp trust); a changed file
    asks again.

A secret written into either file is refused: refer to the environment instead.
A server's tools are called mcp__<server>__<tool>. Rules name them like any
tool ("mcp__memory__*"); a tool the server marks read-only runs in every mode,
any other is asked in mode workspace and refused in read-only.

A Stop ends an MCP call at once (its outcome is interrupted) and tells the
server to cancel it; tool_timeout_sec (60 s by default) ends it as timed_out.
Stdio servers run in their own process group and end with rein, however rein
ends.`

// mcpServers are the servers a session in ws starts: the config file's, and those of the
// workspace's .mcp.json if the person trusted it as it is now. What it leaves out, it says.
func mcpServers(stderr io.Writer, ws string, c config) ([]mcp.Server, error) {
	servers, err := mcp.FromConfig(c.MCPServers, configPath(os.Getenv), os.Getenv)
	if err != nil {
		return nil, exitf(exitUsage, "%v", err)
	}
	p, err := mcp.LoadProject(ws, os.Getenv)
	if err != nil {
		return nil, exitf(exitUsage, "%v", err)
	}
	if p == nil {
		return servers, nil
	}
	ok, err := mcpTrust().Trusted(p)
	if err != nil {
		return nil, exitf(exitFailed, "%v", err)
	}
	if !ok {
		fmt.Fprintf(stderr, "rein: %s lists MCP servers (%s) that start only once you trust the file as it is now: rein mcp trust\n", p.Path, serverNames(p.Servers))
		return servers, nil
	}
	for _, s := range p.Servers {
		for _, o := range servers {
			if o.Name == s.Name {
				return nil, exitf(exitUsage, "the MCP server %s is configured both in %s and in %s: rename one", s.Name, o.Source, p.Path)
			}
		}
	}
	return append(servers, p.Servers...), nil
}

func mcpTrust() mcp.Trust {
	root, err := stateRoot()
	if err != nil {
		root = os.TempDir()
	}
	return mcp.TrustAt(root)
}

func serverNames(ss []mcp.Server) string {
	var n []string
	for _, s := range ss {
		n = append(n, s.Name)
	}
	return strings.Join(n, ", ")
}

// mcpStarting is the servers of a session starting beside it: they start while the session is
// opened and the provider resolved, and join before the agent is built.
type mcpStarting struct {
	done   chan struct{}
	m      *mcp.Manager
	events []record.MCPServer
	err    error
}

func startMCP(servers []mcp.Server) *mcpStarting {
	s := &mcpStarting{done: make(chan struct{})}
	if len(servers) == 0 {
		close(s.done)
		return s
	}
	go func() {
		defer close(s.done)
		s.m, s.err = mcp.Start(context.Background(), servers, version, func(e record.MCPServer) { s.events = append(s.events, e) })
	}()
	return s
}

// join waits for the servers, says on stderr which failed, and returns the manager (nil when
// there are no servers) and the state lines to record.
func (s *mcpStarting) join(stderr io.Writer) (*mcp.Manager, []record.Payload, error) {
	<-s.done
	if s.err != nil {
		return nil, nil, exitf(exitFailed, "%v", s.err)
	}
	var ps []record.Payload
	for _, e := range s.events {
		if e.State == record.MCPStarting {
			continue
		}
		ps = append(ps, &e)
	}
	if s.m != nil {
		for _, f := range s.m.Failed() {
			fmt.Fprintf(stderr, "rein: the MCP server %s did not start, so its tools are absent: %s\n", f.Name, f.Error)
		}
	}
	return s.m, ps, nil
}

// close ends the servers, once joined or abandoned.
func (s *mcpStarting) close() {
	<-s.done
	if s.m != nil {
		s.m.Close()
	}
}

// withMCP adds the servers' tools to runner, judges the rules that name them, and lets the agent
// pick up a changed tool list at a turn boundary.
func withMCP(runner *tool.Runner, m *mcp.Manager, servers []mcp.Server) error {
	if m == nil {
		return nil
	}
	var base []tool.Tool
	for _, n := range runner.Tools.Names() {
		t, _ := runner.Tools.Get(n)
		base = append(base, t)
	}
	build := func() (*tool.Registry, error) {
		return tool.NewRegistry(append(append([]tool.Tool(nil), base...), m.Tools()...)...)
	}
	reg, err := build()
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	runner.Tools = reg
	seen, _ := m.ChangedSince(context.Background(), 1<<62)
	runner.Refresh = func() (*tool.Registry, []record.Payload) {
		var changed []record.MCPServer
		seen, changed = m.ChangedSince(context.Background(), seen)
		if len(changed) == 0 {
			return nil, nil
		}
		reg, err := build()
		if err != nil {
			return nil, nil
		}
		var ps []record.Payload
		for _, c := range changed {
			ps = append(ps, &c)
		}
		return reg, ps
	}
	return nil
}

// notMCP are the rules of rs that do not name MCP tools: those are judged once the servers are
// known (judgeMCPRules).
func notMCP(rs []tool.Rule) []tool.Rule {
	var out []tool.Rule
	for _, r := range rs {
		if !strings.HasPrefix(r.Tool, "mcp__") {
			out = append(out, r)
		}
	}
	return out
}

// judgeMCPRules refuses a rule naming an MCP tool no configured server could have, and says on
// stderr which rules name tools of servers that did not start (kept: they apply once it does).
func judgeMCPRules(stderr io.Writer, pol tool.Policy, reg *tool.Registry, servers []mcp.Server) error {
	names := reg.Names()
	for _, rs := range [][]tool.Rule{pol.Allow, pol.Ask, pol.Deny} {
		for _, r := range rs {
			if !strings.HasPrefix(r.Tool, "mcp__") {
				continue
			}
			if r.Check(names) == nil {
				continue
			}
			configured := false
			for _, s := range servers {
				configured = configured || strings.HasPrefix(r.Tool, "mcp__"+s.Name+"__")
			}
			if !configured {
				return exitf(exitUsage, "%v (no configured MCP server has it: rein mcp list shows them)", r.Check(names))
			}
			fmt.Fprintf(stderr, "rein: the rule %s names a tool of an MCP server that did not start; it applies once it does\n", r)
		}
	}
	return nil
}

func newMCPCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "List, trust and test the MCP servers a session here would start",
		Long:  mcpHelp,
		Args:  cobra.NoArgs,
	}
	var cwd string
	cmd.PersistentFlags().StringVar(&cwd, "cwd", "", "the workspace (default: the current directory)")
	list := &cobra.Command{
		Use:   "list",
		Short: "Show the configured MCP servers and whether each would start",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return mcpList(cmd.OutOrStdout(), cwd)
		},
	}
	trust := &cobra.Command{
		Use:   "trust",
		Short: "Consent to the servers of this workspace's .mcp.json, as the file is now",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := workspace(cwd)
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			p, err := mcp.LoadProject(ws, os.Getenv)
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			if p == nil {
				return exitf(exitUsage, "there is no %s to trust", mcp.ProjectFile(ws))
			}
			if err := mcpTrust().Grant(p); err != nil {
				return exitf(exitFailed, "%v", err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "trusted %s (sha256 %s…); these servers will start with sessions here:\n", p.Path, p.Digest[:12])
			for _, s := range p.Servers {
				fmt.Fprintf(out, "  %s: %s\n", s.Name, what(s))
			}
			fmt.Fprintln(out, "if the file changes, rein asks again")
			return nil
		},
	}
	test := &cobra.Command{
		Use:   "test [server]",
		Short: "Start the servers (or one), list their tools, and end them",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return mcpTest(cmd.OutOrStdout(), cmd.ErrOrStderr(), cwd, args)
		},
	}
	cmd.AddCommand(list, trust, test)
	return cmd
}

func what(s mcp.Server) string {
	if s.Transport == mcp.HTTP {
		return s.URL
	}
	return strings.TrimSpace(s.Command + " " + strings.Join(s.Args, " "))
}

func mcpList(out io.Writer, cwd string) error {
	ws, err := workspace(cwd)
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	c, err := loadConfig(os.Getenv)
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSOURCE\tTRANSPORT\tSTATE\tCOMMAND OR URL")
	servers, err := mcp.FromConfig(c.MCPServers, configPath(os.Getenv), os.Getenv)
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	for _, s := range servers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, "config", s.Transport, "starts", what(s))
	}
	for name, t := range c.MCPServers {
		if t.Enabled != nil && !*t.Enabled {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, "config", "-", "disabled (enabled = false)", "")
		}
	}
	p, err := mcp.LoadProject(ws, os.Getenv)
	if err != nil {
		tw.Flush()
		return exitf(exitUsage, "%v", err)
	}
	if p != nil {
		trusted, err := mcpTrust().Trusted(p)
		if err != nil {
			return exitf(exitFailed, "%v", err)
		}
		state := "starts"
		if !trusted {
			state = "untrusted: rein mcp trust"
		}
		for _, s := range p.Servers {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, ".mcp.json", s.Transport, state, what(s))
		}
	}
	tw.Flush()
	if len(servers) == 0 && p == nil {
		fmt.Fprintf(out, "no MCP servers are configured for %s\n\n%s\n", ws, mcpHelp)
	}
	return nil
}

func mcpTest(out, stderr io.Writer, cwd string, args []string) error {
	ws, err := workspace(cwd)
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	c, err := loadConfig(os.Getenv)
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	servers, err := mcpServers(stderr, ws, c)
	if err != nil {
		return err
	}
	if len(args) == 1 {
		var one []mcp.Server
		for _, s := range servers {
			if s.Name == args[0] {
				one = append(one, s)
			}
		}
		if len(one) == 0 {
			return exitf(exitUsage, "no server called %s would start here (rein mcp list shows them)", args[0])
		}
		servers = one
	}
	if len(servers) == 0 {
		return exitf(exitUsage, "no MCP server would start here (rein mcp list shows what is configured)")
	}
	for i := range servers {
		servers[i].Required = false // test them all, whatever fails
	}
	m, err := mcp.Start(context.Background(), servers, version, nil)
	if err != nil {
		return exitf(exitFailed, "%v", err)
	}
	defer m.Close()
	byServer := map[string][]tool.Tool{}
	for _, t := range m.Tools() {
		s := t.(*mcp.Tool).Server()
		byServer[s] = append(byServer[s], t)
	}
	failed := map[string]string{}
	for _, f := range m.Failed() {
		failed[f.Name] = f.Error
	}
	for _, s := range servers {
		if why, ok := failed[s.Name]; ok {
			fmt.Fprintf(out, "%s: failed: %s\n", s.Name, why)
			continue
		}
		fmt.Fprintf(out, "%s: ready, %d tools\n", s.Name, len(byServer[s.Name]))
		for _, t := range byServer[s.Name] {
			desc, _, _ := strings.Cut(t.Spec().Description, "\n")
			fmt.Fprintf(out, "  %s  %s\n", t.Spec().Name, desc)
		}
	}
	if len(failed) > 0 {
		return exitf(exitFailed, "%d of %d servers failed to start", len(failed), len(servers))
	}
	return nil
}

// appendIf records ps, if there are any.
func appendIf(sess *session.Session, ps []record.Payload) error {
	if len(ps) == 0 {
		return nil
	}
	return sess.Append(ps...)
}

// hostMCP is a host's MCP servers, shared by its conversations: each conversation's agent gets
// their tools, and its record their states as they are when the agent is built.
type hostMCP struct {
	m       *mcp.Manager
	servers []mcp.Server
	states  []record.Payload
}

func (h hostMCP) attach(sess *session.Session, runner *tool.Runner) error {
	if h.m == nil {
		return nil
	}
	if err := withMCP(runner, h.m, h.servers); err != nil {
		return err
	}
	if err := judgeMCPRules(io.Discard, runner.Policy, runner.Tools, h.servers); err != nil {
		return err
	}
	return appendIf(sess, h.states)
}
