package fstool

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/tool"
)

func preview(t *testing.T, tl tool.Tool, args any) string {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tl.(tool.Previewer).Preview(b)
}

// A preview is the diff the call would make to the file as it is, changes nothing, and says why
// a call would fail; a path outside the workspace is refused as the call is.
func TestPreview(t *testing.T) {
	w, dir := setup(t, map[string]string{"a.txt": "one\ntwo\nthree\n"})
	for _, tc := range []struct {
		name string
		tl   tool.Tool
		args any
		want string
	}{
		{"an edit", w.EditFile(), map[string]any{"path": "a.txt", "old": "two", "new": "TWO"},
			"--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"},
		{"a rewrite", w.WriteFile(), map[string]any{"path": "a.txt", "content": "one\n"},
			"--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1 @@\n one\n-two\n-three\n"},
		{"a new file", w.WriteFile(), map[string]any{"path": "sub/new.txt", "content": "hi\n"},
			"--- /dev/null\n+++ b/sub/new.txt\n@@ -0,0 +1 @@\n+hi\n"},
		{"an edit that would not match", w.EditFile(), map[string]any{"path": "a.txt", "old": "four", "new": "4"},
			"(edit_file would fail: old is not in a.txt as it is now)"},
		{"an edit of a missing file", w.EditFile(), map[string]any{"path": "b.txt", "old": "x", "new": "y"},
			"(edit_file would fail: b.txt does not exist)"},
		{"a write to the same content", w.WriteFile(), map[string]any{"path": "a.txt", "content": "one\ntwo\nthree\n"},
			"(write_file would leave a.txt as it is: the content is the same)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := preview(t, tc.tl, tc.args); got != tc.want {
				t.Fatalf("preview\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	if got := preview(t, w.WriteFile(), map[string]any{"path": "../outside/secret", "content": "x"}); !strings.HasPrefix(got, "(no preview: ") {
		t.Fatalf("a preview outside the workspace: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one\ntwo\nthree\n" {
		t.Fatalf("a preview changed the file: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub")); err == nil {
		t.Fatalf("a preview made a directory")
	}
}
