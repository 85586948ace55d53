package fstool

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

func readWS(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The text editor's commands do the file tools' work, confined and answered as they are.
func TestEditor(t *testing.T) {
	w, dir := setup(t, map[string]string{
		"src/a.go":     "package a\n\nfunc A() int { return 1 }\n",
		"src/b/c.txt":  "c\n",
		"src/.hidden":  "h\n",
		"notes.txt":    "one\ntwo\nthree\n",
		"out":          "->../outside",
		"src/b/d/e/f":  "deep\n",
		"nonl.txt":     "x\ny",
		"emptyfile.md": "",
	})
	ed := w.Editor("text_editor_20250728", "str_replace_based_edit_tool")
	tests := []struct {
		name    string
		args    map[string]any
		outcome record.Outcome
		want    string // in the content
		file    string // then this file
		text    string // holds this
	}{
		{name: "view a file", args: map[string]any{"command": "view", "path": "notes.txt"}, outcome: record.OK, want: "     2\ttwo\n"},
		{name: "view absolute", args: map[string]any{"command": "view", "path": filepath.Join(dir, "notes.txt")}, outcome: record.OK, want: "     1\tone"},
		{name: "view a range", args: map[string]any{"command": "view", "path": "notes.txt", "view_range": []int{2, 2}}, outcome: record.OK, want: "     2\ttwo\n[the file continues past line 2; view on with view_range [3, -1]]"},
		{name: "view to the end", args: map[string]any{"command": "view", "path": "notes.txt", "view_range": []int{2, -1}}, outcome: record.OK, want: "     3\tthree"},
		{name: "view a bad range", args: map[string]any{"command": "view", "path": "notes.txt", "view_range": []int{3, 1}}, outcome: record.Failed, want: "the end is before the start"},
		{name: "view a directory", args: map[string]any{"command": "view", "path": "src"}, outcome: record.OK, want: "src/a.go\nsrc/b/\nsrc/b/c.txt\nsrc/b/d/"},
		{name: "view outside", args: map[string]any{"command": "view", "path": "../outside/secret"}, outcome: record.Denied, want: "outside the workspace"},
		{name: "view through a link out", args: map[string]any{"command": "view", "path": "out/secret"}, outcome: record.Denied, want: "outside the workspace"},
		{name: "create", args: map[string]any{"command": "create", "path": "new/dir/n.txt", "file_text": "hello\n"}, outcome: record.OK, want: "created", file: "new/dir/n.txt", text: "hello\n"},
		{name: "create outside", args: map[string]any{"command": "create", "path": "../x", "file_text": "x"}, outcome: record.Denied, want: "outside the workspace"},
		{name: "create without text", args: map[string]any{"command": "create", "path": "y"}, outcome: record.Failed, want: "create needs file_text"},
		{name: "str_replace", args: map[string]any{"command": "str_replace", "path": "src/a.go", "old_str": "return 1", "new_str": "return 2"}, outcome: record.OK, want: "replaced 1 occurrence", file: "src/a.go", text: "package a\n\nfunc A() int { return 2 }\n"},
		{name: "str_replace not found", args: map[string]any{"command": "str_replace", "path": "notes.txt", "old_str": "four", "new_str": "4"}, outcome: record.Failed, want: "old_str was not found in notes.txt. It must match the file exactly, whitespace and indentation included; view shows the current text"},
		{name: "str_replace deletes with no new_str", args: map[string]any{"command": "str_replace", "path": "notes.txt", "old_str": "two\n"}, outcome: record.OK, file: "notes.txt", text: "one\nthree\n"},
		{name: "insert at the top", args: map[string]any{"command": "insert", "path": "src/b/c.txt", "insert_line": 0, "insert_text": "top"}, outcome: record.OK, want: "after line 0", file: "src/b/c.txt", text: "top\nc\n"},
		{name: "insert after the last line", args: map[string]any{"command": "insert", "path": "nonl.txt", "insert_line": 2, "insert_text": "z\n"}, outcome: record.OK, file: "nonl.txt", text: "x\ny\nz\n"},
		{name: "insert with new_str", args: map[string]any{"command": "insert", "path": "emptyfile.md", "insert_line": 0, "new_str": "# T\n"}, outcome: record.OK, file: "emptyfile.md", text: "# T\n"},
		{name: "insert past the end", args: map[string]any{"command": "insert", "path": "src/b/d/e/f", "insert_line": 5, "insert_text": "q"}, outcome: record.Failed, want: "past the end of src/b/d/e/f, which has 1 lines"},
		{name: "undo_edit", args: map[string]any{"command": "undo_edit", "path": "notes.txt"}, outcome: record.Failed, want: "undo_edit is not available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, ed, tt.args)
			if res.Outcome != tt.outcome || !strings.Contains(res.Content, tt.want) {
				t.Fatalf("got %s %q, want %s containing %q", res.Outcome, res.Content, tt.outcome, tt.want)
			}
			if tt.file != "" {
				if got := readWS(t, dir, tt.file); got != tt.text {
					t.Fatalf("%s = %q, want %q", tt.file, got, tt.text)
				}
			}
		})
	}
	amb := call(t, ed, map[string]any{"command": "str_replace", "path": "notes.txt", "old_str": "e", "new_str": "E"})
	if amb.Outcome != record.Failed || !strings.HasPrefix(amb.Content, "old_str matches 3 places in notes.txt") || strings.Contains(amb.Content, "replace_all") {
		t.Errorf("an ambiguous str_replace: %q", amb.Content)
	}
	if strings.Contains(call(t, ed, map[string]any{"command": "view", "path": "src"}).Content, ".hidden") {
		t.Error("a hidden file was listed")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "x")); err == nil {
		t.Error("create wrote outside the workspace")
	}
}

// The editor's calls are judged as the file tools whose work they do: a rule for edit_file holds
// for str_replace, read-only mode lets view run and refuses create.
func TestEditorJudgedAsFileTools(t *testing.T) {
	w, _ := setup(t, map[string]string{"secrets/k": "k\n", "a": "a\n"})
	ed := w.Editor("text_editor_20250728", "str_replace_based_edit_tool")
	reg, err := tool.NewRegistry(ed)
	if err != nil {
		t.Fatal(err)
	}
	run := func(pol tool.Policy, args string) tool.Result {
		r := &tool.Runner{Tools: reg, Policy: pol}
		return r.Run(context.Background(), tool.Call{ID: "c", Name: "str_replace_based_edit_tool", Args: []byte(args)})
	}
	deny := tool.Policy{Deny: []tool.Rule{{Tool: "edit_file", Pattern: "secrets/*"}}}
	if res := run(deny, `{"command":"str_replace","path":"secrets/k","old_str":"k","new_str":"K"}`); res.Outcome != record.Denied || !strings.Contains(res.Content, "edit_file(secrets/*)") {
		t.Errorf("str_replace under deny edit_file(secrets/*): %s %q", res.Outcome, res.Content)
	}
	if res := run(deny, `{"command":"str_replace","path":"a","old_str":"a","new_str":"b"}`); res.Outcome != record.OK {
		t.Errorf("str_replace elsewhere: %s %q", res.Outcome, res.Content)
	}
	ro := tool.Policy{Mode: tool.ModeReadOnly}
	if res := run(ro, `{"command":"view","path":"a"}`); res.Outcome != record.OK {
		t.Errorf("view in read-only mode: %s %q", res.Outcome, res.Content)
	}
	if res := run(ro, `{"command":"create","path":"z","file_text":"z"}`); res.Outcome != record.Denied {
		t.Errorf("create in read-only mode: %s %q", res.Outcome, res.Content)
	}
	denyRead := tool.Policy{Deny: []tool.Rule{{Tool: "read_file", Pattern: "secrets/*"}}}
	if res := run(denyRead, `{"command":"view","path":"secrets/k"}`); res.Outcome != record.Denied {
		t.Errorf("view under deny read_file(secrets/*): %s %q", res.Outcome, res.Content)
	}
	if spec := ed.Spec(); spec.Type != "text_editor_20250728" || spec.Name != "str_replace_based_edit_tool" {
		t.Errorf("spec %+v", spec)
	}
}

func patchCall(t *testing.T, tl tool.Tool, ctx context.Context, text string) tool.Result {
	t.Helper()
	return tl.Run(ctx, tool.Call{ID: "c", Name: "apply_patch", Args: provider.FreeformArgs(text)})
}

// apply_patch against real files: all or nothing, confined, every refusal naming what failed.
func TestApplyPatchTool(t *testing.T) {
	w, dir := setup(t, map[string]string{
		"a.txt": "alpha\nbeta\ngamma\n",
		"b.txt": "keep\n",
		"out":   "->../outside",
		"bin":   "\x00\x01\x02",
	})
	ap := w.ApplyPatch(true)
	ctx := context.Background()

	res := patchCall(t, ap, ctx, "*** Begin Patch\n*** Update File: a.txt\n@@\n alpha\n-beta\n+BETA\n*** Add File: docs/n.md\n+# N\n*** Delete File: b.txt\n*** End Patch")
	if res.Outcome != record.OK || res.Content != "Applied the patch:\nM a.txt\nA docs/n.md\nD b.txt" {
		t.Fatalf("%s %q", res.Outcome, res.Content)
	}
	if readWS(t, dir, "a.txt") != "alpha\nBETA\ngamma\n" || readWS(t, dir, "docs/n.md") != "# N\n" {
		t.Fatal("the files are not as patched")
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); !os.IsNotExist(err) {
		t.Fatal("b.txt was not deleted")
	}

	// A hunk that does not apply: nothing changes, even the add before it.
	res = patchCall(t, ap, ctx, "*** Begin Patch\n*** Add File: c.txt\n+c\n*** Update File: a.txt\n@@\n-delta\n+DELTA\n*** End Patch")
	want := "apply_patch: hunk 1 of Update File a.txt (patch line 5): the lines to change were not found (the ' ' and '-' lines must match the file, in order):\n  delta; no file was changed"
	if res.Outcome != record.Failed || res.Content != want {
		t.Fatalf("got %s %q\nwant %q", res.Outcome, res.Content, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.txt")); !os.IsNotExist(err) {
		t.Fatal("a failed patch left c.txt")
	}

	for _, tc := range []struct{ name, patch, want string }{
		{"dotdot", "*** Begin Patch\n*** Add File: ../evil\n+x\n*** End Patch", "outside the workspace"},
		{"absolute", "*** Begin Patch\n*** Add File: /tmp/evil\n+x\n*** End Patch", "outside the workspace"},
		{"through a link", "*** Begin Patch\n*** Add File: out/evil\n+x\n*** End Patch", "symbolic link"},
		{"update through a link", "*** Begin Patch\n*** Update File: out/secret\n@@\n-top secret\n+x\n*** End Patch", "symbolic link"},
		{"move out", "*** Begin Patch\n*** Update File: a.txt\n*** Move to: ../moved\n@@\n-alpha\n+a\n*** End Patch", "outside the workspace"},
	} {
		res := patchCall(t, ap, ctx, tc.patch)
		if res.Outcome != record.Denied || !strings.Contains(res.Content, tc.want) || !strings.Contains(res.Content, "no file was changed") {
			t.Errorf("%s: %s %q", tc.name, res.Outcome, res.Content)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(filepath.Dir(dir), "outside", "secret")); string(b) != "top secret\n" {
		t.Error("a patch changed a file outside the workspace")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "evil")); err == nil {
		t.Error("a patch wrote outside the workspace")
	}
	if res := patchCall(t, ap, ctx, "*** Begin Patch\n*** Update File: bin\n@@\n-x\n+y\n*** End Patch"); res.Outcome != record.Failed || !strings.Contains(res.Content, "binary") {
		t.Errorf("binary: %s %q", res.Outcome, res.Content)
	}
	if res := patchCall(t, ap, ctx, "not a patch"); res.Outcome != record.Failed || !strings.Contains(res.Content, "first line of the patch must be '*** Begin Patch'") {
		t.Errorf("not a patch: %s %q", res.Outcome, res.Content)
	}

	// A Stop before the call writes leaves everything as it was.
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	res = patchCall(t, ap, stopped, "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** End Patch")
	if res.Outcome != record.Interrupted || readWS(t, dir, "a.txt") != "alpha\nBETA\ngamma\n" {
		t.Errorf("stopped: %s %q", res.Outcome, res.Content)
	}
}

// apply_patch is judged as write_file and edit_file on every path it names.
func TestApplyPatchAccess(t *testing.T) {
	w, _ := setup(t, map[string]string{"a": "a\n"})
	ap := w.ApplyPatch(false)
	a := ap.(tool.Accessor).Access(provider.FreeformArgs("*** Begin Patch\n*** Update File: ./src/x.go\n@@\n-a\n+b\n*** Add File: docs/y.md\n+y\n*** End Patch"))
	if a.Effect != tool.EffectWrite || strings.Join(a.Subjects, ",") != "src/x.go,docs/y.md" || strings.Join(a.As, ",") != "write_file,edit_file" {
		t.Fatalf("access %+v", a)
	}
	pol := tool.Policy{Deny: []tool.Rule{{Tool: "write_file", Pattern: "docs/*"}}}
	if d := pol.Decide("apply_patch", a); d.Verdict != tool.Deny {
		t.Errorf("deny write_file(docs/*): %v", d)
	}
	// An allow rule for one of the tools does not allow a patch that also does the other's work.
	ask := tool.Policy{Mode: tool.ModeAsk, Allow: []tool.Rule{{Tool: "edit_file", Pattern: "*"}}}
	if d := ask.Decide("apply_patch", a); d.Verdict != tool.Ask {
		t.Errorf("allow edit_file(*) on an add: %v", d)
	}
	ask.Allow = append(ask.Allow, tool.Rule{Tool: "*_file", Pattern: "*"})
	if d := ask.Decide("apply_patch", a); d.Verdict != tool.Allow {
		t.Errorf("allow *_file(*): %v", d)
	}
	if ap.Spec().Grammar != "" || w.ApplyPatch(true).Spec().Grammar == "" {
		t.Error("the free-form spec carries the grammar, the function one does not")
	}
}
