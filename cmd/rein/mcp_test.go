package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/procs"
)

func (sb *sandbox) file(t *testing.T, rel, content string) string {
	t.Helper()
	p := filepath.Join(sb.ws, rel)
	if strings.HasPrefix(rel, "~/") {
		p = filepath.Join(filepath.Dir(sb.home), rel[2:])
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMCPUntrustedStartsNothing: a project's .mcp.json starts nothing until it is trusted, and a
// changed file asks again.
func TestMCPUntrustedStartsNothing(t *testing.T) {
	sb := newSandbox(t)
	ran := filepath.Join(sb.ws, "ran")
	sb.file(t, ".mcp.json", `{"mcpServers": {"probe": {"command": "bash", "args": ["-c", "touch `+ran+`; sleep 5"]}}}`)
	r := sb.rein(t, "run", "--provider", "sim", "hello")
	if r.code != 0 || !strings.Contains(r.stderr, "rein mcp trust") {
		t.Fatalf("%s", r)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("an untrusted .mcp.json started its server")
	}
	if r := sb.rein(t, "mcp", "list"); !strings.Contains(r.stdout, "untrusted") {
		t.Fatalf("mcp list: %s", r)
	}
	if r := sb.rein(t, "mcp", "trust"); r.code != 0 || !strings.Contains(r.stdout, "probe") {
		t.Fatalf("mcp trust: %s", r)
	}
	if r := sb.rein(t, "mcp", "list"); strings.Contains(r.stdout, "untrusted") {
		t.Fatalf("mcp list after trust: %s", r)
	}
	// A changed file is not trusted.
	sb.file(t, ".mcp.json", `{"mcpServers": {"probe": {"command": "bash", "args": ["-c", "touch `+ran+`; sleep 6"]}}}`)
	if r := sb.rein(t, "mcp", "list"); !strings.Contains(r.stdout, "untrusted") {
		t.Fatalf("a changed file kept its trust: %s", r)
	}
	r = sb.rein(t, "run", "--provider", "sim", "hello")
	if _, err := os.Stat(ran); err == nil {
		t.Fatalf("a changed .mcp.json started its server: %s", r)
	}
}

func TestMCPConfigRefusals(t *testing.T) {
	for _, c := range []struct{ name, file, content, want string }{
		{"literal header secret", ".mcp.json", `{"mcpServers": {"api": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer abcdefgh12345678"}}}}`, "${MY_TOKEN}"},
		{"literal env secret", ".mcp.json", `{"mcpServers": {"gh": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_0123456789abcdefghijklmnopqrstuvwxyz"}}}}`, "secret written into the file"},
		{"unset variable", ".mcp.json", `{"mcpServers": {"x": {"command": "${REIN_TEST_NOT_SET}/server"}}}`, "REIN_TEST_NOT_SET"},
		{"unknown key", ".mcp.json", `{"mcpServers": {"x": {"command": "x", "cmd": "y"}}}`, "it takes type, command"},
		{"sse", ".mcp.json", `{"mcpServers": {"x": {"type": "sse", "url": "http://localhost:1/sse"}}}`, "streamable HTTP"},
		{"config timeout", "~/.config/rein/config.toml", "[mcp_servers.x]\ncommand = \"x\"\ntool_timeout_sec = -1\n", "tool_timeout_sec"},
		{"config unknown key", "~/.config/rein/config.toml", "[mcp_servers.x]\ncommand = \"x\"\ncomand = \"y\"\n", "mcp_servers.x.comand"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sb := newSandbox(t)
			sb.file(t, c.file, c.content)
			if c.file == ".mcp.json" {
				sb.rein(t, "mcp", "trust") // refused or not, the run judges the file again
			}
			r := sb.rein(t, "run", "--provider", "sim", "hello")
			if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("want exit %d saying %q: %s", exitUsage, c.want, r)
			}
			if len(sb.records(t)) != 0 {
				t.Fatal("a refused configuration left a session behind")
			}
		})
	}
}

// TestMCPServerEndsWithRein: a stdio server, and what it started, end when rein is SIGKILLed.
func TestMCPServerEndsWithRein(t *testing.T) {
	sb := newSandbox(t)
	pids := filepath.Join(sb.ws, "pids")
	// A "server" that never completes the handshake, with a child of its own.
	sb.file(t, "~/.config/rein/config.toml", `[mcp_servers.hang]
command = "bash"
args = ["-c", "sleep 1000 & echo $$ $! > `+pids+`; wait"]
startup_timeout_sec = 120
`)
	cmd := exec.Command(reinBin(t), "run", "--provider", "sim", "hello")
	cmd.Dir, cmd.Env = sb.ws, sb.env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var got []int
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < 2 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the server never started")
		}
		time.Sleep(10 * time.Millisecond)
		data, _ := os.ReadFile(pids)
		got = got[:0]
		for _, f := range strings.Fields(string(data)) {
			n, _ := strconv.Atoi(f)
			got = append(got, n)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	procs.AwaitGone(got, 5*time.Second)
	for _, pid := range got {
		if procs.Alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d of the MCP server outlived rein's SIGKILL", pid)
		}
	}
}

// memoryServer is the reference memory MCP server from npm: REIN_MCP_MEMORY (set by .ci/run), or
// installed with npm here. The test skips only when node is absent.
func memoryServer(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the third-party MCP server test needs it")
	}
	if p := os.Getenv("REIN_MCP_MEMORY"); p != "" {
		return p
	}
	dir := filepath.Join(os.TempDir(), "rein-mcp-memory")
	bin := filepath.Join(dir, "node_modules", ".bin", "mcp-server-memory")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	os.MkdirAll(dir, 0o755)
	out, err := exec.Command("npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "@modelcontextprotocol/server-memory@2026.8.31").CombinedOutput()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("npm install of the memory server failed: %v\n%s", err, out)
		}
		t.Skipf("npm could not install the memory server here: %v", err)
	}
	return bin
}

// TestMCPThirdPartyServer runs the reference memory server from npm end to end: its tools offered
// under their mcp__ names, a read-only tool run in workspace mode, a writing tool asked (and so
// refused in rein run), every request accepted by the simulator's validator, the record admissible.
func TestMCPThirdPartyServer(t *testing.T) {
	bin := memoryServer(t)
	sb := newSandbox(t)
	sb.file(t, "~/.config/rein/config.toml", `[mcp_servers.memory]
command = "`+bin+`"
env = { MEMORY_FILE_PATH = "`+filepath.Join(sb.ws, "memory.jsonl")+`" }
`)
	create := map[string]any{"name": "mcp__memory__create_entities", "arguments": map[string]any{
		"entities": []any{map[string]any{"name": "rein", "entityType": "project", "observations": []string{"a harness"}}}}}
	read := map[string]any{"name": "mcp__memory__read_graph", "arguments": map[string]any{}}
	bad := map[string]any{"name": "mcp__memory__open_nodes", "arguments": map[string]any{"names": "rein"}}
	script := writeScript(t, sb.ws,
		map[string]any{"tool_calls": []any{create}},
		map[string]any{"tool_calls": []any{read, bad}},
		map[string]any{"text": "done"})
	r := sb.rein(t, "run", "--provider", "sim", "--sim-script", script, "remember rein")
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	for _, want := range []string{"mcp__memory__create_entities", "person's approval", `"entities": []`, "invalid arguments for mcp__memory__open_nodes"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, r)
		}
	}
	r = sb.rein(t, "resume", "--permission-mode", "full", "--sim-script", script, "again")
	if r.code != 0 || !strings.Contains(r.stdout, `"name": "rein"`) || strings.Contains(r.stdout, "approval") {
		t.Fatalf("in full mode: %s", r)
	}
	data, err := os.ReadFile(sb.records(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"kind":"mcp_server","payload":{"name":"memory","state":"ready"`) {
		t.Errorf("the record has no ready state for the server")
	}
	if r := sb.rein(t, "doctor", sb.records(t)[0]); r.code != 0 {
		t.Fatalf("doctor: %s", r)
	}
}

// TestMCPThroughHost: a host's conversations get the servers' tools, and their records the
// servers' states.
func TestMCPThroughHost(t *testing.T) {
	bin := memoryServer(t)
	sb := newSandbox(t)
	sb.file(t, "~/.config/rein/config.toml", `[mcp_servers.memory]
command = "`+bin+`"
env = { MEMORY_FILE_PATH = "`+filepath.Join(sb.ws, "memory.jsonl")+`" }
`)
	create := map[string]any{"name": "mcp__memory__create_entities", "arguments": map[string]any{
		"entities": []any{map[string]any{"name": "host", "entityType": "thing", "observations": []string{"served"}}}}}
	script := writeScript(t, sb.ws, map[string]any{"tool_calls": []any{create}}, map[string]any{"text": "remembered"})
	s := sb.startServe(t, "--permission-mode", "full", "--sim-script", script)
	code, body, _, err := s.request("POST", "/api/conversations", `{"op_id":"c1"}`)
	if err != nil || code != 200 && code != 201 {
		t.Fatalf("create: %d %s %v", code, body, err)
	}
	if !json.Valid(body) {
		t.Fatalf("create answered %s", body)
	}
	var created struct {
		Conversation struct {
			ID string `json:"id"`
		} `json:"conversation"`
	}
	err = json.Unmarshal(body, &created)
	conv := created.Conversation
	if err != nil || conv.ID == "" {
		t.Fatalf("create answered %s (%v)", body, err)
	}
	if code, body, _, err = s.request("POST", "/api/conversations/"+conv.ID+"/messages", `{"op_id":"m1","text":"remember"}`); err != nil || code >= 300 {
		t.Fatalf("send: %d %s %v", code, body, err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		data, _ := os.ReadFile(filepath.Join(sb.ws, "memory.jsonl"))
		if strings.Contains(string(data), `"name":"host"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the MCP tool never ran through the host; stderr:\n%s", s.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var rec []byte
	for time.Now().Before(deadline) {
		paths := sb.records(t)
		if len(paths) > 0 {
			rec, _ = os.ReadFile(paths[0])
			if strings.Contains(string(rec), "remembered") {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(string(rec), `"kind":"mcp_server"`) || !strings.Contains(string(rec), "remembered") {
		t.Fatalf("the conversation's record lacks the server state or the reply:\n%s", rec)
	}
}
