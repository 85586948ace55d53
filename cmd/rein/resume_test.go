package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
)

// A resume remembers every setting that shaped the session — the server it was reached at (a
// local OpenAI-compatible one here), the model, the window, the permission mode — and a flag that
// changes one is said and recorded. A session belongs to its workspace: resuming it from another
// directory is refused with the workspace's path, and --cwd moves it explicitly.
func TestResumeRemembers(t *testing.T) {
	srv := httptest.NewServer(sim.New(sim.Options{}).Handler())
	defer srv.Close()
	sb := newSandbox(t)
	res := sb.rein(t, "run", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "local-7b",
		"--context-window", "50000", "--permission-mode", "read-only", "hi")
	if res.code != 0 {
		t.Fatalf("%s", res)
	}
	path := sb.records(t)[0]
	id := filepath.Base(filepath.Dir(path))

	if r := sb.rein(t, "resume", id, "again"); r.code != 0 || strings.Contains(r.stderr, "changes") {
		t.Fatalf("the resume did not go back to the same server, quietly:\n%s", r)
	}
	if r := sb.rein(t, "resume", id, "--permission-mode", "workspace", "now write"); r.code != 0 || !strings.Contains(r.stderr, "permission mode changes from read-only to workspace (recorded)") {
		t.Fatalf("a changed setting was not said:\n%s", r)
	}
	other := t.TempDir()
	r := runBin(t, other, sb.env, "resume", id, "from elsewhere")
	if r.code != exitUsage || !strings.Contains(r.stderr, "belongs to the workspace "+sb.ws) {
		t.Fatalf("a resume from another directory was not refused with the workspace's path:\n%s", r)
	}
	if r := runBin(t, other, sb.env, "resume", id, "--cwd", other, "moved"); r.code != 0 || !strings.Contains(r.stderr, "workspace changes from "+sb.ws+" to "+other) {
		t.Fatalf("--cwd did not move the session, saying so:\n%s", r)
	}

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, _, err := replay(b)
	if err != nil {
		t.Fatal(err)
	}
	var resumed []*record.SessionResumed
	for _, rec := range recs {
		if sr, ok := rec.Body.(*record.SessionResumed); ok {
			resumed = append(resumed, sr)
		}
	}
	if len(resumed) != 3 {
		t.Fatalf("%d session_resumed records, want 3", len(resumed))
	}
	for i, sr := range resumed {
		if sr.BaseURL != srv.URL+"/v1" || sr.Model != "local-7b" || sr.ContextWindow != 50000 {
			t.Errorf("resume %d recorded %+v: the server, model or window was not kept", i, sr)
		}
	}
	if resumed[0].PermissionMode != "read-only" || resumed[1].PermissionMode != "workspace" || resumed[2].PermissionMode != "workspace" {
		t.Errorf("permission modes recorded: %s, %s, %s", resumed[0].PermissionMode, resumed[1].PermissionMode, resumed[2].PermissionMode)
	}
	if resumed[2].Cwd != other {
		t.Errorf("the move was not recorded: cwd %s", resumed[2].Cwd)
	}
}

// --allow where it could change nothing is refused with the reason, not accepted silently; with
// ask mode it is an allow-list in rein run.
func TestAllowWhereItWorks(t *testing.T) {
	sb := newSandbox(t)
	for _, mode := range []string{"full", "read-only"} {
		r := sb.rein(t, "run", "--provider", "sim", "--permission-mode", mode, "--allow", "bash(ls*)", "hi")
		if r.code != exitUsage || !strings.Contains(r.stderr, "--allow has no effect in permission mode "+mode) {
			t.Fatalf("%s: %s", mode, r)
		}
	}
	if n := len(sb.records(t)); n != 0 {
		t.Fatalf("a refused run left %d sessions", n)
	}
	script := writeScript(t, t.TempDir(),
		map[string]any{"tool_calls": []map[string]any{bash("ls"), bash("touch made-by-rm-rule")}},
		map[string]any{"text": "done"})
	r := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "--permission-mode", "ask", "--allow", "bash(ls*)", "list")...)
	if r.code != 0 {
		t.Fatalf("%s", r)
	}
	if _, err := os.Stat(filepath.Join(sb.ws, "made-by-rm-rule")); err == nil {
		t.Fatal("a call the allow-list does not cover ran")
	}
	if !strings.Contains(r.stdout, "denied") {
		t.Fatalf("the uncovered call was not refused:\n%s", r)
	}
}
