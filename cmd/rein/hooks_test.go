package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/record"
)

// holdHook holds bash calls that echo into two.txt until the workspace has a file "approved".
const holdHook = `
[[hooks.pre_tool]]
match = "bash(echo two*)"
command = "[ -e approved ] || echo '{\"decision\":\"hold\",\"reason\":\"waiting for review\"}'"
timeout_sec = 30
`

// writeUserConfig writes rein's config file for the sandbox (its HOME is the parent of its REIN_HOME).
func (sb *sandbox) writeUserConfig(t *testing.T, body string) {
	t.Helper()
	dir := filepath.Join(filepath.Dir(sb.home), ".config", "rein")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func twoCalls(t *testing.T, dir string) string {
	return writeScript(t, dir,
		map[string]any{"tool_calls": []any{bash("echo one >> one.txt"), bash("echo two >> two.txt")}},
		map[string]any{"text": "Both done."})
}

func lastToolResults(t *testing.T, path string) []record.ToolResult {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, st, err := replay(b)
	if err != nil {
		t.Fatalf("the record does not replay: %v", err)
	}
	if !st.IsReady() || st.Parked() {
		t.Fatalf("the session is not settled: phase %s, parked %v", st.Phase(), st.Parked())
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if tr, ok := recs[i].Body.(*record.ToolResults); ok {
			return tr.Results
		}
	}
	t.Fatal("no tool results")
	return nil
}

// A hook holds a call: rein exits 5 with the session parked (rein sessions says held, with the
// reason); a resume while the hook still holds parks it again; once the hook lets it go, a resume
// runs the held call exactly once and the exchange goes on; doctor calls the record admissible.
func TestHeldSessionSurvivesExit(t *testing.T) {
	sb := newSandbox(t)
	sb.writeUserConfig(t, holdHook)
	script := twoCalls(t, filepath.Dir(sb.home))
	res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "write both")...)
	if res.code != exitParked || !strings.Contains(res.stderr, "is held: waiting for review") {
		t.Fatalf("run: %s", res)
	}
	if _, err := os.Stat(filepath.Join(sb.ws, "two.txt")); err == nil {
		t.Fatal("the held call ran")
	}
	ls := sb.rein(t, "sessions")
	if !strings.Contains(ls.stdout, "held: waiting for review") {
		t.Errorf("rein sessions does not show the hold:\n%s", ls)
	}
	js := sb.rein(t, "sessions", "--json")
	var row struct {
		ID         string `json:"id"`
		Parked     bool   `json:"parked"`
		HoldReason string `json:"hold_reason"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(js.stdout, "\n", 2)[0]), &row); err != nil || !row.Parked || row.HoldReason != "waiting for review" {
		t.Fatalf("sessions --json: %v %+v\n%s", err, row, js)
	}
	if res := sb.rein(t, "doctor", sb.records(t)[0]); res.code != 0 || !strings.Contains(res.stdout, "parked on the held call") {
		t.Errorf("doctor of a held session: %s", res)
	}
	if res := sb.rein(t, "resume", row.ID, "--sim-delay", "0"); res.code != exitParked {
		t.Fatalf("resume under a standing hold: %s", res)
	}
	if err := os.WriteFile(filepath.Join(sb.ws, "approved"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := sb.rein(t, "resume", row.ID, "--sim-delay", "0"); res.code != 0 {
		t.Fatalf("resume once approved: %s", res)
	}
	for name, want := range map[string]string{"one.txt": "one\n", "two.txt": "two\n"} {
		if b, _ := os.ReadFile(filepath.Join(sb.ws, name)); string(b) != want {
			t.Errorf("%s holds %q, want %q: each call runs exactly once", name, b, want)
		}
	}
	path := sb.records(t)[0]
	results := lastToolResults(t, path)
	if len(results) != 2 || results[0].Outcome != record.OK || results[1].Outcome != record.OK {
		t.Errorf("results %+v", results)
	}
	if res := sb.rein(t, "doctor", path); res.code != 0 || !strings.HasPrefix(res.stdout, "admissible") {
		t.Errorf("doctor: %s", res)
	}
	show := sb.rein(t, "show", row.ID)
	if !strings.Contains(show.stdout, "hooks and holds") || strings.Count(show.stdout, "waiting for review") < 2 {
		t.Errorf("rein show does not list the hooks' decisions:\n%s", show)
	}
}

// rein resume --stop settles a held session: the call that ran keeps its result, the held one is
// answered not_executed, and it never runs.
func TestStopOfHeldSession(t *testing.T) {
	sb := newSandbox(t)
	sb.writeUserConfig(t, holdHook)
	script := twoCalls(t, filepath.Dir(sb.home))
	if res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "write both")...); res.code != exitParked {
		t.Fatalf("run: %s", res)
	}
	if res := sb.rein(t, "resume", "--stop"); res.code != 0 {
		t.Fatalf("resume --stop: %s", res)
	}
	results := lastToolResults(t, sb.records(t)[0])
	if len(results) != 2 || results[0].Outcome != record.OK || results[1].Outcome != record.NotExecuted || !strings.Contains(results[1].Content, "held (waiting for review)") {
		t.Errorf("results %+v", results)
	}
	if _, err := os.Stat(filepath.Join(sb.ws, "two.txt")); err == nil {
		t.Error("the held call ran")
	}
}

// A project's hooks file runs nothing until it is trusted, and nothing again once it changes.
func TestUntrustedProjectHooksRunNothing(t *testing.T) {
	sb := newSandbox(t)
	if err := os.MkdirAll(filepath.Join(sb.ws, ".rein"), 0o755); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(sb.ws, ".rein", "config.toml")
	write := func(extra string) {
		body := "[[hooks.pre_tool]]\nmatch = \"bash\"\ncommand = \"touch hook-ran; echo 'not in this project' >&2; exit 2\"\n" + extra
		if err := os.WriteFile(project, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	dir := filepath.Dir(sb.home)
	run := func() result {
		script := writeScript(t, dir, map[string]any{"tool_calls": []any{bash("touch call-ran")}}, map[string]any{"text": "Done."})
		return sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "touch")...)
	}
	gone := func(names ...string) {
		for _, n := range names {
			os.Remove(filepath.Join(sb.ws, n))
		}
	}
	res := run()
	if res.code != 0 || !strings.Contains(res.stderr, "not trusted") {
		t.Fatalf("untrusted run: %s", res)
	}
	if _, err := os.Stat(filepath.Join(sb.ws, "hook-ran")); err == nil {
		t.Fatal("an untrusted project hook ran")
	}
	if l := sb.rein(t, "hooks", "list"); !strings.Contains(l.stdout, "NOT TRUSTED") {
		t.Errorf("hooks list: %s", l)
	}
	if tr := sb.rein(t, "hooks", "trust"); tr.code != 0 {
		t.Fatalf("hooks trust: %s", tr)
	}
	gone("hook-ran", "call-ran")
	if res := run(); res.code != 0 {
		t.Fatalf("trusted run: %s", res)
	}
	if _, err := os.Stat(filepath.Join(sb.ws, "hook-ran")); err != nil {
		t.Error("a trusted project hook did not run")
	}
	if _, err := os.Stat(filepath.Join(sb.ws, "call-ran")); err == nil {
		t.Error("the call the trusted hook refused ran")
	}
	write("# changed\n")
	gone("hook-ran", "call-ran")
	if res := run(); res.code != 0 || !strings.Contains(res.stderr, "not trusted") {
		t.Fatalf("changed file: %s", res)
	}
	if _, err := os.Stat(filepath.Join(sb.ws, "hook-ran")); err == nil {
		t.Error("a changed project hooks file ran without being trusted again")
	}
}

// rein hooks import-claude prints Claude Code's hooks as rein's tables, which rein's own config
// loader reads back: rein hooks list shows them.
func TestImportClaudeHooks(t *testing.T) {
	sb := newSandbox(t)
	settings := filepath.Join(sb.ws, "settings.json")
	if err := os.WriteFile(settings, []byte(`{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"./guard.sh","timeout":30}]}],"Notification":[{"hooks":[{"type":"command","command":"x"}]}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	res := sb.rein(t, "hooks", "import-claude", settings)
	if res.code != 0 || !strings.Contains(res.stderr, "not imported: Notification") {
		t.Fatalf("import: %s", res)
	}
	sb.writeUserConfig(t, res.stdout)
	l := sb.rein(t, "hooks", "list")
	if l.code != 0 || !strings.Contains(l.stdout, "pre_tool  bash") || !strings.Contains(l.stdout, "./guard.sh") || !strings.Contains(l.stdout, "30s") {
		t.Fatalf("hooks list after the import: %s", l)
	}
}
