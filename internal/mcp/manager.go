package mcp

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// Manager runs a session's MCP servers: it starts them in parallel, holds their tools, picks up
// tool lists that changed, and ends them all with Close.
type Manager struct {
	version string
	report  func(record.MCPServer)

	mu      sync.Mutex
	conns   []*conn // ready servers, in the configured order
	tools   map[string][]*Tool
	failed  []record.MCPServer
	changes []record.MCPServer // every change picked up, in order (ChangedSince)
	polling sync.Mutex
}

// Start starts every server at once and returns when each is ready or has failed (each within its
// startup timeout). report, if given, hears each state change: starting, then ready or failed. A
// failed server's tools are absent; a failed server marked required fails Start, as do two tools
// that would have one name in the session. ctx bounds the start only: the servers live until
// Close.
func Start(ctx context.Context, servers []Server, version string, report func(record.MCPServer)) (*Manager, error) {
	m := &Manager{version: version, report: report, tools: map[string][]*Tool{}}
	if m.report == nil {
		m.report = func(record.MCPServer) {}
	}
	type outcome struct {
		c     *conn
		tools []*Tool
		err   error
	}
	out := make([]outcome, len(servers))
	var wg sync.WaitGroup
	var rmu sync.Mutex
	say := func(e record.MCPServer) {
		rmu.Lock()
		defer rmu.Unlock()
		m.report(e)
	}
	for i, s := range servers {
		say(record.MCPServer{Name: s.Name, State: record.MCPStarting})
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := connect(ctx, s, version)
			if err != nil {
				out[i].err = err
				return
			}
			tools, err := c.list(ctx)
			if err != nil {
				c.close()
				out[i].err = err
				return
			}
			out[i] = outcome{c: c, tools: tools}
		}()
	}
	wg.Wait()
	var fatal []string
	for i, o := range out {
		s := servers[i]
		if o.err != nil {
			e := record.MCPServer{Name: s.Name, State: record.MCPFailed, Error: o.err.Error()}
			m.failed = append(m.failed, e)
			say(e)
			if s.Required {
				fatal = append(fatal, fmt.Sprintf("the MCP server %s, marked required, did not start: %v", s.Name, o.err))
			}
			continue
		}
		m.conns = append(m.conns, o.c)
		m.tools[s.Name] = o.tools
		say(record.MCPServer{Name: s.Name, State: record.MCPReady, Tools: names(o.tools)})
	}
	if len(fatal) == 0 {
		if err := m.collisions(); err != nil {
			fatal = append(fatal, err.Error())
		}
	}
	if len(fatal) > 0 {
		m.Close()
		return nil, errors.New(strings.Join(fatal, "; "))
	}
	return m, nil
}

// list reads the server's tools (every page), keeping those its filters let through.
func (c *conn) list(ctx context.Context) ([]*Tool, error) {
	lctx, cancel := context.WithTimeout(ctx, c.srv.Startup)
	defer cancel()
	var out []*Tool
	for t, err := range c.session.Tools(lctx, nil) {
		if err != nil {
			return nil, c.explain(lctx, fmt.Errorf("listing its tools: %w", err))
		}
		if !c.srv.offers(t.Name) {
			continue
		}
		mt, err := newTool(c, t)
		if err != nil {
			return nil, err
		}
		out = append(out, mt)
	}
	return out, nil
}

// collisions refuses two tools with one name in the session (two servers whose names differ only
// in bytes a provider does not take, say).
func (m *Manager) collisions() error {
	seen := map[string]string{}
	for _, c := range m.conns {
		for _, t := range m.tools[c.srv.Name] {
			whole := c.srv.Name + "/" + t.remote
			if other, ok := seen[t.name]; ok {
				return fmt.Errorf("the MCP tools %s and %s would both be called %s in this session; rename one of the servers", other, whole, t.name)
			}
			seen[t.name] = whole
		}
	}
	return nil
}

// Tools are the ready servers' tools, in the configured order of the servers and each server's
// own order.
func (m *Manager) Tools() []tool.Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []tool.Tool
	for _, c := range m.conns {
		for _, t := range m.tools[c.srv.Name] {
			out = append(out, t)
		}
	}
	return out
}

// Failed are the servers that did not start, with why.
func (m *Manager) Failed() []record.MCPServer { return m.failed }

// Note is what the model is told of the servers that did not start (empty when all did), for the
// system prompt.
func (m *Manager) Note() string {
	if len(m.failed) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nSome MCP servers configured for this session did not start, so their tools are not available:")
	for _, f := range m.failed {
		fmt.Fprintf(&b, "\n- %s: %s", f.Name, f.Error)
	}
	return b.String()
}

// Changed re-reads the tool lists of the servers that announced a change since the last call,
// and returns their new state lines (nil when nothing changed). A server whose list can no longer
// be read keeps its last tools and says why.
func (m *Manager) Changed(ctx context.Context) []record.MCPServer {
	m.polling.Lock()
	defer m.polling.Unlock()
	var out []record.MCPServer
	defer func() {
		m.mu.Lock()
		m.changes = append(m.changes, out...)
		m.mu.Unlock()
	}()
	for _, c := range m.conns {
		select {
		case <-c.changed:
		default:
			continue
		}
		tools, err := c.list(ctx)
		if err != nil {
			out = append(out, record.MCPServer{Name: c.srv.Name, State: record.MCPChanged, Tools: names(m.tools[c.srv.Name]), Error: "its changed tool list could not be read, so its earlier tools stay: " + err.Error()})
			continue
		}
		m.mu.Lock()
		prev := m.tools[c.srv.Name]
		m.tools[c.srv.Name] = tools
		if err := m.collisions(); err != nil {
			m.tools[c.srv.Name] = prev
			m.mu.Unlock()
			out = append(out, record.MCPServer{Name: c.srv.Name, State: record.MCPChanged, Tools: names(prev), Error: "its changed tool list was refused, so its earlier tools stay: " + err.Error()})
			continue
		}
		m.mu.Unlock()
		out = append(out, record.MCPServer{Name: c.srv.Name, State: record.MCPChanged, Tools: names(tools)})
	}
	return out
}

// ChangedSince picks up any change (Changed), then returns the changes after the first seen
// (every change, when seen is 0) and the count to pass next time: each of several sessions sharing
// the servers (a host's conversations) hears every change once.
func (m *Manager) ChangedSince(ctx context.Context, seen int) (int, []record.MCPServer) {
	m.Changed(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.changes), append([]record.MCPServer(nil), m.changes[min(seen, len(m.changes)):]...)
}

// Close ends every server, stdio servers with their whole process groups.
func (m *Manager) Close() {
	var wg sync.WaitGroup
	for _, c := range m.conns {
		wg.Add(1)
		go func() { defer wg.Done(); c.close() }()
	}
	wg.Wait()
}

// Ping checks that a server still answers (rein mcp test).
func (m *Manager) Ping(ctx context.Context, name string) error {
	for _, c := range m.conns {
		if c.srv.Name == name {
			return c.session.Ping(ctx, &sdk.PingParams{})
		}
	}
	return fmt.Errorf("no ready server is called %s", name)
}

func names(ts []*Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.name
	}
	sort.Strings(out)
	return out
}
