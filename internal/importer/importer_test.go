package importer

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/openai"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// The fixtures are real session files of the current Claude Code and Codex releases, run against
// rein's simulator by scripts/import-fixtures.sh, which regenerates them.

type wireFormat struct {
	name  string
	model func(base string) provider.Model
}

var wires = []wireFormat{
	{"anthropic", func(base string) provider.Model { return anthropic.New(anthropic.Config{BaseURL: base, APIKey: "k"}) }},
	{"chat", func(base string) provider.Model {
		return openai.NewChat(openai.Config{BaseURL: base + "/v1", APIKey: "k"})
	}},
	{"responses", func(base string) provider.Model {
		return openai.NewResponses(openai.Config{BaseURL: base + "/v1", APIKey: "k"})
	}},
}

func fixtures(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*", "*.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures under testdata (%v): regenerate them with scripts/import-fixtures.sh", err)
	}
	return paths
}

func read(t *testing.T, path string, opts Options) *Conversation {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c *Conversation
	if strings.Contains(path, string(filepath.Separator)+"claude"+string(filepath.Separator)) {
		c, err = ReadClaude(bytes.NewReader(data), opts)
	} else {
		c, err = ReadCodex(bytes.NewReader(data), opts)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c.Origin.Path = path
	return c
}

// importTo writes c as a new session under dir.
func importTo(t *testing.T, c *Conversation, dir string) (*session.Session, Report) {
	t.Helper()
	origin := c.Origin
	sess, err := session.Start(dir, session.Options{}, record.SessionStarted{Provider: "sim", Model: sim.DefaultModel, ContextWindow: 200_000, Cwd: c.Cwd, Version: "test", Source: &origin})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Write(sess, c, "You are under test. This session was imported.")
	if err != nil {
		sess.Close()
		t.Fatalf("write: %v", err)
	}
	return sess, rep
}

// TestImportFixtures: each fixture imports, replays admissibly and ready, renders a request every
// validator passes, and takes one resumed turn on each wire against the simulator with no refusal.
func TestImportFixtures(t *testing.T) {
	for _, path := range fixtures(t) {
		for _, hist := range []bool{false, true} {
			name := strings.TrimSuffix(strings.TrimPrefix(path, "testdata"+string(filepath.Separator)), ".jsonl")
			if hist {
				name += "+history"
			}
			t.Run(name, func(t *testing.T) {
				c := read(t, path, Options{WithHistory: hist})
				dir := t.TempDir()
				sess, rep := importTo(t, c, dir)
				t.Logf("%s", rep)
				recPath := sess.Path()
				sess.Close()

				// Replayed from disk: admissible, ready for a prompt, naming its source.
				re, _, err := session.Open(recPath, session.Options{})
				if err != nil {
					t.Fatalf("the imported record does not reopen: %v", err)
				}
				st := re.Snapshot()
				if !st.IsReady() || st.InFlight() {
					t.Fatalf("imported session not ready: phase %v", st.Phase())
				}
				if st.NumTurns() == 0 {
					t.Fatal("nothing imported")
				}
				re.Close()
				checkNoPersonVoice(t, recPath)

				for _, w := range wires {
					t.Run(w.name, func(t *testing.T) {
						resumeOnce(t, recPath, w)
					})
				}
			})
		}
	}
}

// checkNoPersonVoice: every user prompt of an imported session is something the source's person
// typed — never a harness note, an interruption marker or a summary.
func checkNoPersonVoice(t *testing.T, path string) {
	t.Helper()
	s, _, err := session.Open(path, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	recs, err := s.RecordsAfter(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if p, ok := r.Body.(*record.UserPrompt); ok {
			for _, bad := range []string{"[Request interrupted", "summary preamble", "compaction preamble", "[rein import", "<environment_context>"} {
				if strings.Contains(p.Text, bad) {
					t.Errorf("a harness-authored line was recorded in the person's voice: %q", p.Text)
				}
			}
		}
	}
}

// resumeOnce copies the imported record, reopens it and takes one turn on wire w against the
// simulator: every request must pass the simulator's validator.
func resumeOnce(t *testing.T, path string, w wireFormat) {
	dir := t.TempDir()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(dir, "s", "record.jsonl")
	os.MkdirAll(filepath.Dir(copyPath), 0o755)
	if err := os.WriteFile(copyPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sess, _, err := session.Open(copyPath, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	srv := sim.New(sim.Options{})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	reg, _ := tool.NewRegistry()
	a := agent.New(agent.Config{Session: sess, Client: w.model(ts.URL), Provider: w.name, Model: sim.DefaultModel, MaxTokens: 1024,
		System: "You are under test.", Runner: &tool.Runner{Tools: reg, Policy: tool.Policy{Mode: tool.ModeReadOnly}}})
	if err := a.Settle(t.TempDir(), "test"); err != nil {
		t.Fatal(err)
	}
	out := a.TakeUp(context.Background(), agent.Prompt{Text: "go on"})
	for _, r := range srv.Requests() {
		if r.Violation != nil {
			t.Fatalf("the simulator refused a request of the resumed import: %v", r.Violation)
		}
	}
	if out.Reason != fold.Replied || out.Err != nil {
		t.Fatalf("the resumed turn ended %s: %v", out.Reason, out.Err)
	}
}

// TestInterruptionsKept: the markers the sources wrote when a person stopped a call are kept as
// the text the model saw, as harness notes.
func TestInterruptionsKept(t *testing.T) {
	for path, want := range map[string]string{
		"testdata/claude/stopped.jsonl": "[Request interrupted by user for tool use]",
		"testdata/codex/stopped.jsonl":  "<turn_aborted>",
	} {
		c := read(t, path, Options{})
		found := false
		for _, it := range c.Items {
			found = found || it.Kind == Note && strings.Contains(it.Text, want)
		}
		if !found {
			t.Errorf("%s: no note holding %q", path, want)
		}
	}
}

// TestRepairs: each breakage the fixtures hold is repaired, and the repair recorded.
func TestRepairs(t *testing.T) {
	for _, c := range []struct {
		path string
		want []string // repair kinds in the report
	}{
		{"testdata/claude/nonobject.jsonl", []string{"non-object tool input replaced by {}"}},
		{"testdata/claude/killed.jsonl", []string{"call with no result answered interrupted"}},
		{"testdata/codex/killed.jsonl", []string{"call with no result answered interrupted"}},
		{"testdata/codex/nonobject.jsonl", []string{"non-object tool input replaced by {}"}},
		{"testdata/codex/compacted.jsonl", []string{"compaction followed (its replacement history is the context)"}},
		{"testdata/claude/apierror.jsonl", []string{"synthetic assistant line carrying an error dropped"}},
	} {
		t.Run(c.path, func(t *testing.T) {
			conv := read(t, c.path, Options{})
			sess, rep := importTo(t, conv, t.TempDir())
			defer sess.Close()
			for _, w := range c.want {
				if rep.Notes.Repairs[w] == 0 {
					t.Errorf("no %q repair; report:\n%s", w, rep)
				}
			}
			if strings.Contains(c.path, "nonobject") {
				n := 0
				recs, err := sess.RecordsAfter(0)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs {
					if rp, ok := r.Body.(*record.Repaired); ok && strings.Contains(string(rp.Original), "ls -la") {
						n++
					}
				}
				if n == 0 {
					t.Error("no repaired event keeps the original input")
				}
			}
		})
	}
}
