package toolset

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
	fstool "github.com/reinhq/rein/internal/tool/fs"
	"github.com/reinhq/rein/internal/tool/shell"
)

func TestFor(t *testing.T) {
	tests := []struct {
		wire  Wire
		model string
		want  Set
	}{
		{Anthropic, "claude-sonnet-4-5", Claude},
		{Anthropic, "claude-opus-4-1-20250805", Claude},
		{Anthropic, "claude-haiku-4-5", Claude},
		{Anthropic, "claude-3-7-sonnet-latest", Claude37},
		{Anthropic, "claude-3-5-haiku-latest", Rein},
		{Anthropic, "sim-1", Rein},
		{Chat, "anthropic/claude-sonnet-4.5", Rein},
		{Responses, "gpt-5", Codex},
		{Responses, "gpt-5-codex", Codex},
		{Responses, "gpt-4.1", CodexFunction},
		{Responses, "o3", CodexFunction},
		{Chat, "gpt-5", CodexFunction},
		{Chat, "openai/gpt-5", CodexFunction},
		{Chat, "qwen3", Rein},
		{Chat, "gpt-4o", Rein},
	}
	for _, tt := range tests {
		if got := For(tt.wire, tt.model); got != tt.want {
			t.Errorf("For(%s, %s) = %s, want %s", tt.wire, tt.model, got, tt.want)
		}
	}
	for _, s := range []Set{Rein, Claude, Claude37, Codex, CodexFunction} {
		if got, err := Parse(string(s)); err != nil || got != s {
			t.Errorf("Parse(%s) = %s, %v", s, got, err)
		}
	}
	if _, err := Parse("nosuch"); err == nil {
		t.Error("Parse accepted an unknown set")
	}
}

func open(t *testing.T) (*shell.Tool, *fstool.Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	sh, err := shell.New(dir, shell.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := fstool.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return sh, ws, dir
}

// Every set registers, names only tools Names lists, and offers its own forms.
func TestSets(t *testing.T) {
	sh, ws, _ := open(t)
	want := map[Set]string{
		Rein:          "bash,read_file,write_file,edit_file,glob,grep",
		Claude:        "bash,str_replace_based_edit_tool,glob,grep",
		Claude37:      "bash,str_replace_editor,glob,grep",
		Codex:         "bash,apply_patch,read_file,glob,grep",
		CodexFunction: "bash,apply_patch,read_file,glob,grep",
	}
	for set, names := range want {
		reg, err := tool.NewRegistry(set.Tools(sh, ws)...)
		if err != nil {
			t.Fatalf("%s: %v", set, err)
		}
		if got := strings.Join(reg.Names(), ","); got != names {
			t.Errorf("%s: %s, want %s", set, got, names)
		}
		for _, n := range reg.Names() {
			if !strings.Contains(","+strings.Join(Names(), ",")+",", ","+n+",") {
				t.Errorf("%s: Names lacks %s", set, n)
			}
		}
		for _, s := range reg.Specs() {
			if name, ok := anthropic.ClientToolNames[s.Type]; s.Type != "" && (!ok || name != s.Name) {
				t.Errorf("%s: %s has type %q, which Anthropic offers under %q", set, s.Name, s.Type, name)
			}
			if (s.Grammar != "") != (set == Codex && s.Name == "apply_patch") {
				t.Errorf("%s: %s grammar %v", set, s.Name, s.Grammar != "")
			}
		}
	}
}

// The bash tool type runs through rein's bash tool: a bash rule applies to its command, a
// restart returns to the workspace root, and a Stop ends the command.
func TestBashType(t *testing.T) {
	sh, _, dir := open(t)
	b := Bash(sh)
	reg, err := tool.NewRegistry(b)
	if err != nil {
		t.Fatal(err)
	}
	r := &tool.Runner{Tools: reg, Policy: tool.Policy{Deny: []tool.Rule{{Tool: "bash", Pattern: "git push*"}}}}
	run := func(ctx context.Context, args string) tool.Result {
		return r.Run(ctx, tool.Call{ID: "c", Name: "bash", Args: json.RawMessage(args)})
	}
	ctx := context.Background()
	if res := run(ctx, `{"command":"echo ok && git push origin main"}`); res.Outcome != record.Denied || !strings.Contains(res.Content, "bash(git push*)") {
		t.Errorf("git push under deny bash(git push*): %s %q", res.Outcome, res.Content)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if res := run(ctx, `{"command":"cd sub && pwd"}`); res.Outcome != record.OK || !strings.Contains(res.Content, "/sub") {
		t.Fatalf("cd: %s %q", res.Outcome, res.Content)
	}
	if res := run(ctx, `{"restart":true}`); res.Outcome != record.OK || !strings.Contains(res.Content, "restarted") {
		t.Fatalf("restart: %s %q", res.Outcome, res.Content)
	}
	if res := run(ctx, `{"command":"pwd"}`); res.Outcome != record.OK || strings.Contains(res.Content, "/sub") {
		t.Errorf("after restart: %s %q", res.Outcome, res.Content)
	}
	if res := run(ctx, `{}`); res.Outcome != record.Failed {
		t.Errorf("no command: %s %q", res.Outcome, res.Content)
	}
	stop, cancel := context.WithCancel(ctx)
	done := make(chan tool.Result)
	go func() { done <- run(stop, `{"command":"echo started; sleep 30"}`) }()
	// The command runs until the Stop; the Stop ends it.
	cancel()
	if res := <-done; res.Outcome != record.Interrupted && res.Outcome != record.NotExecuted {
		t.Errorf("stopped: %s %q", res.Outcome, res.Content)
	}
	if s := b.Spec(); s.Type != "bash_20250124" || s.Name != "bash" {
		t.Errorf("spec %+v", s)
	}
}
