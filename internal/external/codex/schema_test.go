package codex

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSchema has the installed Codex generate its app-server protocol's JSON Schema and checks
// that every method, field and value rein sends or reads is in it, so a Codex that renames one
// fails here rather than in a conversation.
func TestSchema(t *testing.T) {
	path := codexPath(t)
	dir := t.TempDir()
	if out, err := exec.Command(path, "app-server", "generate-json-schema", "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("codex app-server generate-json-schema: %v\n%s", err, out)
	}
	sc := schemas{dir: dir, t: t}

	methods := map[string][]string{
		"ClientRequest.json":      {"initialize", "thread/start", "thread/resume", "turn/start", "turn/interrupt"},
		"ClientNotification.json": {"initialized"},
		"ServerNotification.json": {noteTurnStarted, noteTurnCompleted, noteItemStarted, noteItemCompleted, noteMessageDelta, noteError},
		"ServerRequest.json":      {reqCommandApproval, reqFileApproval},
	}
	for file, want := range methods {
		have := sc.methods(file)
		for _, m := range want {
			if !slices.Contains(have, m) {
				t.Errorf("%s has no method %q (it has %v)", file, m, have)
			}
		}
	}

	fields := map[string][]string{
		"v1/InitializeParams.json":                   {"clientInfo.name", "clientInfo.title", "clientInfo.version"},
		"v1/InitializeResponse.json":                 {"userAgent"},
		"v2/ThreadStartParams.json":                  {"approvalPolicy", "sandbox", "cwd", "model"},
		"v2/ThreadStartResponse.json":                {"thread.id"},
		"v2/ThreadResumeParams.json":                 {"threadId", "approvalPolicy", "sandbox", "cwd", "model", "excludeTurns"},
		"v2/ThreadResumeResponse.json":               {"thread.id"},
		"v2/TurnStartParams.json":                    {"threadId", "input", "model"},
		"v2/TurnStartResponse.json":                  {"turn.id"},
		"v2/TurnInterruptParams.json":                {"threadId", "turnId"},
		"v2/TurnStartedNotification.json":            {"threadId", "turn.id"},
		"v2/TurnCompletedNotification.json":          {"threadId", "turn.id", "turn.status", "turn.error.message", "turn.error.additionalDetails"},
		"v2/ItemStartedNotification.json":            {"threadId", "turnId", "item"},
		"v2/ItemCompletedNotification.json":          {"threadId", "turnId", "item"},
		"v2/AgentMessageDeltaNotification.json":      {"turnId", "itemId", "delta"},
		"v2/ErrorNotification.json":                  {"threadId", "turnId", "willRetry", "error.message", "error.additionalDetails"},
		"CommandExecutionRequestApprovalParams.json": {"itemId", "command", "cwd", "reason"},
		"FileChangeRequestApprovalParams.json":       {"itemId", "reason", "grantRoot"},
	}
	for file, paths := range fields {
		for _, p := range paths {
			if sc.field(file, p) == nil {
				t.Errorf("%s has no field %s", file, p)
			}
		}
	}

	items := map[string][]string{
		"agentMessage":     {"id", "text"},
		"reasoning":        {"id", "summary", "content"},
		"plan":             {"id", "text"},
		"commandExecution": {"id", "command", "status", "aggregatedOutput", "exitCode"},
		"fileChange":       {"id", "status", "changes"},
		"mcpToolCall":      {"id", "server", "tool", "status"},
		"dynamicToolCall":  {"id", "tool", "status"},
		"webSearch":        {"id", "query"},
	}
	item := sc.field("v2/ItemCompletedNotification.json", "item")
	for typ, props := range items {
		v := sc.variant("v2/ItemCompletedNotification.json", item, typ)
		if v == nil {
			t.Errorf("ThreadItem has no type %q", typ)
			continue
		}
		for _, p := range props {
			if sc.prop("v2/ItemCompletedNotification.json", v, p) == nil {
				t.Errorf("ThreadItem %s has no field %s", typ, p)
			}
		}
	}
	change := sc.field("v2/ItemCompletedNotification.json", "item")
	if fc := sc.variant("v2/ItemCompletedNotification.json", change, "fileChange"); fc != nil {
		ch := sc.prop("v2/ItemCompletedNotification.json", fc, "changes")
		el := sc.resolve("v2/ItemCompletedNotification.json", asMap(ch["items"]))
		for _, p := range []string{"path", "kind"} {
			if sc.prop("v2/ItemCompletedNotification.json", el, p) == nil {
				t.Errorf("FileUpdateChange has no field %s", p)
			}
		}
	}

	values := []struct {
		file, field string
		want        []string
	}{
		{"v2/TurnCompletedNotification.json", "turn.status", []string{turnCompleted, turnInterrupted, turnFailed}},
		{"v2/ThreadStartParams.json", "approvalPolicy", []string{"untrusted", "never"}},
		{"v2/ThreadStartParams.json", "sandbox", []string{"read-only", "workspace-write", "danger-full-access"}},
		{"CommandExecutionRequestApprovalResponse.json", "decision", []string{"accept", "decline", "cancel"}},
		{"FileChangeRequestApprovalResponse.json", "decision", []string{"accept", "decline", "cancel"}},
	}
	for _, v := range values {
		have := sc.enum(v.file, sc.field(v.file, v.field))
		for _, w := range v.want {
			if !slices.Contains(have, w) {
				t.Errorf("%s %s has no value %q (it has %v)", v.file, v.field, w, have)
			}
		}
	}
	status := sc.prop("v2/ItemCompletedNotification.json", sc.variant("v2/ItemCompletedNotification.json", item, "commandExecution"), "status")
	for _, w := range []string{"inProgress", "completed", "failed", "declined"} {
		if !slices.Contains(sc.enum("v2/ItemCompletedNotification.json", status), w) {
			t.Errorf("CommandExecutionStatus has no value %q", w)
		}
	}
}

// schemas reads the generated JSON Schema files, resolving each file's own #/definitions.
type schemas struct {
	dir   string
	t     *testing.T
	files map[string]map[string]any
}

func (s *schemas) load(file string) map[string]any {
	if s.files == nil {
		s.files = map[string]map[string]any{}
	}
	if f, ok := s.files[file]; ok {
		return f
	}
	data, err := os.ReadFile(filepath.Join(s.dir, file))
	if err != nil {
		s.t.Fatalf("the generated schema lacks %s: %v", file, err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		s.t.Fatalf("%s: %v", file, err)
	}
	s.files[file] = m
	return m
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

// resolve follows $ref, and a single allOf, or an anyOf of one schema and null.
func (s *schemas) resolve(file string, n map[string]any) map[string]any {
	for range 16 {
		if n == nil {
			return nil
		}
		if ref, ok := n["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/definitions/")
			n = asMap(asMap(s.load(file)["definitions"])[name])
			continue
		}
		var alts []any
		if a, ok := n["allOf"].([]any); ok && len(a) == 1 {
			alts = a
		} else if a, ok := n["anyOf"].([]any); ok {
			for _, x := range a {
				if asMap(x)["type"] != "null" {
					alts = append(alts, x)
				}
			}
		}
		if len(alts) != 1 || n["properties"] != nil {
			return n
		}
		n = asMap(alts[0])
	}
	return n
}

// prop finds a property of n, or of any of its oneOf/anyOf branches.
func (s *schemas) prop(file string, n map[string]any, name string) map[string]any {
	n = s.resolve(file, n)
	if n == nil {
		return nil
	}
	if p := asMap(asMap(n["properties"])[name]); p != nil {
		return p
	}
	for _, key := range []string{"oneOf", "anyOf"} {
		for _, alt := range asSlice(n[key]) {
			if p := s.prop(file, asMap(alt), name); p != nil {
				return p
			}
		}
	}
	return nil
}

func asSlice(v any) []any { a, _ := v.([]any); return a }

// field follows a dotted path of properties from the file's root.
func (s *schemas) field(file, path string) map[string]any {
	n := s.load(file)
	for _, name := range strings.Split(path, ".") {
		if n = s.prop(file, n, name); n == nil {
			return nil
		}
	}
	return n
}

// variant picks the oneOf branch of n whose "type" is typ.
func (s *schemas) variant(file string, n map[string]any, typ string) map[string]any {
	n = s.resolve(file, n)
	for _, alt := range asSlice(n["oneOf"]) {
		a := s.resolve(file, asMap(alt))
		if slices.Contains(s.enum(file, asMap(asMap(a["properties"])["type"])), typ) {
			return a
		}
	}
	return nil
}

// enum lists the string values n allows, through refs and oneOf/anyOf branches.
func (s *schemas) enum(file string, n map[string]any) []string {
	n = s.resolve(file, n)
	var out []string
	for _, v := range asSlice(n["enum"]) {
		if str, ok := v.(string); ok {
			out = append(out, str)
		}
	}
	for _, key := range []string{"oneOf", "anyOf", "allOf"} {
		for _, alt := range asSlice(n[key]) {
			out = append(out, s.enum(file, asMap(alt))...)
		}
	}
	return out
}

// methods lists the method names a ClientRequest/ServerNotification-style union allows.
func (s *schemas) methods(file string) []string {
	var out []string
	for _, alt := range asSlice(s.load(file)["oneOf"]) {
		out = append(out, s.enum(file, asMap(asMap(asMap(alt)["properties"])["method"]))...)
	}
	return out
}
