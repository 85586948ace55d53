package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// These tests run the real binary with child agents (the agents tool) against the simulator. The
// simulator's steps are keyed by conversation — a request's first user message — so the parent's
// steps and each child's (started with inherit false, its prompt its first message) are played in
// order however the agents interleave.

const parentPrompt = "hand out the work"

func startChild(prompt string) map[string]any {
	return map[string]any{"name": "agents", "arguments": map[string]any{"op": "start", "prompt": prompt, "inherit": false}}
}

// family is every record rein left in the sandbox: the parent's and its children's, each admitted
// by `rein doctor` and replayed.
type familyRecords struct {
	parent   string
	children []string // record paths
	recs     map[string][]record.Record
	states   map[string]*fold.State
}

func readFamily(t *testing.T, sb *sandbox) familyRecords {
	t.Helper()
	fam := familyRecords{recs: map[string][]record.Record{}, states: map[string]*fold.State{}}
	for _, p := range sb.records(t) {
		if res := sb.rein(t, "doctor", p); res.code != 0 || !strings.HasPrefix(res.stdout, "admissible") || strings.Contains(res.stdout, "in flight") {
			t.Fatalf("doctor %s:\n%s", p, res)
		}
		st, _, err := session.Replay(nil, p)
		if err != nil {
			t.Fatalf("replay %s: %v", p, err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		recs, _, err := replay(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkCalls(recs, true); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		fam.recs[p], fam.states[p] = recs, st
		if st.Meta().Parent == "" {
			if fam.parent != "" {
				t.Fatalf("two records without a parent: %s and %s", fam.parent, p)
			}
			fam.parent = p
		} else {
			fam.children = append(fam.children, p)
		}
	}
	if fam.parent == "" {
		t.Fatal("no parent record")
	}
	for _, c := range fam.children {
		if got, want := fam.states[c].Meta().Parent, fam.states[fam.parent].Meta().Session; got != want {
			t.Errorf("%s names parent %q, want %q", c, got, want)
		}
	}
	return fam
}

// settledAs checks that a record owes nothing, is not in flight, and that its last exchange
// quiesced for reason.
func settledAs(t *testing.T, name string, recs []record.Record, st *fold.State, reason string) {
	t.Helper()
	if st.InFlight() || !st.IsReady() {
		t.Errorf("%s is unsettled: phase %s, in flight %v", name, st.Phase(), st.InFlight())
	}
	q, _ := lastQuiesced(recs)
	if q == nil || q.Reason != reason {
		t.Errorf("%s ended %+v, want quiesced{%s}", name, q, reason)
	}
}

// TestSIGINTStopsChildren: Ctrl-C while rein run waits for its children, or while the parent
// works beside them, stops the parent and every child: rein exits 130 and every record is
// settled, quiesced cancelled, none left in flight for a later "crashed".
func TestSIGINTStopsChildren(t *testing.T) {
	for _, tc := range []struct {
		name      string
		second    map[string]any // the parent's step after its children started
		stoppable func(c *child) bool
	}{
		{"waiting", map[string]any{"conversation": parentPrompt, "text": "Both started; waiting for them."}, func(c *child) bool {
			return awaitLine(c, func(m map[string]any) bool { return m["type"] == "status" && m["text"] == "waiting for 2 child agents" })
		}},
		{"working", map[string]any{"conversation": parentPrompt, "text": "Thinking about it at length.", "delay_ms": 30000}, func(c *child) bool {
			// The parent's second request is on the wire: its turn_started after the start results.
			results := false
			return awaitLine(c, func(m map[string]any) bool {
				results = results || m["kind"] == "tool_results"
				return results && m["kind"] == "turn_started"
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := newSandbox(t)
			script := writeScript(t, t.TempDir(),
				map[string]any{"conversation": parentPrompt, "text": "Two helpers.", "tool_calls": []any{startChild("task A"), startChild("task B")}},
				tc.second,
				map[string]any{"conversation": "task A", "text": "A takes its time.", "delay_ms": 30000},
				map[string]any{"conversation": "task B", "text": "B takes its time.", "delay_ms": 30000},
			)
			c := sb.startRun(t, append(append([]string{"run"}, simArgs(script)...), "--json", parentPrompt)...)
			if !tc.stoppable(c) {
				t.Fatalf("rein did not reach the moment to stop\n%s", c.stderr)
			}
			sent := time.Now()
			c.cmd.Process.Signal(os.Interrupt)
			c.wait(t, 10*time.Second)
			exited := time.Since(sent)
			if got := c.status.ExitStatus(); got != exitStopped {
				t.Fatalf("rein exited %d after SIGINT, want %d\n%s", got, exitStopped, c.stderr)
			}
			t.Logf("SIGINT %s: rein exited 130 %s after the signal", tc.name, exited.Round(100*time.Microsecond))

			fam := readFamily(t, sb)
			if len(fam.children) != 2 {
				t.Fatalf("want 2 child records, found %d", len(fam.children))
			}
			for _, p := range append([]string{fam.parent}, fam.children...) {
				settledAs(t, filepath.Base(filepath.Dir(p)), fam.recs[p], fam.states[p], fold.Cancelled)
			}
			// Nothing speaks for the stopped children in the parent's record.
			for _, r := range fam.recs[fam.parent] {
				if r.Kind() == record.KindImport || r.Kind() == record.KindSteering {
					t.Errorf("the parent's record holds a %s after the Stop: %+v", r.Kind(), r.Body)
				}
			}
			// A resume finds nothing to settle: no "crashed" for anyone.
			id := filepath.Base(filepath.Dir(fam.parent))
			if res := sb.rein(t, append([]string{"resume", id}, simArgs("")...)...); res.code != 0 {
				t.Fatalf("resume:\n%s", res)
			}
			for _, p := range sb.records(t) {
				b, _ := os.ReadFile(p)
				if strings.Contains(string(b), `"reason":"crashed"`) {
					t.Errorf("%s was settled as crashed", p)
				}
			}
		})
	}
}

// TestRunTakesUpChildReplies: rein run waits for the children the model starts; each reply lands
// in the parent's record as a harness-authored import (source child, naming the child), never a
// prompt or steering, and the model continues on it; every record ends settled, replied.
func TestRunTakesUpChildReplies(t *testing.T) {
	sb := newSandbox(t)
	script := writeScript(t, t.TempDir(),
		map[string]any{"conversation": parentPrompt, "text": "Two helpers.", "tool_calls": []any{startChild("task A"), startChild("task B")}},
		map[string]any{"conversation": parentPrompt, "text": "Both started."},
		map[string]any{"conversation": "task A", "text": "A is done."},
		map[string]any{"conversation": "task B", "text": "B is done.", "delay_ms": 300},
		map[string]any{"conversation": parentPrompt, "text": "Heard back."},
		map[string]any{"conversation": parentPrompt, "text": "Heard back again."},
	)
	res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "--json", parentPrompt)...)
	if res.code != 0 {
		t.Fatalf("rein run:\n%s", res)
	}
	fam := readFamily(t, sb)
	if len(fam.children) != 2 {
		t.Fatalf("want 2 child records, found %d", len(fam.children))
	}
	recs := fam.recs[fam.parent]
	settledAs(t, "the parent", recs, fam.states[fam.parent], fold.Replied)
	ids := map[string]string{} // child session id → its reply
	for _, c := range fam.children {
		settledAs(t, "a child", fam.recs[c], fam.states[c], fold.Replied)
		ids[fam.states[c].Meta().Session] = map[string]string{"task A": "A is done.", "task B": "B is done."}[firstPrompt(fam.recs[c])]
	}
	var kinds []string
	var imports []*record.Import
	for _, r := range recs {
		if r.Class() == record.Protocol && r.Kind() != record.KindSystem {
			kinds = append(kinds, string(r.Kind()))
		}
		switch b := r.Body.(type) {
		case *record.Import:
			imports = append(imports, b)
		case *record.Steering:
			t.Errorf("the parent's record holds steering %q", b.Text)
		}
	}
	if n := strings.Count(strings.Join(kinds, " "), "user_prompt"); n != 1 {
		t.Errorf("the parent's record holds %d prompts, want the person's one: %v", n, kinds)
	}
	if len(imports) != 2 {
		t.Fatalf("the parent's record holds %d imports, want 2: %v", len(imports), kinds)
	}
	for _, im := range imports {
		reply, ok := ids[im.Child]
		want := "[rein: child agent " + im.Child + " finished (replied). Its reply:]\n" + reply
		if !ok || im.Source != "child" || im.Message.Role != record.User || len(im.Message.Parts) != 1 || im.Message.Parts[0].Text != want {
			t.Errorf("import %+v, want source child naming a child, text %q", im, want)
		}
		delete(ids, im.Child)
	}
	// The model continued after the last reply arrived.
	if i := slices.Index(kinds, "import"); i < 0 || kinds[len(kinds)-1] != "assistant_message" || slices.Index(kinds[i:], "assistant_message") < 0 {
		t.Errorf("the parent's protocol records %v do not end with the model's reply after the imports", kinds)
	}
	if q := strings.Count(res.stdout, `"kind":"quiesced"`); q != 1 {
		t.Errorf("the parent's exchange quiesced %d times on stdout, want once: run awaits its children in one exchange", q)
	}
	if n := strings.Count(res.stdout, `"kind":"import"`); n != 2 {
		t.Errorf("stdout shows %d import records, want 2", n)
	}
}

// awaitLine reads the child's JSON lines until one satisfies pred (true), or for 30 seconds.
func awaitLine(c *child, pred func(map[string]any) bool) bool {
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-c.lines:
			if !ok {
				return false
			}
			if pred(m) {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

func firstPrompt(recs []record.Record) string {
	for _, r := range recs {
		if p, ok := r.Body.(*record.UserPrompt); ok {
			return p.Text
		}
	}
	return ""
}

// TestChildLimitFlags: --max-children bounds the children running at once (a start past it is a
// tool error the model reads), a negative value is a usage error, and 0 in the config file turns
// the agents tool off.
func TestChildLimitFlags(t *testing.T) {
	sb := newSandbox(t)
	script := writeScript(t, t.TempDir(),
		map[string]any{"conversation": parentPrompt, "text": "Two helpers.", "tool_calls": []any{startChild("task A"), startChild("task B")}},
		map[string]any{"conversation": parentPrompt, "text": "One started."},
		map[string]any{"conversation": "task A", "text": "A is done."},
		map[string]any{"conversation": parentPrompt, "text": "Done."},
	)
	res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "--max-children", "1", "--json", parentPrompt)...)
	if res.code != 0 {
		t.Fatalf("rein run --max-children 1:\n%s", res)
	}
	fam := readFamily(t, sb)
	if len(fam.children) != 1 {
		t.Fatalf("--max-children 1 made %d children", len(fam.children))
	}
	var outcomes []record.ToolResult
	for _, r := range fam.recs[fam.parent] {
		if b, ok := r.Body.(*record.ToolResults); ok {
			outcomes = append(outcomes, b.Results...)
		}
	}
	if len(outcomes) != 2 || outcomes[0].Outcome != record.OK || outcomes[1].Outcome != record.Failed ||
		!strings.Contains(outcomes[1].Content, "agents start refused: 1 child agent is running") {
		t.Errorf("the two starts were answered %+v", outcomes)
	}

	if r := sb.rein(t, append(append([]string{"run"}, simArgs("")...), "--max-children", "-1", "hi")...); r.code != exitUsage || !strings.Contains(r.stderr, "max-children") {
		t.Errorf("--max-children -1:\n%s", r)
	}

	cfg := filepath.Join(t.TempDir(), "cfg")
	if err := os.MkdirAll(filepath.Join(cfg, "rein"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "rein", "config.toml"), []byte("max_children = 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	off := newSandbox(t)
	off.env = append(off.env, "XDG_CONFIG_HOME="+cfg)
	script = writeScript(t, t.TempDir(),
		map[string]any{"conversation": parentPrompt, "text": "A helper.", "tool_calls": []any{startChild("task A")}},
		map[string]any{"conversation": parentPrompt, "text": "No helpers here."},
	)
	if r := off.rein(t, append(append([]string{"run"}, simArgs(script)...), "--json", parentPrompt)...); r.code != 0 ||
		!strings.Contains(r.stdout, `there is no tool named \"agents\"`) {
		t.Errorf("max_children = 0 in the config file should take the agents tool away:\n%s", r)
	}
	if n := len(off.records(t)); n != 1 {
		t.Errorf("with the agents tool off, %d records were made", n)
	}
}
