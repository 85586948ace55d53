package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/record"
	osbox "github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/tool/fetch"
	"github.com/reinhq/rein/internal/tool/toolset"
)

// toolNames are the names a rule may use: every tool and door a session has.
var toolNames = []string{"bash", "read_file", "write_file", "edit_file", "glob", "grep", "apply_patch", "str_replace_based_edit_tool", "str_replace_editor", "todo", "web_fetch", "context", "transcript", "agents"}

// TestRuleNames: the names buildRunner accepts are exactly the session's tools and doors, and
// the help lists them all.
func TestRuleNames(t *testing.T) {
	for _, name := range toolNames {
		if _, err := buildRunner(t.TempDir(), toolset.Rein, "workspace", nil, []string{name}, osbox.Policy{Mode: osbox.Off}, fetch.Options{}); err != nil {
			t.Errorf("--deny %s: %v", name, err)
		}
		if !strings.Contains(rulesHelp, name) {
			t.Errorf("the rules help does not name %s", name)
		}
	}
	_, err := buildRunner(t.TempDir(), toolset.Rein, "workspace", nil, []string{"nosuch"}, osbox.Policy{Mode: osbox.Off}, fetch.Options{})
	if err == nil || !strings.Contains(err.Error(), "the tools are "+strings.Join(toolNames, ", ")) {
		t.Errorf("--deny nosuch: %v, want the list %v", err, toolNames)
	}
}

// TestRulesRefused: the real binary refuses a rule naming no tool, before it opens anything:
// exit 2, the right name suggested or the names listed, no session left behind. The config file's
// rules are judged the same way.
func TestRulesRefused(t *testing.T) {
	sb := newSandbox(t)
	run := func(args ...string) result {
		return sb.rein(t, append(append([]string{"run"}, simArgs("")...), append(args, "hello")...)...)
	}
	res := run("--deny", "Bash")
	if res.code != exitUsage || !strings.Contains(res.stderr, "did you mean bash?") {
		t.Errorf("--deny Bash: want exit 2 naming bash\n%s", res)
	}
	res = run("--deny", "nosuch")
	if res.code != exitUsage || !strings.Contains(res.stderr, "the tools are "+strings.Join(toolNames, ", ")) {
		t.Errorf("--deny nosuch: want exit 2 listing the tools\n%s", res)
	}
	res = run("--allow", "Transcript(index)")
	if res.code != exitUsage || !strings.Contains(res.stderr, "did you mean transcript?") {
		t.Errorf("--allow Transcript(index): want exit 2 naming transcript\n%s", res)
	}
	res = run("--deny", "bash(git push*")
	if res.code != exitUsage || !strings.Contains(res.stderr, "closing parenthesis") {
		t.Errorf("--deny with no closing parenthesis: want exit 2\n%s", res)
	}
	writeConfig(t, sb, `deny = ["Agents"]`)
	res = run()
	if res.code != exitUsage || !strings.Contains(res.stderr, "did you mean agents?") {
		t.Errorf("the config file's deny = [\"Agents\"]: want exit 2 naming agents\n%s", res)
	}
	if paths := sb.records(t); len(paths) != 0 {
		t.Errorf("refused runs left sessions behind: %v", paths)
	}
}

// TestNumbersRefused: a numeric flag or config value out of range is a usage error (exit 2) that
// says the range, for run, resume, chat's and serve's flags alike; nothing is started.
func TestNumbersRefused(t *testing.T) {
	sb := newSandbox(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--provider", "sim", "--max-turns", "-1", "hi"}, "--max-turns -1 is out of range: it must be a whole number of 1 or more"},
		{[]string{"run", "--provider", "sim", "--max-turns", "0", "hi"}, "--max-turns 0 is out of range"},
		{[]string{"run", "--provider", "sim", "--max-tokens", "-5", "hi"}, "--max-tokens -5 is out of range: it must be a whole number of 1 or more"},
		{[]string{"run", "--provider", "sim", "--context-window", "0", "hi"}, "leave it out to use the model's known window"},
		{[]string{"run", "--provider", "sim", "--sim-delay", "-1s", "hi"}, "it must be a duration of 0 or more"},
		{[]string{"resume", "--provider", "sim", "--max-turns", "-1"}, "--max-turns -1 is out of range"},
		{[]string{"serve", "--provider", "sim", "--max-tokens", "0"}, "--max-tokens 0 is out of range"},
		{[]string{"sim", "serve", "--delay", "-1ms"}, "--delay -1ms is out of range"},
		{[]string{"sim", "serve", "--context-limit", "-1"}, "--context-limit -1 is out of range"},
		{[]string{"fork", "x", "--at", "-2"}, "--at -2 is out of range"},
	}
	for _, tt := range tests {
		res := sb.rein(t, tt.args...)
		if res.code != exitUsage || !strings.Contains(res.stderr, tt.want) {
			t.Errorf("rein %s: want exit 2 saying %q\n%s", strings.Join(tt.args, " "), tt.want, res)
		}
	}
	for _, line := range []string{"max_turns = -1", "max_tokens = 0", "context_window = -100"} {
		writeConfig(t, sb, line)
		res := sb.rein(t, "run", "--provider", "sim", "hi")
		key, _, _ := strings.Cut(line, " ")
		if res.code != exitUsage || !strings.Contains(res.stderr, "sets "+line+", out of range") {
			t.Errorf("config %s: want exit 2 naming %s\n%s", line, key, res)
		}
	}
	if paths := sb.records(t); len(paths) != 0 {
		t.Errorf("refused runs left sessions behind: %v", paths)
	}
}

// TestDenyInRecord: `--deny "bash(git push*)"` refuses pushes however they are spelt, and a
// deny rule on a door refuses the door: the record answers each call denied, naming the rule,
// and a git on PATH that marks every run proves the pushes never ran while an allowed git did.
// The config file's deny rules stay in force beside the flags'.
func TestDenyInRecord(t *testing.T) {
	sb := newSandbox(t)
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	marks := filepath.Join(t.TempDir(), "git-ran")
	fake := "#!/bin/sh\necho \"$*\" >> " + marks + "\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, kv := range sb.env {
		if strings.HasPrefix(kv, "PATH=") {
			sb.env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	writeConfig(t, sb, `deny = ["bash(rm -rf*)"]`)
	calls := []any{
		bash("sh -c 'git push'"),
		bash("env FOO=1 git -C . push origin main"),
		bash(`g=git; $g push`),
		bash("git status"),
		bash("rm -rf ."),
		map[string]any{"name": "transcript", "arguments": map[string]any{"op": "index"}},
		map[string]any{"name": "context", "arguments": map[string]any{"op": "survey"}},
	}
	script := writeScript(t, t.TempDir(),
		map[string]any{"text": "Pushing, several ways.", "tool_calls": calls},
		map[string]any{"text": "Done."},
	)
	res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...),
		"--deny", "bash(git push*)", "--deny", "transcript", "--sandbox", "off", "--no-checkpoints", "push it")...) // the fake git logs outside the workspace; checkpoints would run it too
	if res.code != 0 {
		t.Fatalf("rein run:\n%s", res)
	}
	paths := sb.records(t)
	if len(paths) != 1 {
		t.Fatalf("want one record, found %v", paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := replay(b)
	if err != nil {
		t.Fatal(err)
	}
	var results []record.ToolResult
	for _, r := range recs {
		if tr, ok := r.Body.(*record.ToolResults); ok {
			results = append(results, tr.Results...)
		}
	}
	want := []struct {
		outcome record.Outcome
		reason  string
	}{
		{record.Denied, "bash(git push) is denied by the rule bash(git push*)"},
		{record.Denied, "read as git push origin main, is denied by the rule bash(git push*)"},
		{record.Denied, "which cannot be judged: the command name $g is made when it runs; and it mentions git"},
		{record.OK, ""},
		{record.Denied, "denied by the rule bash(rm -rf*)"},
		{record.Denied, "transcript is denied by the rule transcript"},
		{record.OK, ""},
	}
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d\n%s", len(results), len(want), res)
	}
	for i, w := range want {
		if results[i].Outcome != w.outcome || !strings.Contains(results[i].Content, w.reason) {
			t.Errorf("call %d: %s %q, want %s %q", i+1, results[i].Outcome, results[i].Content, w.outcome, w.reason)
		}
	}
	ran, _ := os.ReadFile(marks)
	if got := strings.Fields(string(ran)); !slices.Equal(got, []string{"status"}) {
		t.Errorf("the fake git ran with %q, want only status", ran)
	}
}

// writeConfig writes the sandbox's config file ($HOME/.config/rein/config.toml).
func writeConfig(t *testing.T, sb *sandbox, content string) {
	t.Helper()
	var home string
	for _, kv := range sb.env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	dir := filepath.Join(home, ".config", "rein")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(content+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAllowAsks: in ask mode, --allow "bash(ls*)" lets ls run unasked but not ls writing to a
// file: that call is put to the person, and rein run, with no one to ask, refuses it saying why.
func TestAllowAsks(t *testing.T) {
	sb := newSandbox(t)
	home := filepath.Dir(sb.ws)
	script := writeScript(t, t.TempDir(),
		map[string]any{"text": "Listing.", "tool_calls": []any{bash("ls"), bash("ls > ~/.file"), bash("ls; touch made")}},
		map[string]any{"text": "Done."},
	)
	res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...),
		"--permission-mode", "ask", "--allow", "bash(ls*)", "list")...)
	if res.code != 0 {
		t.Fatalf("rein run:\n%s", res)
	}
	b, err := os.ReadFile(sb.records(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := replay(b)
	if err != nil {
		t.Fatal(err)
	}
	var results []record.ToolResult
	for _, r := range recs {
		if tr, ok := r.Body.(*record.ToolResults); ok {
			results = append(results, tr.Results...)
		}
	}
	if len(results) != 3 || results[0].Outcome != record.OK {
		t.Fatalf("results %+v", results)
	}
	if r := results[1]; r.Outcome != record.Denied || !strings.Contains(r.Content, "needs the person's approval") ||
		!strings.Contains(r.Content, "it writes to a file (> ~/.file)") {
		t.Errorf("ls > ~/.file: %s %q", r.Outcome, r.Content)
	}
	if r := results[2]; r.Outcome != record.Denied || !strings.Contains(r.Content, "bash(touch made) matches no allow rule") {
		t.Errorf("ls; touch made: %s %q", r.Outcome, r.Content)
	}
	for _, p := range []string{filepath.Join(home, ".file"), filepath.Join(sb.ws, "made")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was made by a call that should have been asked", p)
		}
	}
}
