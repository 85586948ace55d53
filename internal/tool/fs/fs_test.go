package fstool

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/tooltest"
)

// setup makes a workspace from files (name → content; a name ending in / is a directory, content
// "->target" a symbolic link) inside a parent directory that also holds outside/secret.
func setup(t *testing.T, files map[string]string) (*Workspace, string) {
	t.Helper()
	parent := t.TempDir()
	dir := filepath.Join(parent, "ws")
	mustWrite(t, filepath.Join(parent, "outside", "secret"), "top secret\n")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		switch {
		case strings.HasSuffix(name, "/"):
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(content, "->"):
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Symlink(strings.TrimPrefix(content, "->"), p); err != nil {
				t.Fatal(err)
			}
		default:
			mustWrite(t, p, content)
		}
	}
	w, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, dir
}

func mustWrite(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func call(t *testing.T, tl tool.Tool, args map[string]any) tool.Result {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tl.Run(context.Background(), tool.Call{ID: "c", Name: tl.Spec().Name, Args: b})
}

func TestConfinement(t *testing.T) {
	w, dir := setup(t, map[string]string{
		"a.txt":       "a\n",
		"out":         "->../outside",
		"outfile":     "->../outside/secret",
		"abs":         "->/etc/passwd",
		"inside/link": "->../a.txt",
	})
	outside := filepath.Join(filepath.Dir(dir), "outside", "secret")
	tests := []struct {
		name string
		tl   tool.Tool
		args map[string]any
		want string // the refusal, "" for no refusal
	}{
		{"dot-dot", w.ReadFile(), map[string]any{"path": "../outside/secret"}, "path ../outside/secret is outside the workspace " + dir},
		{"dot-dot inside a path", w.ReadFile(), map[string]any{"path": "inside/../../outside/secret"}, "path inside/../../outside/secret is outside the workspace " + dir},
		{"absolute outside", w.ReadFile(), map[string]any{"path": outside}, "path " + outside + " is outside the workspace " + dir},
		{"absolute /etc", w.ReadFile(), map[string]any{"path": "/etc/passwd"}, "path /etc/passwd is outside the workspace " + dir},
		{"symlinked directory", w.ReadFile(), map[string]any{"path": "out/secret"}, "path out/secret is outside the workspace " + dir + ": a symbolic link"},
		{"symlinked file", w.ReadFile(), map[string]any{"path": "outfile"}, "path outfile is outside the workspace " + dir + ": a symbolic link"},
		{"absolute symlink", w.ReadFile(), map[string]any{"path": "abs"}, "path abs is outside the workspace " + dir + ": a symbolic link"},
		{"write through a symlink", w.WriteFile(), map[string]any{"path": "out/new", "content": "x"}, "path out/new is outside the workspace " + dir + ": a symbolic link"},
		{"write through a symlinked file", w.WriteFile(), map[string]any{"path": "outfile", "content": "x"}, "path outfile is outside the workspace " + dir + ": a symbolic link"},
		{"write dot-dot", w.WriteFile(), map[string]any{"path": "../evil", "content": "x"}, "path ../evil is outside the workspace " + dir},
		{"edit outside", w.EditFile(), map[string]any{"path": outside, "old": "top", "new": "no"}, "path " + outside + " is outside the workspace " + dir},
		{"glob outside", w.Glob(), map[string]any{"pattern": "*", "path": ".."}, "path .. is outside the workspace " + dir},
		{"grep outside", w.Grep(), map[string]any{"pattern": "secret", "path": "out"}, "path out is outside the workspace " + dir + ": a symbolic link"},
		{"absolute inside", w.ReadFile(), map[string]any{"path": filepath.Join(dir, "a.txt")}, ""},
		{"symlink staying inside", w.ReadFile(), map[string]any{"path": "inside/link"}, ""},
		{"dot-dot staying inside", w.ReadFile(), map[string]any{"path": "inside/../a.txt"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, tt.tl, tt.args)
			if tt.want == "" {
				if r.IsError {
					t.Fatalf("refused: %s", r.Content)
				}
				return
			}
			if r.Outcome != record.Denied || !r.IsError || !strings.HasPrefix(r.Content, "refused: "+tt.want) {
				t.Errorf("got %s %q, want denied %q", r.Outcome, r.Content, tt.want)
			}
		})
	}
	if b, _ := os.ReadFile(outside); string(b) != "top secret\n" {
		t.Errorf("the outside file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "outside", "new")); err == nil {
		t.Error("a write escaped through the symbolic link")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "evil")); err == nil {
		t.Error("a write escaped through ..")
	}
}

func TestReadFile(t *testing.T) {
	var long strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	w, _ := setup(t, map[string]string{
		"three.txt":  "one\ntwo\nthree",
		"long.txt":   long.String(),
		"wide.txt":   strings.Repeat("é", 1500) + "\nshort\n",
		"empty.txt":  "",
		"bin.dat":    "PK\x03\x04\x00\x00binary",
		"latin1.txt": strings.Repeat("caf\xe9 ", 100),
		"sub/":       "",
	})
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		outcome record.Outcome
	}{
		{"whole file", map[string]any{"path": "three.txt"}, "     1\tone\n     2\ttwo\n     3\tthree\n", record.OK},
		{"offset and limit", map[string]any{"path": "three.txt", "offset": 2, "limit": 1}, "     2\ttwo\n[the file continues past line 2; read on with offset 3]", record.OK},
		{"offset to the end", map[string]any{"path": "three.txt", "offset": 3}, "     3\tthree\n", record.OK},
		{"offset past the end", map[string]any{"path": "three.txt", "offset": 9}, "three.txt has 3 lines; offset 9 is past its end", record.Failed},
		{"empty", map[string]any{"path": "empty.txt"}, "(empty.txt is empty)", record.OK},
		{"binary", map[string]any{"path": "bin.dat"}, "bin.dat is a binary file (12 bytes); read_file shows only text", record.Failed},
		{"not UTF-8", map[string]any{"path": "latin1.txt"}, "latin1.txt is a binary file (500 bytes); read_file shows only text", record.Failed},
		{"directory", map[string]any{"path": "sub"}, "sub is a directory; list it with glob", record.Failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, w.ReadFile(), tt.args)
			if r.Content != tt.want || r.Outcome != tt.outcome {
				t.Errorf("got %s %q, want %s %q", r.Outcome, r.Content, tt.outcome, tt.want)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		r := call(t, w.ReadFile(), map[string]any{"path": "nope.txt"})
		if r.Outcome != record.Failed || !strings.HasPrefix(r.Content, "nope.txt does not exist in the workspace") {
			t.Errorf("got %s %q", r.Outcome, r.Content)
		}
	})
	t.Run("default limit", func(t *testing.T) {
		r := call(t, w.ReadFile(), map[string]any{"path": "long.txt"})
		lines := strings.Split(r.Content, "\n")
		if len(lines) != 2001 || lines[1999] != "  2000\tline 2000" || lines[2000] != "[the file continues past line 2000; read on with offset 2001]" {
			t.Errorf("%d lines, ending %q", len(lines), lines[len(lines)-2:])
		}
	})
	t.Run("long lines clipped on a character boundary", func(t *testing.T) {
		r := call(t, w.ReadFile(), map[string]any{"path": "wide.txt"})
		want := "     1\t" + strings.Repeat("é", 1000) + " [… line clipped, 1000 more bytes]\n     2\tshort\n"
		if r.Content != want {
			t.Errorf("got %.80q…", r.Content)
		}
	})
}

func TestWriteFile(t *testing.T) {
	w, dir := setup(t, map[string]string{"exists.sh": "old\n"})
	os.Chmod(filepath.Join(dir, "exists.sh"), 0o755)

	r := call(t, w.WriteFile(), map[string]any{"path": "deep/er/new.md", "content": "# hi\nthere"})
	if r.IsError || r.Content != "created deep/er/new.md (10 bytes, 2 lines)" {
		t.Fatalf("got %q", r.Content)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "deep/er/new.md")); string(b) != "# hi\nthere" {
		t.Errorf("file holds %q", b)
	}
	r = call(t, w.WriteFile(), map[string]any{"path": filepath.Join(dir, "exists.sh"), "content": "new\n"})
	if r.IsError || !strings.HasPrefix(r.Content, "overwrote ") {
		t.Fatalf("got %q", r.Content)
	}
	fi, _ := os.Stat(filepath.Join(dir, "exists.sh"))
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("mode became %v", fi.Mode())
	}
	r = call(t, w.WriteFile(), map[string]any{"path": "deep", "content": "x"})
	if r.Outcome != record.Failed || r.Content != "deep is a directory" {
		t.Errorf("writing over a directory: %s %q", r.Outcome, r.Content)
	}
}

func TestEditFile(t *testing.T) {
	const src = "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n\nfunc c() {\n\treturn 1\n}\n"
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		outcome record.Outcome
		after   string
	}{
		{"unique", map[string]any{"old": "func b() {\n\treturn 1", "new": "func b() {\n\treturn 2"},
			"replaced 1 occurrence in f.go, at line 5", record.OK, strings.Replace(src, "b() {\n\treturn 1", "b() {\n\treturn 2", 1)},
		{"ambiguous", map[string]any{"old": "return 1", "new": "return 2"},
			"old matches 3 places in f.go (lines 2, 6, 10); include more of the surrounding text to make it unique, or set replace_all to change all 3", record.Failed, src},
		{"replace all", map[string]any{"old": "return 1", "new": "return 2", "replace_all": true},
			"replaced 3 occurrences in f.go, the first at line 2", record.OK, strings.ReplaceAll(src, "return 1", "return 2")},
		{"missing", map[string]any{"old": "return 3", "new": "return 2"},
			"old was not found in f.go. It must match the file exactly, whitespace and indentation included; read_file shows the current text", record.Failed, src},
		{"near miss", map[string]any{"old": "func a() {\n    return 1\n}", "new": "x"},
			"old was not found in f.go. It must match the file exactly, whitespace and indentation included; read_file shows the current text (a match exists that differs only in indentation or trailing whitespace)", record.Failed, src},
		{"empty old", map[string]any{"old": "", "new": "x"}, "old is empty; to write a file from scratch use write_file", record.Failed, src},
		{"no change", map[string]any{"old": "a", "new": "a"}, "old and new are the same; the edit would change nothing", record.Failed, src},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, dir := setup(t, map[string]string{"f.go": src})
			tt.args["path"] = "f.go"
			r := call(t, w.EditFile(), tt.args)
			if r.Content != tt.want || r.Outcome != tt.outcome {
				t.Errorf("got %s %q\nwant %s %q", r.Outcome, r.Content, tt.outcome, tt.want)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "f.go")); string(b) != tt.after {
				t.Errorf("file now %q", b)
			}
		})
	}
	t.Run("binary", func(t *testing.T) {
		w, _ := setup(t, map[string]string{"b.bin": "a\x00b"})
		r := call(t, w.EditFile(), map[string]any{"path": "b.bin", "old": "a", "new": "c"})
		if r.Outcome != record.Failed || r.Content != "b.bin is a binary file; edit_file changes only text" {
			t.Errorf("got %s %q", r.Outcome, r.Content)
		}
	})
}

func searchTree(t *testing.T) *Workspace {
	w, _ := setup(t, map[string]string{
		".gitignore":            "# build output\n/build/\n*.log\nnode_modules/\ngen/*.go\n!gen/keep.go\n",
		"main.go":               "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
		"main_test.go":          "package main\n",
		"README.md":             "# hello\nsay hello\n",
		"internal/a/a.go":       "package a\n// hello from a\n",
		"internal/a/b/b.go":     "package b\n",
		"internal/a/b/b.ts":     "let hello = 1\n",
		"build/out.go":          "package build // hello\n",
		"sub/build/kept.go":     "package kept // hello\n",
		"debug.log":             "hello log\n",
		"node_modules/x/x.go":   "package x // hello\n",
		"gen/drop.go":           "package gen // hello\n",
		"gen/keep.go":           "package gen // hello\n",
		".git/HEAD":             "ref: hello\n",
		"img.png":               "\x89PNG\x00hello",
		"internal/a/crlf.txt":   "hello\r\nworld\r\n",
		"internal/a/.hidden.go": "package a\n",
	})
	return w
}

func TestGlob(t *testing.T) {
	w := searchTree(t)
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "*.go"}, "main.go\nmain_test.go\n"},
		{map[string]any{"pattern": "**/*.go"}, "gen/keep.go\ninternal/a/.hidden.go\ninternal/a/a.go\ninternal/a/b/b.go\nmain.go\nmain_test.go\nsub/build/kept.go\n"},
		{map[string]any{"pattern": "**/b.{go,ts}"}, "internal/a/b/b.go\ninternal/a/b/b.ts\n"},
		{map[string]any{"pattern": "*", "path": "internal/a"}, "internal/a/.hidden.go\ninternal/a/a.go\ninternal/a/b/\ninternal/a/crlf.txt\n"},
		{map[string]any{"pattern": "internal/**"}, "internal/\ninternal/a/\ninternal/a/.hidden.go\ninternal/a/a.go\ninternal/a/b/\ninternal/a/b/b.go\ninternal/a/b/b.ts\ninternal/a/crlf.txt\n"},
		{map[string]any{"pattern": "**/*.rs"}, "no paths under the workspace match **/*.rs"},
	}
	for _, tt := range tests {
		r := call(t, w.Glob(), tt.args)
		if r.Content != tt.want || r.IsError {
			t.Errorf("glob %v:\ngot  %q\nwant %q", tt.args, r.Content, tt.want)
		}
	}
	r := call(t, w.Glob(), map[string]any{"pattern": "[z-a"})
	if r.Outcome != record.Failed || !strings.Contains(r.Content, "bad pattern") {
		t.Errorf("bad pattern: %s %q", r.Outcome, r.Content)
	}
}

func TestGlobCap(t *testing.T) {
	files := map[string]string{}
	for i := range maxGlobResults + 5 {
		files[fmt.Sprintf("f%04d.txt", i)] = ""
	}
	w, _ := setup(t, files)
	r := call(t, w.Glob(), map[string]any{"pattern": "*.txt"})
	lines := strings.Split(r.Content, "\n")
	if len(lines) != maxGlobResults+1 || lines[maxGlobResults] != "[5 more paths match; narrow the pattern or the path]" {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

func TestGrep(t *testing.T) {
	w := searchTree(t)
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "hello"},
			"README.md:1:# hello\nREADME.md:2:say hello\ngen/keep.go:1:package gen // hello\ninternal/a/a.go:2:// hello from a\n" +
				"internal/a/b/b.ts:1:let hello = 1\ninternal/a/crlf.txt:1:hello\nmain.go:4:\tprintln(\"hello\")\nsub/build/kept.go:1:package kept // hello\n" +
				"[8 matches in 7 files]"},
		{map[string]any{"pattern": "^package", "glob": "*.go", "path": "internal"},
			"internal/a/.hidden.go:1:package a\ninternal/a/a.go:1:package a\ninternal/a/b/b.go:1:package b\n[3 matches in 3 files]"},
		{map[string]any{"pattern": "hello$", "glob": "a/**/*.{ts,txt}", "path": "internal"},
			"internal/a/crlf.txt:1:hello\n[1 matches in 1 files]"},
		{map[string]any{"pattern": "(?i)HELLO", "path": "main.go"}, "main.go:4:\tprintln(\"hello\")\n[1 matches in 1 files]"},
		{map[string]any{"pattern": "^say", "path": "README.md"}, "README.md:2:say hello\n[1 matches in 1 files]"},
		{map[string]any{"pattern": "nowhere"}, "no matches for nowhere"},
	}
	for _, tt := range tests {
		r := call(t, w.Grep(), tt.args)
		if r.Content != tt.want || r.IsError {
			t.Errorf("grep %v:\ngot  %q\nwant %q", tt.args, r.Content, tt.want)
		}
	}
	r := call(t, w.Grep(), map[string]any{"pattern": "hello", "path": "img.png"})
	if r.Outcome != record.Failed || r.Content != "img.png is a binary file; grep searches only text" {
		t.Errorf("grep in a binary file: %s %q", r.Outcome, r.Content)
	}
	r = call(t, w.Grep(), map[string]any{"pattern": "a(b"})
	if r.Outcome != record.Failed || !strings.HasPrefix(r.Content, "bad regular expression: ") {
		t.Errorf("bad regexp: %s %q", r.Outcome, r.Content)
	}
}

func TestGrepCapAndClip(t *testing.T) {
	var b strings.Builder
	for i := range maxGrepHits + 50 {
		fmt.Fprintf(&b, "hit %d %s\n", i, strings.Repeat("x", 400))
	}
	w, _ := setup(t, map[string]string{"many.txt": b.String()})
	r := call(t, w.Grep(), map[string]any{"pattern": "hit"})
	lines := strings.Split(r.Content, "\n")
	if len(lines) != maxGrepHits+1 {
		t.Fatalf("%d lines", len(lines))
	}
	if want := "[showing 200 of 250 matches in 1 files; narrow the pattern, path or glob]"; lines[maxGrepHits] != want {
		t.Errorf("last line %q", lines[maxGrepHits])
	}
	if len(lines[0]) > len("many.txt:1:")+maxHitBytes+len("…") {
		t.Errorf("hit not clipped: %d bytes", len(lines[0]))
	}
}

func TestIgnore(t *testing.T) {
	ig := parseIgnore("*.log\n/build/\nnode_modules/\ndocs/**/*.tmp\n!keep.log\n\\#notacomment\n")
	tests := []struct {
		name  string
		dir   bool
		want  bool
		label string
	}{
		{"a.log", false, true, "unrooted at the top"},
		{"x/y/a.log", false, true, "unrooted below"},
		{"keep.log", false, false, "re-included"},
		{"build", true, true, "rooted directory"},
		{"build", false, false, "a file named like a directory rule"},
		{"x/build", true, false, "rooted only at the root"},
		{"a/node_modules", true, true, "unrooted directory"},
		{"docs/a/b/c.tmp", false, true, "double star"},
		{"docs/c.tmp", false, true, "double star matching nothing"},
		{"#notacomment", false, true, "escaped hash"},
		{"main.go", false, false, "not ignored"},
	}
	for _, tt := range tests {
		if got, _ := ig.ignored(context.Background(), tt.name, tt.dir); got != tt.want {
			t.Errorf("%s: ignored(%q, dir %v) = %v", tt.label, tt.name, tt.dir, got)
		}
	}
}

func TestAccess(t *testing.T) {
	w, dir := setup(t, nil)
	for _, tt := range []struct {
		tl     tool.Tool
		path   string
		effect tool.Effect
		want   string
	}{
		{w.ReadFile(), "a/../b.txt", tool.EffectRead, "b.txt"},
		{w.WriteFile(), filepath.Join(dir, "docs/x.md"), tool.EffectWrite, "docs/x.md"},
		{w.EditFile(), "../x", tool.EffectWrite, "../x"},
		{w.Grep(), "", tool.EffectRead, "."},
	} {
		a := tt.tl.(tool.Accessor).Access(json.RawMessage(fmt.Sprintf(`{"path":%q}`, tt.path)))
		if a.Effect != tt.effect || len(a.Subjects) != 1 || a.Subjects[0] != tt.want {
			t.Errorf("%s %q: %+v", tt.tl.Spec().Name, tt.path, a)
		}
	}
}

func TestConformance(t *testing.T) {
	w := searchTree(t)
	calls := map[string][]string{
		"read_file":  {`{"path":"main.go"}`, `{"path":"main.go","offset":2,"limit":1}`, `{"path":"img.png"}`, `{"path":"../x"}`},
		"write_file": {`{"path":"new/file.txt","content":"x"}`, `{"path":"../x","content":"x"}`},
		"edit_file":  {`{"path":"README.md","old":"say","new":"say"}`, `{"path":"README.md","old":"absent","new":"x"}`},
		"glob":       {`{"pattern":"**/*.go"}`, `{"pattern":"*.none"}`},
		"grep":       {`{"pattern":"hello","glob":"*.go"}`, `{"pattern":"nothing here"}`},
	}
	for _, tl := range w.Tools() {
		t.Run(tl.Spec().Name, func(t *testing.T) {
			tooltest.Conformance(t, tl, calls[tl.Spec().Name]...)
		})
	}
}

// TestSpecsCompile checks every file tool's schema is one the registry accepts.
func TestSpecsCompile(t *testing.T) {
	w, _ := setup(t, nil)
	r, err := tool.NewRegistry(w.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Names(), ","); got != "read_file,write_file,edit_file,glob,grep" {
		t.Errorf("names %s", got)
	}
}
