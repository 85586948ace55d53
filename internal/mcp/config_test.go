package mcp

import (
	"regexp"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

var providerName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolName(t *testing.T) {
	for _, c := range []struct{ server, tool, want string }{
		{"memory", "read_graph", "mcp__memory__read_graph"},
		{"gh", "issues.list", ""}, // a dot: replaced, with a suffix
		{"s", strings.Repeat("x", 80), ""},
	} {
		got := ToolName(c.server, c.tool)
		if !providerName.MatchString(got) {
			t.Errorf("%s/%s → %q breaks the providers' rule", c.server, c.tool, got)
		}
		if c.want != "" && got != c.want {
			t.Errorf("%s/%s → %q, want %q", c.server, c.tool, got, c.want)
		}
	}
	if ToolName("gh", "a.b") == ToolName("gh", "a_b") {
		t.Error("a.b and a_b share a name")
	}
}

// TestToolNameProperty: every name fits every provider's rule, and two different tools never
// share a name.
func TestToolNameProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		server := rapid.StringMatching(`[A-Za-z0-9_-]{1,48}`).Draw(t, "server")
		a := rapid.String().Draw(t, "a")
		b := rapid.String().Draw(t, "b")
		na, nb := ToolName(server, a), ToolName(server, b)
		if !providerName.MatchString(na) {
			t.Fatalf("%q → %q", a, na)
		}
		if a != b && na == nb {
			t.Fatalf("%q and %q share the name %q", a, b, na)
		}
	})
}

func TestExpand(t *testing.T) {
	env := map[string]string{"HOME": "/users/p", "EMPTY": ""}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct{ in, want, err string }{
		{"${HOME}/x", "/users/p/x", ""},
		{"${MISSING:-/tmp}/x", "/tmp/x", ""},
		{"${EMPTY:-d}", "d", ""},
		{"a${MISSING}b", "", "MISSING"},
		{"no refs $HOME", "no refs $HOME", ""},
	} {
		got, err := expand(c.in, getenv)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want one naming %s", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q → %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestProjectFile(t *testing.T) {
	getenv := func(k string) string { return map[string]string{"TOKEN": "s3cr3t"}[k] }
	servers, err := parseProject([]byte(`{"mcpServers": {
		"b": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
		"a": {"command": "node", "args": ["server.js", "${PORT:-8080}"], "env": {"API_KEY": "${TOKEN}"}}}}`), ".mcp.json", getenv)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 2 || servers[0].Name != "a" || servers[1].Name != "b" {
		t.Fatalf("%+v", servers)
	}
	if servers[0].Args[1] != "8080" || servers[0].Env["API_KEY"] != "s3cr3t" || servers[0].Transport != Stdio {
		t.Errorf("a: %+v", servers[0])
	}
	if servers[1].Headers["Authorization"] != "Bearer s3cr3t" || servers[1].Transport != HTTP || !servers[1].Project {
		t.Errorf("b: %+v", servers[1])
	}
}

func TestConfigTables(t *testing.T) {
	off := false
	sec := 2.5
	servers, err := FromConfig(map[string]ConfigServer{
		"on":  {Command: "x", ToolTimeoutSec: &sec, DisabledTools: []string{"rm"}},
		"off": {Command: "y", Enabled: &off},
		"web": {URL: "https://example.com/mcp", BearerTokenEnvVar: "TOK"},
	}, "config.toml", func(k string) string { return map[string]string{"TOK": "t0k"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 2 || servers[0].Name != "on" || servers[1].Name != "web" {
		t.Fatalf("%+v", servers)
	}
	if servers[0].ToolRun.Seconds() != 2.5 || servers[0].offers("rm") || !servers[0].offers("ls") {
		t.Errorf("on: %+v", servers[0])
	}
	if servers[1].Headers["Authorization"] != "Bearer t0k" {
		t.Errorf("web: %+v", servers[1])
	}
	if _, err := FromConfig(map[string]ConfigServer{"web": {URL: "https://x", BearerTokenEnvVar: "NOPE"}}, "c", func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "NOPE") {
		t.Errorf("an unset bearer variable: %v", err)
	}
}
