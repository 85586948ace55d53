package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"strings"
	"testing"
)

// memFiles is a directory in memory, with a write that can be made to fail.
type memFiles struct {
	files  map[string]string
	failOn string // a Write or Remove of this name fails
	writes int
}

func (m *memFiles) Resolve(p string) (string, error) {
	c := path.Clean(p)
	if path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %s is outside the workspace", p)
	}
	return c, nil
}

func (m *memFiles) Read(name string) (string, error) {
	t, ok := m.files[name]
	if !ok {
		return "", fmt.Errorf("read %s: %w", name, fs.ErrNotExist)
	}
	return t, nil
}

func (m *memFiles) Write(name, content string) error {
	if name == m.failOn {
		return errors.New("disk full")
	}
	m.writes++
	m.files[name] = content
	return nil
}

func (m *memFiles) Remove(name string) error {
	if name == m.failOn {
		return errors.New("read-only file system")
	}
	if _, ok := m.files[name]; !ok {
		return fs.ErrNotExist
	}
	delete(m.files, name)
	return nil
}

func TestApply(t *testing.T) {
	tests := []struct {
		name    string
		before  map[string]string
		patch   string
		after   map[string]string
		wantErr string // a substring of the error; the files must then be unchanged
	}{
		{
			name:   "add a file",
			before: map[string]string{},
			patch:  "*** Begin Patch\n*** Add File: docs/notes.md\n+# Notes\n+\n+first\n*** End Patch",
			after:  map[string]string{"docs/notes.md": "# Notes\n\nfirst\n"},
		},
		{
			name:   "delete a file",
			before: map[string]string{"a.txt": "a\n", "b.txt": "b\n"},
			patch:  "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n",
			after:  map[string]string{"b.txt": "b\n"},
		},
		{
			name:   "update with context and an anchor",
			before: map[string]string{"m.go": "package m\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 1\n}\n"},
			patch:  "*** Begin Patch\n*** Update File: m.go\n@@ func B() int {\n-\treturn 1\n+\treturn 2\n }\n*** End Patch",
			after:  map[string]string{"m.go": "package m\n\nfunc A() int {\n\treturn 1\n}\n\nfunc B() int {\n\treturn 2\n}\n"},
		},
		{
			name:   "two hunks in order",
			before: map[string]string{"f": "1\n2\n3\n4\n5\n6\n"},
			patch:  "*** Begin Patch\n*** Update File: f\n@@\n 1\n-2\n+two\n@@\n 5\n-6\n+six\n*** End Patch",
			after:  map[string]string{"f": "1\ntwo\n3\n4\n5\nsix\n"},
		},
		{
			name:   "first hunk without @@",
			before: map[string]string{"f": "import os\nx = 1\n"},
			patch:  "*** Begin Patch\n*** Update File: f\n import os\n+import sys\n*** End Patch",
			after:  map[string]string{"f": "import os\nimport sys\nx = 1\n"},
		},
		{
			name:   "move and change",
			before: map[string]string{"old/a.txt": "hello\n", "old/b.txt": "stay\n"},
			patch:  "*** Begin Patch\n*** Update File: old/a.txt\n*** Move to: new/dir/a.txt\n@@\n-hello\n+hello, world\n*** End Patch",
			after:  map[string]string{"new/dir/a.txt": "hello, world\n", "old/b.txt": "stay\n"},
		},
		{
			name:   "end of file marker picks the last match",
			before: map[string]string{"f": "x\ny\nx\n"},
			patch:  "*** Begin Patch\n*** Update File: f\n@@\n-x\n+z\n*** End of File\n*** End Patch",
			after:  map[string]string{"f": "x\ny\nz\n"},
		},
		{
			name:   "pure addition appends",
			before: map[string]string{"f": "a\n"},
			patch:  "*** Begin Patch\n*** Update File: f\n@@\n+b\n*** End Patch",
			after:  map[string]string{"f": "a\nb\n"},
		},
		{
			name:   "a file without a final newline gains one",
			before: map[string]string{"f": "a\nb"},
			patch:  "*** Begin Patch\n*** Update File: f\n@@\n-b\n+c\n*** End Patch",
			after:  map[string]string{"f": "a\nc\n"},
		},
		{
			name:   "trailing whitespace is forgiven",
			before: map[string]string{"f": "a  \nb\n"},
			patch:  "*** Begin Patch\n*** Update File: f\n@@\n-a\n+A\n*** End Patch",
			after:  map[string]string{"f": "A\nb\n"},
		},
		{
			name:   "indentation is forgiven last",
			before: map[string]string{"f": "    a\nb\n"},
			patch:  "*** Begin Patch\n*** Update File: f\n@@\n-a\n+  A\n*** End Patch",
			after:  map[string]string{"f": "  A\nb\n"},
		},
		{
			name:   "padded markers and CRLF",
			before: map[string]string{"f": "a\n"},
			patch:  "  *** Begin Patch  \r\n*** Update File: f  \r\n@@\r\n-a\r\n+b\r\n *** End Patch \r\n",
			after:  map[string]string{"f": "b\n"},
		},
		{
			name:   "heredoc wrapper",
			before: map[string]string{},
			patch:  "<<'EOF'\n*** Begin Patch\n*** Add File: x\n+1\n*** End Patch\nEOF\n",
			after:  map[string]string{"x": "1\n"},
		},
		{
			name:   "add then update the same file",
			before: map[string]string{},
			patch:  "*** Begin Patch\n*** Add File: x\n+1\n+2\n*** Update File: x\n@@\n-2\n+3\n*** End Patch",
			after:  map[string]string{"x": "1\n3\n"},
		},
		{
			name:    "context not found names the file, the hunk and the lines",
			before:  map[string]string{"f": "a\nb\n", "g": "keep\n"},
			patch:   "*** Begin Patch\n*** Delete File: g\n*** Update File: f\n@@\n-a\n+A\n@@\n-zzz\n+Z\n*** End Patch",
			wantErr: "hunk 2 of Update File f (patch line 7): the lines to change were not found after line 1 (the ' ' and '-' lines must match the file, in order):\n  zzz",
		},
		{
			name:    "anchor not found",
			before:  map[string]string{"f": "a\n"},
			patch:   "*** Begin Patch\n*** Update File: f\n@@ func Missing()\n-a\n+b\n*** End Patch",
			wantErr: "hunk 1 of Update File f (patch line 3): the line after @@ was not found:\n  func Missing()",
		},
		{
			name:    "update of a missing file",
			before:  map[string]string{},
			patch:   "*** Begin Patch\n*** Update File: nope.txt\n@@\n-a\n+b\n*** End Patch",
			wantErr: "Update File nope.txt (patch line 2): nope.txt does not exist, so it cannot be updated; to create it use '*** Add File: nope.txt'",
		},
		{
			name:    "delete of a missing file",
			before:  map[string]string{"a": "1\n"},
			patch:   "*** Begin Patch\n*** Add File: b\n+2\n*** Delete File: nope\n*** End Patch",
			wantErr: "Delete File nope (patch line 4): nope does not exist, so it cannot be deleted",
		},
		{
			name:    "escape refused",
			before:  map[string]string{},
			patch:   "*** Begin Patch\n*** Add File: ../outside\n+x\n*** End Patch",
			wantErr: "Add File ../outside (patch line 2): path ../outside is outside the workspace",
		},
		{
			name:    "no begin",
			patch:   "*** Update File: f\n*** End Patch",
			wantErr: "invalid patch: the first line of the patch must be '*** Begin Patch'",
		},
		{
			name:    "no end",
			patch:   "*** Begin Patch\n*** Add File: f\n+x",
			wantErr: "invalid patch: the last line of the patch must be '*** End Patch'",
		},
		{
			name:    "empty patch",
			patch:   "*** Begin Patch\n*** End Patch",
			wantErr: "invalid patch: the patch changes no file",
		},
		{
			name:    "bad section header",
			patch:   "*** Begin Patch\n*** Frobnicate File: f\n*** End Patch",
			wantErr: "invalid patch at line 2: \"*** Frobnicate File: f\" is not a file section header",
		},
		{
			name:    "update with no hunk",
			patch:   "*** Begin Patch\n*** Update File: f\n*** End Patch",
			wantErr: "invalid patch at line 2: the update of f has no hunk",
		},
		{
			name:    "bad hunk line",
			patch:   "*** Begin Patch\n*** Update File: f\n@@\n?x\n*** End Patch",
			wantErr: "invalid patch at line 4: unexpected line \"?x\" in a hunk",
		},
		{
			name:    "second hunk must open with @@",
			before:  map[string]string{"f": "a\n"},
			patch:   "*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\n*** End of File\nx\n*** End Patch",
			wantErr: "invalid patch at line 7: expected a hunk starting with '@@', got \"x\"",
		},
		{
			name:    "a file section naming no file",
			patch:   "*** Begin Patch\n*** Add File: \n+x\n*** End Patch",
			wantErr: "invalid patch at line 2: '*** Add File:' names no file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before == nil {
				tt.before = map[string]string{}
			}
			files := &memFiles{files: maps.Clone(tt.before)}
			var err error
			p, err := Parse(tt.patch)
			if err == nil {
				_, err = Apply(context.Background(), files, p)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				if !maps.Equal(files.files, tt.before) {
					t.Fatalf("a failed patch changed the files: %q, were %q", files.files, tt.before)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(files.files, tt.after) {
				t.Fatalf("files = %q, want %q", files.files, tt.after)
			}
		})
	}
}

// A write that fails half-way puts back every file already written: all or nothing.
func TestApplyRollsBack(t *testing.T) {
	before := map[string]string{"a": "1\n", "b": "2\n", "c": "3\n"}
	files := &memFiles{files: maps.Clone(before), failOn: "c"}
	p, err := Parse("*** Begin Patch\n*** Update File: a\n@@\n-1\n+one\n*** Add File: b2\n+new\n*** Delete File: b\n*** Update File: c\n@@\n-3\n+three\n*** End Patch")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Apply(context.Background(), files, p)
	if err == nil || !strings.Contains(err.Error(), "write c: disk full; no file was left changed") {
		t.Fatalf("error = %v", err)
	}
	if files.writes == 0 {
		t.Fatal("the test did not write anything before the failure")
	}
	if !maps.Equal(files.files, before) {
		t.Fatalf("files = %q after a failed write, want %q", files.files, before)
	}
}

// A Stop before the writes leaves every file as it was.
func TestApplyStopped(t *testing.T) {
	before := map[string]string{"a": "1\n"}
	files := &memFiles{files: maps.Clone(before)}
	p, err := Parse("*** Begin Patch\n*** Update File: a\n@@\n-1\n+2\n*** End Patch")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Apply(ctx, files, p); !errors.Is(err, ErrStopped) {
		t.Fatalf("error = %v, want ErrStopped", err)
	}
	if !maps.Equal(files.files, before) {
		t.Fatalf("files = %q after a Stop", files.files)
	}
}
