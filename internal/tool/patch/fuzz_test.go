package patch

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// FuzzApply parses any text as a patch and applies what parses to a small directory: it never
// panics, and a patch that fails leaves the directory as it was.
func FuzzApply(f *testing.F) {
	for _, seed := range []string{
		"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch",
		"*** Begin Patch\n*** Update File: f\n@@ two\n three\n-four\n+4\n*** End of File\n*** End Patch",
		"*** Begin Patch\n*** Update File: f\n*** Move to: g\n@@\n-one\n+1\n*** Delete File: h\n*** End Patch",
		"<<EOF\n*** Begin Patch\n*** Update File: f\n one\n+half\n*** End Patch\nEOF",
		"*** Begin Patch\n*** Update File: f\n@@\n\n-\n+\n*** End Patch",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		before := map[string]string{"f": "one\ntwo\nthree\nfour\n", "h": "gone\n", "empty": ""}
		p, err := Parse(text)
		if err != nil {
			if p != nil {
				t.Fatal("Parse returned a patch with its error")
			}
			return
		}
		files := &memFiles{files: maps.Clone(before)}
		if _, err := Apply(context.Background(), files, p); err != nil && !maps.Equal(files.files, before) {
			t.Fatalf("a failed patch (%v) changed the files: %q", err, files.files)
		}
	})
}

// A patch written for an edit applies to give exactly the edited file: a random file of distinct
// lines, a random run of them replaced, the hunk written with up to three lines of context.
func TestWrittenPatchApplies(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 30).Draw(t, "lines")
		old := make([]string, n)
		for i := range old {
			old[i] = fmt.Sprintf("line %d %s", i, rapid.StringMatching(`[a-z \t]{0,8}`).Draw(t, "text"))
		}
		from := rapid.IntRange(0, n).Draw(t, "from")
		to := rapid.IntRange(from, n).Draw(t, "to")
		repl := rapid.SliceOfN(rapid.StringMatching(`[A-Z][a-z ]{0,8}`), 0, 5).Draw(t, "new")
		if from == to && len(repl) == 0 {
			repl = []string{"Inserted"}
		}
		ctx := rapid.IntRange(0, 3).Draw(t, "context")
		if from == to && from < n && ctx == 0 {
			ctx = 1 // a pure insertion needs a line to stand by, or it appends
		}
		var b strings.Builder
		b.WriteString("*** Begin Patch\n*** Update File: f\n@@\n")
		for _, l := range old[max(0, from-ctx):from] {
			b.WriteString(" " + l + "\n")
		}
		for _, l := range old[from:to] {
			b.WriteString("-" + l + "\n")
		}
		for _, l := range repl {
			b.WriteString("+" + l + "\n")
		}
		for _, l := range old[to:min(n, to+ctx)] {
			b.WriteString(" " + l + "\n")
		}
		b.WriteString("*** End Patch\n")
		p, err := Parse(b.String())
		if err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		files := &memFiles{files: map[string]string{"f": strings.Join(old, "\n") + "\n"}}
		if _, err := Apply(context.Background(), files, p); err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		want := append(append(append([]string{}, old[:from]...), repl...), old[to:]...)
		wantText := strings.Join(want, "\n") + "\n"
		if len(want) == 0 {
			wantText = ""
		}
		if got := files.files["f"]; got != wantText {
			t.Fatalf("got %q, want %q\npatch:\n%s", got, wantText, b.String())
		}
	})
}
