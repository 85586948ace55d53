package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestImportClaudeAndCodex: a Claude Code session and a Codex rollout, found where those products
// keep them for this workspace, are listed, imported, admissible, and continued on the simulator.
func TestImportClaudeAndCodex(t *testing.T) {
	sb := newSandbox(t)
	home := filepath.Dir(sb.home)
	// Claude Code keeps a workspace's sessions under its path with every other byte made '-'.
	claudeDir := filepath.Join(home, ".claude", "projects", strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, sb.ws))
	copyFixture(t, "../../internal/importer/testdata/claude/killed.jsonl", filepath.Join(claudeDir, "0a1b2c3d-1111-2222-3333-444455556666.jsonl"), "")
	// A Codex rollout names its workspace in session_meta.
	copyFixture(t, "../../internal/importer/testdata/codex/nonobject.jsonl", filepath.Join(home, ".codex", "sessions", "2026", "12", "01", "rollout-2026-12-01T10-00-00-cafe.jsonl"), sb.ws)

	r := sb.rein(t, "import", "claude")
	if r.code != 0 || !strings.Contains(r.stdout, "0a1b2c3d-1111-2222-3333-444455556666") || !strings.Contains(r.stdout, "wait a minute") {
		t.Fatalf("list: %s", r)
	}
	r = sb.rein(t, "import", "claude", "0a1b2c3d-1111-2222-3333-444455556666", "--provider", "sim")
	if r.code != 0 || !strings.Contains(r.stdout, "call with no result answered interrupted") {
		t.Fatalf("import: %s", r)
	}
	id := regexp.MustCompile(`imported as session (\S+):`).FindStringSubmatch(r.stdout)
	if id == nil {
		t.Fatalf("no session id in %s", r)
	}
	if d := sb.rein(t, "doctor", id[1]); d.code != 0 {
		t.Fatalf("doctor: %s", d)
	}
	if res := sb.rein(t, "resume", id[1], "--provider", "sim", "go on"); res.code != 0 || strings.Contains(res.stderr, "refused") {
		t.Fatalf("resume: %s", res)
	}
	if show := sb.rein(t, "show", id[1]); !strings.Contains(show.stdout, "imported from Claude Code") {
		t.Errorf("the system prompt does not say where the session came from:\n%s", show.stdout)
	}

	r = sb.rein(t, "import", "codex")
	if r.code != 0 || !strings.Contains(r.stdout, "list the files") {
		t.Fatalf("codex list: %s", r)
	}
	rollout := filepath.Join(home, ".codex", "sessions", "2026", "12", "01", "rollout-2026-12-01T10-00-00-cafe.jsonl")
	r = sb.rein(t, "import", "codex", rollout, "--provider", "sim")
	if r.code != 0 || !strings.Contains(r.stdout, "non-object tool input replaced by {}") {
		t.Fatalf("codex import: %s", r)
	}
	id = regexp.MustCompile(`imported as session (\S+):`).FindStringSubmatch(r.stdout)
	if res := sb.rein(t, "resume", id[1], "--provider", "sim", "go on"); res.code != 0 {
		t.Fatalf("codex resume: %s", res)
	}

	if r := sb.rein(t, "import", "claude", "no-such-session"); r.code != exitUsage || !strings.Contains(r.stderr, "no claude session") {
		t.Fatalf("a missing session: %s", r)
	}
	bad := filepath.Join(sb.ws, "junk.jsonl")
	os.WriteFile(bad, []byte("not json\n{\"type\":\"queue-operation\"}\n"), 0o644)
	if r := sb.rein(t, "import", "claude", bad); r.code != exitFailed || !strings.Contains(r.stderr, "no conversation") {
		t.Fatalf("a file with no conversation: %s", r)
	}
}

// copyFixture copies a fixture to dst, making its Codex session_meta name workspace ws when given.
func copyFixture(t *testing.T, src, dst, ws string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if ws != "" {
		data = []byte(strings.ReplaceAll(string(data), `"cwd":"/fixture/ws"`, `"cwd":"`+ws+`"`))
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
