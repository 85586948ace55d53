package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
	fstool "github.com/reinhq/rein/internal/tool/fs"
	"github.com/reinhq/rein/internal/tool/shell"
	"github.com/reinhq/rein/internal/tool/toolset"
)

// toolSetSetup offers the tools of set, as cmd/rein builds them, to a model named model. The
// workspace is made first, with notes.txt, so that the tools can be opened on it.
func toolSetHarness(t *testing.T, f format, set toolset.Set, model, script string, policy tool.Policy) *harness {
	t.Helper()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("say hi\nto everyone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh, err := shell.New(ws, shell.Options{Grace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	files, err := fstool.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	h := newHarness(t, f, setup{script: script, noBash: true, tools: set.Tools(sh, files), cfg: func(c *agent.Config) {
		c.Model, c.Tools = model, string(set)
		c.Runner.Policy = policy
	}})
	// The harness made a workspace of its own; the tools work in ws.
	h.ws = ws
	return h
}

// sentBodies are the request bodies the simulator received.
func sentBodies(h *harness) [][]byte {
	var out [][]byte
	for _, r := range h.sim.Requests() {
		out = append(out, r.Body)
	}
	return out
}

func fileIs(t *testing.T, dir, name, want string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || string(b) != want {
		t.Fatalf("%s = %q (%v), want %q", name, b, err, want)
	}
}

// A Claude model edits through Anthropic's text editor tool type and runs commands through its
// bash tool type, against the simulator on the Anthropic wire; a Stop while its bash command
// runs ends the batch, the editor call after it not run and the file unchanged; a rule for
// edit_file holds for the editor.
func TestClaudeEditsThroughTextEditor(t *testing.T) {
	f := formats[0] // anthropic
	editor := `{"name":"str_replace_based_edit_tool","arguments":%s}`
	script := steps(
		fmt.Sprintf(`{"text":"Looking.","tool_calls":[`+editor+`]}`, `{"command":"view","path":"notes.txt"}`),
		fmt.Sprintf(`{"tool_calls":[`+editor+`,`+editor+`,{"name":"bash","arguments":{"command":"cat notes.txt"}}]}`,
			`{"command":"str_replace","path":"notes.txt","old_str":"say hi","new_str":"say hello"}`,
			`{"command":"insert","path":"notes.txt","insert_line":2,"insert_text":"and goodbye\n"}`),
		textStep("Edited."),
		// The second exchange: a command that runs until stopped, then an edit that must not run.
		fmt.Sprintf(`{"tool_calls":[{"name":"bash","arguments":{"command":"sleep 30 & echo $$ > ready; wait"}},`+editor+`]}`,
			`{"command":"str_replace","path":"notes.txt","old_str":"hello","new_str":"STOPPED"}`),
		textStep("Back."),
		// The third: an edit a deny rule refuses.
		fmt.Sprintf(`{"tool_calls":[`+editor+`]}`, `{"command":"create","path":"secrets/key","file_text":"x"}`),
		textStep("Refused."),
	)
	h := toolSetHarness(t, f, toolset.Claude, "claude-sonnet-4-5", script,
		tool.Policy{Deny: []tool.Rule{{Tool: "write_file", Pattern: "secrets/*"}}})
	ctx := context.Background()

	expect(t, h.run(ctx, "say hello instead"), "replied", false)
	fileIs(t, h.ws, "notes.txt", "say hello\nto everyone\nand goodbye\n")
	rs := h.records()
	if res := results(t, rs); len(res) != 3 || res[0].Outcome != record.OK || !strings.Contains(res[2].Content, "and goodbye") {
		t.Fatalf("results %+v", res)
	}
	body := sentBodies(h)[0]
	if !bytes.Contains(body, []byte(`{"type":"bash_20250124","name":"bash"},{"type":"text_editor_20250728","name":"str_replace_based_edit_tool"}`)) {
		t.Errorf("the request does not offer the tool types:\n%s", body)
	}

	// Stop while the bash tool type's command runs.
	stopCtx, stop := h.stopper()
	pgid := fifo(t, filepath.Join(h.ws, "ready"), stop)
	expect(t, h.run(stopCtx, "once more"), "cancelled", false)
	groupGone(t, <-pgid)
	res := results(t, h.records())
	if res[0].Outcome != record.Interrupted || res[1].Outcome != record.NotExecuted {
		t.Errorf("stopped batch answered %+v", res)
	}
	fileIs(t, h.ws, "notes.txt", "say hello\nto everyone\nand goodbye\n")
	expect(t, h.run(ctx, "are you there?"), "replied", false)

	expect(t, h.run(ctx, "write the key"), "replied", false)
	if res := results(t, h.records()); res[0].Outcome != record.Denied || !strings.Contains(res[0].Content, "write_file(secrets/*)") {
		t.Errorf("create under deny write_file(secrets/*): %+v", res)
	}
}

// An OpenAI model edits through apply_patch, a custom tool on the Responses wire, against the
// simulator: the patch's free-form text is kept in the record exactly; a Stop while a command of
// the batch runs leaves the patch after it not run and the files unchanged; a Stop while the
// patch streams commits no call.
func TestOpenAIEditsThroughApplyPatch(t *testing.T) {
	f := formats[2] // responses
	patch := "*** Begin Patch\n*** Update File: notes.txt\n@@\n-say hi\n+say hello\n to everyone\n*** Add File: docs/new.md\n+# New\n*** End Patch\n"
	stopped := "*** Begin Patch\n*** Delete File: notes.txt\n*** End Patch\n"
	in := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	script := steps(
		`{"text":"Patching.","tool_calls":[{"name":"apply_patch","input":`+in(patch)+`}]}`,
		textStep("Patched."),
		`{"tool_calls":[{"name":"bash","arguments":{"command":"sleep 30 & echo $$ > ready; wait"}},{"name":"apply_patch","input":`+in(stopped)+`}]}`,
		textStep("Back."),
		`{"text":"Deleting.","tool_calls":[{"name":"apply_patch","input":`+in(stopped)+`}],"delay_ms":40}`,
		textStep("Back again."),
	)
	h := toolSetHarness(t, f, toolset.Codex, "gpt-5", script, tool.Policy{})
	ctx := context.Background()

	expect(t, h.run(ctx, "say hello"), "replied", false)
	fileIs(t, h.ws, "notes.txt", "say hello\nto everyone\n")
	fileIs(t, h.ws, "docs/new.md", "# New\n")
	rs := h.records()
	msg := all[*record.AssistantMessage](rs)[0]
	c := calls(msg.Parts)
	if len(c) != 1 || string(c[0].Args) != `{"input":`+in(patch)+`}` {
		t.Fatalf("the recorded call %+v", c)
	}
	if res := results(t, rs); res[0].Outcome != record.OK || !strings.HasPrefix(res[0].Content, "Applied the patch:\nM notes.txt\nA docs/new.md\n") {
		t.Fatalf("results %+v", res)
	}
	bodies := sentBodies(h)
	if !bytes.Contains(bodies[0], []byte(`{"type":"custom","name":"apply_patch"`)) || !bytes.Contains(bodies[1], []byte(`"type":"custom_tool_call","call_id"`)) ||
		!bytes.Contains(bodies[1], []byte(`"type":"custom_tool_call_output"`)) {
		t.Errorf("the requests do not carry the custom tool and its call:\n%s\n%s", bodies[0], bodies[1])
	}

	stopCtx, stop := h.stopper()
	pgid := fifo(t, filepath.Join(h.ws, "ready"), stop)
	expect(t, h.run(stopCtx, "delete it"), "cancelled", false)
	groupGone(t, <-pgid)
	if res := results(t, h.records()); res[0].Outcome != record.Interrupted || res[1].Outcome != record.NotExecuted {
		t.Errorf("stopped batch answered %+v", res)
	}
	fileIs(t, h.ws, "notes.txt", "say hello\nto everyone\n")
	expect(t, h.run(ctx, "still there?"), "replied", false)

	// A Stop while the patch's text streams: the call is cut off, never committed, never run.
	streamCtx := h.stopOn(func(u session.Update) bool { return u.Live != nil && u.Live.Kind == "tool_args" })
	expect(t, h.run(streamCtx, "delete it now"), "cancelled", false)
	if m := last[*record.AssistantMessage](t, h.records()); len(calls(m.Parts)) != 0 {
		t.Errorf("a cut-off patch was committed: %+v", m.Parts)
	}
	fileIs(t, h.ws, "notes.txt", "say hello\nto everyone\n")
	expect(t, h.run(ctx, "and now?"), "replied", false)
}

// A session made by a Claude model with its tool set, forked and continued by an OpenAI model
// on the Responses wire with apply_patch: every request of both passes the simulator's
// validators, and the fork records the tool set it chose.
func TestForkAcrossToolSets(t *testing.T) {
	editor := `{"name":"str_replace_based_edit_tool","arguments":{"command":"str_replace","path":"notes.txt","old_str":"hi","new_str":"hey"}}`
	h := toolSetHarness(t, formats[0], toolset.Claude, "claude-opus-4-1", steps(
		`{"tool_calls":[`+editor+`,{"name":"bash","arguments":{"restart":true}}]}`, textStep("Done.")), tool.Policy{})
	expect(t, h.run(context.Background(), "hey"), "replied", false)
	fileIs(t, h.ws, "notes.txt", "say hey\nto everyone\n")

	child, err := session.Fork(h.sess, 0, session.Options{}, record.SessionStarted{
		Provider: "responses", Model: "gpt-5", ContextWindow: 200_000, Cwd: h.ws, Version: "test", Tools: string(toolset.Codex),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer child.Close()
	patch := "*** Begin Patch\n*** Update File: notes.txt\n@@\n-say hey\n+say hey there\n*** End Patch\n"
	in, _ := json.Marshal(patch)
	sc, err := sim.ParseScript([]byte(`{"strict":true,"steps":` + steps(`{"tool_calls":[{"name":"apply_patch","input":`+string(in)+`}]}`, textStep("Forked.")) + `}`))
	if err != nil {
		t.Fatal(err)
	}
	h2 := newHarness(t, formats[2], setup{noBash: true, sim: func(o *sim.Options) { o.Script = sc }})
	sh, _ := shell.New(h.ws, shell.Options{})
	files, _ := fstool.Open(h.ws)
	defer files.Close()
	reg, err := tool.NewRegistry(toolset.Codex.Tools(sh, files)...)
	if err != nil {
		t.Fatal(err)
	}
	cfg := h2.cfg
	cfg.Session, cfg.Model, cfg.Tools, cfg.Runner = child, "gpt-5", string(toolset.Codex), &tool.Runner{Tools: reg}
	a := agent.New(cfg)
	if out := a.TakeUp(context.Background(), agent.Prompt{Text: "and there"}); out.Reason != "replied" {
		t.Fatalf("the fork's exchange: %+v", out)
	}
	fileIs(t, h.ws, "notes.txt", "say hey there\nto everyone\n")
	for i, r := range h2.sim.Requests() {
		if r.Violation != nil {
			t.Errorf("the fork's request %d: %v", i, r.Violation)
		}
	}
	if got := child.Snapshot().Meta().Tools; got != string(toolset.Codex) {
		t.Errorf("the fork records tool set %q", got)
	}
	// The inherited editor and bash calls went on the Responses wire as function calls, the new
	// patch as a custom tool call.
	body := h2.sim.Requests()[1].Body
	if !bytes.Contains(body, []byte(`"type":"function_call","call_id"`)) || !bytes.Contains(body, []byte(`"name":"str_replace_based_edit_tool"`)) ||
		!bytes.Contains(body, []byte(`"type":"custom_tool_call"`)) {
		t.Errorf("the fork's second request:\n%s", body)
	}
}
