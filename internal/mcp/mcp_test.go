package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/reinhq/rein/internal/procs"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// stdioServer configures the test binary as a stdio server in mode, its marks written to a file
// of the test's.
func stdioServer(t *testing.T, name, mode string) (Server, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(t.TempDir(), "mark")
	return Server{Name: name, Transport: Stdio, Command: exe, Args: []string{"-test.run=^$"},
		Env:     map[string]string{"REIN_MCP_TEST_SERVER": mode, "REIN_MCP_MARK": mark},
		Startup: 20 * time.Second, ToolRun: 20 * time.Second}, mark
}

func start(t *testing.T, servers ...Server) (*Manager, []record.MCPServer) {
	t.Helper()
	var events []record.MCPServer
	m, err := Start(context.Background(), servers, "test", func(e record.MCPServer) { events = append(events, e) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, events
}

func find(t *testing.T, m *Manager, name string) tool.Tool {
	t.Helper()
	for _, x := range m.Tools() {
		if x.Spec().Name == name {
			return x
		}
	}
	t.Fatalf("no tool %s among %v", name, toolNames(m))
	return nil
}

func toolNames(m *Manager) []string {
	var out []string
	for _, x := range m.Tools() {
		out = append(out, x.Spec().Name)
	}
	return out
}

func run(t *testing.T, m *Manager, name, args string) tool.Result {
	t.Helper()
	reg, err := tool.NewRegistry(m.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	r := &tool.Runner{Tools: reg, Policy: tool.Policy{Mode: tool.ModeFull}}
	return r.Run(context.Background(), tool.Call{ID: "c1", Name: name, Args: json.RawMessage(args)})
}

func marks(t *testing.T, path string) []string {
	data, _ := os.ReadFile(path)
	return strings.Fields(strings.ReplaceAll(string(data), "\n", " \n"))
}

func TestStdioServerTools(t *testing.T) {
	srv, _ := stdioServer(t, "fx", "plain")
	m, events := start(t, srv)
	if len(events) != 2 || events[0].State != record.MCPStarting || events[1].State != record.MCPReady {
		t.Fatalf("events %+v, want starting then ready", events)
	}
	if !strings.Contains(strings.Join(events[1].Tools, " "), "mcp__fx__echo") {
		t.Fatalf("ready event names tools %v", events[1].Tools)
	}
	res := run(t, m, "mcp__fx__echo", `{"text":"hello"}`)
	if res.Outcome != record.OK || res.Content != "hello" {
		t.Fatalf("echo: %+v", res)
	}
	// The server's inputSchema is checked before the call reaches it.
	res = run(t, m, "mcp__fx__echo", `{"text":""}`)
	if res.Outcome != record.Failed || !strings.Contains(res.Content, "invalid arguments for mcp__fx__echo") {
		t.Fatalf("an empty text passed the schema's minLength: %+v", res)
	}
	res = run(t, m, "mcp__fx__echo", `{}`)
	if res.Outcome != record.Failed || !strings.Contains(res.Content, "text") {
		t.Fatalf("a missing required property passed: %+v", res)
	}
	// Read-only tools read; others are of unknown effect.
	if a := find(t, m, "mcp__fx__echo").(tool.Accessor).Access(nil); a.Effect != tool.EffectRead {
		t.Fatalf("echo is read-only on the server, its effect is %v", a.Effect)
	}
	if a := find(t, m, "mcp__fx__spawn").(tool.Accessor).Access(nil); a.Effect != tool.EffectUnknown {
		t.Fatalf("spawn's effect is %v, want unknown", a.Effect)
	}
}

func TestResultsFaithful(t *testing.T) {
	srv, _ := stdioServer(t, "fx", "plain")
	m, _ := start(t, srv)
	for _, c := range []struct {
		tool    string
		outcome record.Outcome
		want    []string
	}{
		{"kinds", record.OK, []string{"some text", "image/png", "resource link: file:///tmp/a.txt (a.txt)", "resource mem://note (text/plain):\nembedded words"}},
		{"structured", record.OK, []string{`{"count":3}`}},
		{"broken", record.Failed, []string{"the widget is broken"}},
		{"empty", record.OK, []string{"(the tool returned an empty result)"}},
	} {
		res := run(t, m, "mcp__fx__"+c.tool, `{}`)
		if res.Outcome != c.outcome {
			t.Errorf("%s: outcome %s, want %s (%q)", c.tool, res.Outcome, c.outcome, res.Content)
		}
		for _, w := range c.want {
			if !strings.Contains(res.Content, w) {
				t.Errorf("%s: result %q lacks %q", c.tool, res.Content, w)
			}
		}
	}
}

// TestStopReachesServer: a Stop ends the call at once, as interrupted, and the server's handler
// sees the cancellation within 100 ms.
func TestStopReachesServer(t *testing.T) {
	srv, mark := stdioServer(t, "fx", "plain")
	m, _ := start(t, srv)
	reg, _ := tool.NewRegistry(m.Tools()...)
	r := &tool.Runner{Tools: reg, Policy: tool.Policy{Mode: tool.ModeFull}}
	for i := range 5 {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan tool.Result)
		go func() { done <- r.Run(ctx, tool.Call{ID: "c", Name: "mcp__fx__wait", Args: json.RawMessage(`{}`)}) }()
		waitFor(t, func() bool { return strings.Count(strings.Join(marks(t, mark), " "), "waiting") > i })
		stopped := time.Now()
		cancel()
		res := <-done
		back := time.Since(stopped)
		if res.Outcome != record.Interrupted {
			t.Fatalf("stopped call: %+v", res)
		}
		if back > 25*time.Millisecond {
			t.Logf("the call returned %s after the Stop (a loaded machine?)", back)
		}
		waitFor(t, func() bool { return strings.Count(strings.Join(marks(t, mark), " "), "cancelled") > i })
		var at int64
		for _, f := range strings.Split(string(must(os.ReadFile(mark))), "\n") {
			if v, ok := strings.CutPrefix(f, "cancelled "); ok {
				at, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		if d := time.Unix(0, at).Sub(stopped); d > time.Second { // the handler waits until cancelled; room for a loaded machine
			t.Errorf("the server's handler saw the cancellation %s after the Stop, want within a second", d)
		}
	}
}

// TestStopIgnoredByServer: a server that ignores the cancellation does not hold the call.
func TestStopIgnoredByServer(t *testing.T) {
	srv, _ := stdioServer(t, "fx", "plain")
	m, _ := start(t, srv)
	reg, _ := tool.NewRegistry(m.Tools()...)
	r := &tool.Runner{Tools: reg, Policy: tool.Policy{Mode: tool.ModeFull}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tool.Result)
	go func() { done <- r.Run(ctx, tool.Call{ID: "c", Name: "mcp__fx__stubborn", Args: json.RawMessage(`{}`)}) }()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case res := <-done:
		if res.Outcome != record.Interrupted {
			t.Fatalf("outcome %s", res.Outcome)
		}
	case <-time.After(time.Second):
		t.Fatal("a server ignoring the cancellation held the call past a second")
	}
	// The session still works after it.
	if res := run(t, m, "mcp__fx__echo", `{"text":"after"}`); res.Content != "after" {
		t.Fatalf("after a stopped call: %+v", res)
	}
}

func TestToolTimeout(t *testing.T) {
	srv, _ := stdioServer(t, "fx", "plain")
	srv.ToolRun = 300 * time.Millisecond
	m, _ := start(t, srv)
	res := run(t, m, "mcp__fx__wait", `{}`)
	if res.Outcome != record.TimedOut || !strings.Contains(res.Content, "tool_timeout_sec") {
		t.Fatalf("%+v", res)
	}
}

func TestServerDiesMidCall(t *testing.T) {
	srv, _ := stdioServer(t, "fx", "plain")
	m, _ := start(t, srv)
	res := run(t, m, "mcp__fx__die", `{}`)
	if res.Outcome != record.Failed {
		t.Fatalf("a server that died mid-call: %+v", res)
	}
	t.Log(res.Content)
}

// TestJunkBeforeHandshake: a server that prints something else to stdout before the handshake is
// reported as failed, with why; the other servers and the session go on.
func TestJunkBeforeHandshake(t *testing.T) {
	junk, _ := stdioServer(t, "junk", "junk")
	junk.Startup = 5 * time.Second
	good, _ := stdioServer(t, "good", "plain")
	m, events := start(t, junk, good)
	if len(m.Failed()) != 1 || m.Failed()[0].Name != "junk" {
		t.Fatalf("failed: %+v (events %+v)", m.Failed(), events)
	}
	if !strings.Contains(m.Failed()[0].Error, "stdout") {
		t.Errorf("the failure does not say what went wrong: %s", m.Failed()[0].Error)
	}
	if !strings.Contains(m.Note(), "junk") {
		t.Errorf("the model is not told: %q", m.Note())
	}
	if res := run(t, m, "mcp__good__echo", `{"text":"x"}`); res.Content != "x" {
		t.Fatalf("%+v", res)
	}
	for _, n := range toolNames(m) {
		if strings.HasPrefix(n, "mcp__junk__") {
			t.Fatalf("a failed server's tool %s is offered", n)
		}
	}
}

func TestRequiredServerFails(t *testing.T) {
	srv, _ := stdioServer(t, "slow", "silent")
	srv.Startup = 300 * time.Millisecond
	srv.Required = true
	_, err := Start(context.Background(), []Server{srv}, "test", nil)
	if err == nil || !strings.Contains(err.Error(), "required") || !strings.Contains(err.Error(), "handshake") {
		t.Fatalf("err = %v", err)
	}
}

// TestCloseEndsProcessGroup: closing ends the server and what it started.
func TestCloseEndsProcessGroup(t *testing.T) {
	srv, mark := stdioServer(t, "fx", "plain")
	m, err := Start(context.Background(), []Server{srv}, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, m, "mcp__fx__spawn", `{}`)
	child, _ := strconv.Atoi(res.Content)
	var pgid int
	for _, f := range strings.Split(string(must(os.ReadFile(mark))), "\n") {
		if v, ok := strings.CutPrefix(f, "pgid "); ok {
			pgid, _ = strconv.Atoi(v)
		}
	}
	if child == 0 || pgid == 0 || pgid == syscall.Getpgrp() {
		t.Fatalf("child %d, server group %d (rein's %d)", child, pgid, syscall.Getpgrp())
	}
	m.Close()
	waitFor(t, func() bool { live, _ := procs.Live(pgid); return len(live) == 0 })
	if procs.Alive(child) {
		t.Fatalf("the server's child %d outlived Close", child)
	}
}

func TestHTTPServer(t *testing.T) {
	var (
		mu      sync.Mutex
		sawAuth string // the SDK's client opens several requests at once (POST, the GET stream, DELETE)
	)
	notes := make(chan string, 100)
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		return testServer(func(s string) { notes <- s })
	}, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sawAuth = r.Header.Get("Authorization")
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the manager's Close, which ends the session the server holds
	m, _ := start(t, Server{Name: "web", Transport: HTTP, URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer tok"},
		Startup: 10 * time.Second, ToolRun: 10 * time.Second})
	if res := run(t, m, "mcp__web__echo", `{"text":"over http"}`); res.Content != "over http" {
		t.Fatalf("%+v", res)
	}
	mu.Lock()
	auth := sawAuth
	mu.Unlock()
	if auth != "Bearer tok" {
		t.Fatalf("the server saw Authorization %q", auth)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	reg, _ := tool.NewRegistry(m.Tools()...)
	r := &tool.Runner{Tools: reg, Policy: tool.Policy{Mode: tool.ModeFull}}
	if res := r.Run(ctx, tool.Call{ID: "c", Name: "mcp__web__wait", Args: json.RawMessage(`{}`)}); res.Outcome != record.Interrupted {
		t.Fatalf("a stopped HTTP call: %+v", res)
	}
	stopped := time.Now()
	for {
		select {
		case n := <-notes:
			if !strings.HasPrefix(n, "cancelled") {
				continue
			}
			if d := time.Since(stopped); d > 2*time.Second { // the tool waits until cancelled; "at once", with room for a loaded machine
				t.Errorf("the HTTP server's handler saw the cancellation %s after the Stop", d)
			}
			return
		case <-time.After(5 * time.Second):
			t.Fatal("the HTTP server's handler never saw the cancellation")
		}
	}
}

func TestListChanged(t *testing.T) {
	srv, _ := stdioServer(t, "fx", "plain")
	m, _ := start(t, srv)
	if got := m.Changed(context.Background()); got != nil {
		t.Fatalf("changes before any: %+v", got)
	}
	run(t, m, "mcp__fx__grow", `{}`)
	var got []record.MCPServer
	waitFor(t, func() bool { got = append(got, m.Changed(context.Background())...); return len(got) > 0 })
	if got[0].State != record.MCPChanged || !strings.Contains(strings.Join(got[0].Tools, " "), "mcp__fx__grown") {
		t.Fatalf("%+v", got)
	}
	if res := run(t, m, "mcp__fx__grown", `{}`); res.Content != "grown" {
		t.Fatalf("%+v", res)
	}
}

func TestInMemory(t *testing.T) {
	// The SDK's in-memory transport, through the same tool adapter.
	ct, st := sdk.NewInMemoryTransports()
	go testServer(func(string) {}).Run(context.Background(), st)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "rein"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	c := &conn{srv: Server{Name: "mem", ToolRun: time.Second, Startup: time.Second}, session: cs, stderr: &procs.Tail{Max: 10}, changed: make(chan struct{}, 1)}
	tools, err := c.list(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var echo *Tool
	for _, x := range tools {
		if x.remote == "echo" {
			echo = x
		}
	}
	if res := echo.Run(context.Background(), tool.Call{Args: json.RawMessage(`{"text":"mem"}`)}); res.Content != "mem" {
		t.Fatalf("%+v", res)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
