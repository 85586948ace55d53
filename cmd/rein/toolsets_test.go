package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/record"
)

// TestToolSetRecorded: rein run with a Claude model offers it the text editor, which edits a
// file of the workspace, and the record says which tool set the session got; a resume on
// another model records the set it chooses then.
func TestToolSetRecorded(t *testing.T) {
	reinBin(t)
	sb := newSandbox(t)
	if err := os.WriteFile(filepath.Join(sb.ws, "a.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, filepath.Dir(sb.home),
		map[string]any{"tool_calls": []map[string]any{{"name": "str_replace_based_edit_tool",
			"arguments": map[string]any{"command": "str_replace", "path": "a.txt", "old_str": "hi", "new_str": "hello"}}}},
		map[string]any{"text": "Edited."},
	)
	r := sb.rein(t, append([]string{"run"}, append(simArgs(script), "--model", "claude-sonnet-4-5", "edit a.txt")...)...)
	if r.code != 0 {
		t.Fatalf("rein run:\n%s", r)
	}
	if b, _ := os.ReadFile(filepath.Join(sb.ws, "a.txt")); string(b) != "hello\n" {
		t.Fatalf("a.txt = %q", b)
	}
	recs := recordOf(t, sb)
	if s := payloads[*record.SessionStarted](recs); len(s) != 1 || s[0].Tools != "claude" {
		t.Fatalf("session_started %+v, want tools claude", s)
	}
	id := filepath.Base(filepath.Dir(sb.records(t)[0]))
	script = writeScript(t, filepath.Dir(sb.home), map[string]any{"text": "Still here."})
	r = sb.rein(t, append([]string{"run"}, append(simArgs(script), "--resume", id, "--model", "sim-1", "again")...)...)
	if r.code != 0 {
		t.Fatalf("rein run --resume:\n%s", r)
	}
	res := payloads[*record.SessionResumed](recordOf(t, sb))
	if len(res) != 1 || res[0].Tools != "rein" {
		t.Errorf("session_resumed %+v, want tools rein", res)
	}
	if _, _, st := sessionOf(t, sb); st.Meta().Tools != "rein" {
		t.Errorf("the folded session says tools %q after the resume", st.Meta().Tools)
	}
	if !strings.Contains(r.stdout, "Still here.") {
		t.Errorf("the resumed run said:\n%s", r)
	}
}
