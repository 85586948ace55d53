// Package mcp gives a session the tools of MCP servers (the Model Context Protocol), through the
// official Go SDK: servers from a project's .mcp.json (Claude Code's shape) and from rein's config
// file (Codex's keys), started only with consent, each in its own process group, their tools
// offered under names every provider takes, their calls ended at once by a Stop, and their results
// told faithfully.
package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/redact"
)

// Transports.
const (
	Stdio = "stdio"
	HTTP  = "http"
)

// Defaults, as Codex has them.
const (
	DefaultStartup = 10 * time.Second
	DefaultToolRun = 60 * time.Second
)

// Server is one MCP server as configured, its ${VAR} references expanded.
type Server struct {
	Name      string
	Transport string // Stdio or HTTP
	Command   string
	Args      []string
	Env       map[string]string
	Cwd       string
	URL       string
	Headers   map[string]string
	// Startup bounds the start and the handshake; ToolRun each call (timed_out past it).
	Startup, ToolRun  time.Duration
	Required          bool     // a failure to start ends the session's start
	Enabled, Disabled []string // tool filters: only Enabled (when given), never Disabled
	// Source is the file the server came from; Project says it is a project's file, whose servers
	// start only once the person has trusted that file's digest.
	Source  string
	Project bool
}

// Project is a project's .mcp.json as read: its servers and the digest trust is keyed by.
type Project struct {
	Path    string
	Digest  string
	Servers []Server
}

// MaxProjectFile is the longest .mcp.json rein reads: a list of servers, not a data file.
const MaxProjectFile = 1 << 20

// ProjectFile is where a workspace's project servers are configured.
func ProjectFile(ws string) string { return filepath.Join(ws, ".mcp.json") }

// LoadProject reads the .mcp.json of workspace ws; a workspace without one has none (nil, nil).
func LoadProject(ws string, getenv func(string) string) (*Project, error) {
	path := ProjectFile(ws)
	data, size, err := fsys.ReadRegular(path, MaxProjectFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if size > int64(len(data)) {
		return nil, fmt.Errorf("%s is %d KiB; a server list is at most %d KiB: is it the file you meant?", path, size>>10, MaxProjectFile>>10)
	}
	sum := sha256.Sum256(data)
	p := &Project{Path: path, Digest: hex.EncodeToString(sum[:])}
	p.Servers, err = parseProject(data, path, getenv)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// projectServer is one entry of .mcp.json's mcpServers, in Claude Code's shape.
type projectServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

func parseProject(data []byte, path string, getenv func(string) string) ([]Server, error) {
	var file struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("%s is not the JSON of an MCP configuration: %v", path, err)
	}
	var out []Server
	for _, name := range sortedKeys(file.Servers) {
		var ps projectServer
		d := json.NewDecoder(bytes.NewReader(file.Servers[name]))
		d.DisallowUnknownFields()
		if err := d.Decode(&ps); err != nil {
			return nil, fmt.Errorf("%s: server %q: %v (it takes type, command, args, env, url, headers)", path, name, err)
		}
		s := Server{Name: name, Command: ps.Command, Args: ps.Args, Env: ps.Env, URL: ps.URL, Headers: ps.Headers,
			Startup: DefaultStartup, ToolRun: DefaultToolRun, Source: path, Project: true}
		switch ps.Type {
		case "", "stdio":
			s.Transport = Stdio
			if ps.Type == "" && ps.URL != "" && ps.Command == "" {
				s.Transport = HTTP
			}
		case "http", "streamable-http", "streamable_http":
			s.Transport = HTTP
		case "sse":
			return nil, fmt.Errorf("%s: server %q: type sse (the 2024 HTTP+SSE transport) is not supported; rein speaks streamable HTTP (type \"http\"), which servers of the SSE kind usually also serve", path, name)
		default:
			return nil, fmt.Errorf("%s: server %q: type %q is not one rein knows (stdio or http)", path, name, ps.Type)
		}
		if err := checkLiterals(path, &s); err != nil {
			return nil, err
		}
		if err := expandServer(&s, getenv); err != nil {
			return nil, fmt.Errorf("%s: server %q: %v", path, name, err)
		}
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// ConfigServer is one [mcp_servers.<name>] table of rein's config file, with Codex's keys.
type ConfigServer struct {
	Command           string            `toml:"command"`
	Args              []string          `toml:"args"`
	Env               map[string]string `toml:"env"`
	Cwd               string            `toml:"cwd"`
	URL               string            `toml:"url"`
	BearerTokenEnvVar string            `toml:"bearer_token_env_var"`
	StartupTimeoutSec *float64          `toml:"startup_timeout_sec"`
	ToolTimeoutSec    *float64          `toml:"tool_timeout_sec"`
	Enabled           *bool             `toml:"enabled"`
	Required          bool              `toml:"required"`
	EnabledTools      []string          `toml:"enabled_tools"`
	DisabledTools     []string          `toml:"disabled_tools"`
}

// FromConfig turns the config file's mcp_servers tables into servers, leaving out those with
// enabled = false. path names the file in errors.
func FromConfig(tables map[string]ConfigServer, path string, getenv func(string) string) ([]Server, error) {
	var out []Server
	for _, name := range sortedKeys(tables) {
		c := tables[name]
		if c.Enabled != nil && !*c.Enabled {
			continue
		}
		s := Server{Name: name, Command: c.Command, Args: c.Args, Env: c.Env, Cwd: c.Cwd, URL: c.URL,
			Startup: DefaultStartup, ToolRun: DefaultToolRun, Required: c.Required,
			Enabled: c.EnabledTools, Disabled: c.DisabledTools, Source: path}
		s.Transport = Stdio
		if c.URL != "" {
			s.Transport = HTTP
		}
		for key, sec := range map[string]*float64{"startup_timeout_sec": c.StartupTimeoutSec, "tool_timeout_sec": c.ToolTimeoutSec} {
			if sec == nil {
				continue
			}
			if *sec <= 0 || *sec > 24*3600 {
				return nil, fmt.Errorf("%s: mcp_servers.%s.%s = %v: give a number of seconds above 0 and at most a day", path, name, key, *sec)
			}
		}
		if c.StartupTimeoutSec != nil {
			s.Startup = time.Duration(*c.StartupTimeoutSec * float64(time.Second))
		}
		if c.ToolTimeoutSec != nil {
			s.ToolRun = time.Duration(*c.ToolTimeoutSec * float64(time.Second))
		}
		if err := checkLiterals(path, &s); err != nil {
			return nil, err
		}
		if c.BearerTokenEnvVar != "" {
			if s.Transport != HTTP {
				return nil, fmt.Errorf("%s: mcp_servers.%s sets bearer_token_env_var, which only an HTTP server (url) takes", path, name)
			}
			tok := getenv(c.BearerTokenEnvVar)
			if tok == "" {
				return nil, fmt.Errorf("%s: mcp_servers.%s: bearer_token_env_var names %s, which is not set in the environment", path, name, c.BearerTokenEnvVar)
			}
			s.Headers = map[string]string{"Authorization": "Bearer " + tok}
		}
		if err := expandServer(&s, getenv); err != nil {
			return nil, fmt.Errorf("%s: mcp_servers.%s: %v", path, name, err)
		}
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func (s *Server) check() error {
	if !serverName.MatchString(s.Name) {
		return fmt.Errorf("server %q: a server's name is letters, digits, _ and - (it becomes part of its tools' names)", s.Name)
	}
	switch s.Transport {
	case Stdio:
		if s.Command == "" {
			return fmt.Errorf("server %q has no command (a stdio server needs one; an HTTP server needs a url)", s.Name)
		}
		if s.URL != "" {
			return fmt.Errorf("server %q has both a command and a url: give one", s.Name)
		}
		if len(s.Headers) > 0 {
			return fmt.Errorf("server %q: headers are for an HTTP server (url); a stdio server takes env", s.Name)
		}
	case HTTP:
		if !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://") {
			return fmt.Errorf("server %q: url %q is not an http:// or https:// address", s.Name, s.URL)
		}
		if s.Command != "" {
			return fmt.Errorf("server %q has both a command and a url: give one", s.Name)
		}
	}
	return nil
}

var serverName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,48}$`)

// secretName says a variable or header is named for a secret.
var secretName = regexp.MustCompile(`(?i)(token|secret|passw|api[-_]?key|apikey|credential|auth|private[-_]?key|access[-_]?key)`)

// checkLiterals refuses a secret written into the file itself: a header or an environment
// variable named for one whose value is not a ${VAR} reference, or any value that has the shape
// of a known key. Such a file is one commit away from publishing the secret.
func checkLiterals(path string, s *Server) error {
	refuse := func(where string) error {
		return fmt.Errorf("%s: server %q: %s holds a secret written into the file; put the secret in the environment and refer to it, as \"${MY_TOKEN}\" (in .mcp.json) or with bearer_token_env_var / env = { NAME = \"${MY_TOKEN}\" } (in config.toml)", path, s.Name, where)
	}
	for _, k := range sortedKeys(s.Headers) {
		v := s.Headers[k]
		if secretName.MatchString(k) && !onlyReferences(v) || redact.Redact(v) != v {
			return refuse("header " + k)
		}
	}
	for _, k := range sortedKeys(s.Env) {
		v := s.Env[k]
		if secretName.MatchString(k) && v != "" && !onlyReferences(v) || redact.Redact(v) != v {
			return refuse("env " + k)
		}
	}
	for i, a := range append([]string{s.Command, s.URL}, s.Args...) {
		if redact.Redact(a) != a {
			what := "an argument"
			switch i {
			case 0:
				what = "the command"
			case 1:
				what = "the url"
			}
			return refuse(what)
		}
	}
	return nil
}

// onlyReferences says v's secret part comes from the environment: it holds a ${VAR} reference,
// and what is left once the references are taken out is a scheme word at most ("Bearer ").
func onlyReferences(v string) bool {
	if !strings.Contains(v, "${") {
		return false
	}
	rest := strings.TrimSpace(reference.ReplaceAllString(v, ""))
	return len(rest) <= 12 && !strings.ContainsAny(rest, "0123456789")
}

var reference = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}`)

// expand replaces ${VAR} and ${VAR:-default} in v; a VAR unset (or empty) without a default is an
// error naming it.
func expand(v string, getenv func(string) string) (string, error) {
	var missing []string
	out := reference.ReplaceAllStringFunc(v, func(ref string) string {
		body := ref[2 : len(ref)-1]
		name, def, hasDef := strings.Cut(body, ":-")
		if val := getenv(name); val != "" {
			return val
		}
		if hasDef {
			return def
		}
		missing = append(missing, name)
		return ""
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("${%s} is not set in the environment (set it, or give a default as ${%s:-value})", missing[0], missing[0])
	}
	return out, nil
}

func expandServer(s *Server, getenv func(string) string) error {
	var err error
	one := func(p *string) {
		if err == nil {
			*p, err = expand(*p, getenv)
		}
	}
	one(&s.Command)
	one(&s.URL)
	one(&s.Cwd)
	for i := range s.Args {
		one(&s.Args[i])
	}
	for _, m := range []map[string]string{s.Env, s.Headers} {
		for _, k := range sortedKeys(m) {
			v := m[k]
			one(&v)
			m[k] = v
		}
	}
	return err
}

// offers says whether the server's filters let a tool of this name through.
func (s *Server) offers(tool string) bool {
	if len(s.Enabled) > 0 && !slices.Contains(s.Enabled, tool) {
		return false
	}
	return !slices.Contains(s.Disabled, tool)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
