package sandbox

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestMain(m *testing.M) {
	Main()
	os.Exit(m.Run())
}

// TestSeatbeltGolden pins the Seatbelt profiles macOS commands run under, and their parameters,
// for each shape of policy. The generator is text: it is tested here, on any platform.
func TestSeatbeltGolden(t *testing.T) {
	ws, tmp := "/Users/ann/src/proj", "/private/var/folders/xy/T/rein-sandbox-123"
	for _, tt := range []struct {
		name string
		p    Policy
		dirs []string
		git  string
	}{
		{"workspace-write", Policy{Mode: WorkspaceWrite}, []string{ws, tmp}, ""},
		{"read-only", Policy{Mode: ReadOnly}, []string{tmp}, ""},
		{"network", Policy{Mode: WorkspaceWrite, Network: true}, []string{ws, tmp}, ""},
		{"protect-git", Policy{Mode: WorkspaceWrite, ProtectGit: true}, []string{ws, tmp}, ws + "/.git"},
		{"extra-write", Policy{Mode: WorkspaceWrite, Write: []string{"/Users/ann/Library/Caches/go-build"}},
			[]string{ws, tmp, "/Users/ann/Library/Caches/go-build", `/Users/ann/odd "dir")(allow default`}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			profile, params := Seatbelt(tt.p, tt.dirs, tt.git)
			var b bytes.Buffer
			for _, p := range params {
				b.WriteString(";; -D " + p + "\n")
			}
			b.WriteString(profile)
			path := filepath.Join("testdata", "seatbelt", tt.name+".sb")
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -run TestSeatbeltGolden -update writes it)", err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("the profile changed (-update rewrites it after review):\n%s\nwant:\n%s", b.Bytes(), want)
			}
			// A path is a parameter, never text of the profile: no path can add a rule.
			for _, d := range tt.dirs {
				if strings.Contains(profile, d) {
					t.Errorf("the path %s is written into the profile", d)
				}
			}
			if strings.Count(profile, "(") != strings.Count(profile, ")") {
				t.Errorf("unbalanced parentheses:\n%s", profile)
			}
		})
	}
}

// TestSeatbeltArgs: sandbox-exec gets the parameters, the profile, then the command's path and
// arguments (without their argv[0]).
func TestSeatbeltArgs(t *testing.T) {
	got := seatbeltArgs("/usr/bin/sandbox-exec", "(version 1)", []string{"WRITABLE_0=/w"}, "/bin/bash", []string{"bash", "-c", "x"})
	want := []string{"/usr/bin/sandbox-exec", "-D", "WRITABLE_0=/w", "-p", "(version 1)", "/bin/bash", "-c", "x"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range Modes {
		if got, err := ParseMode(string(m)); err != nil || got != m {
			t.Errorf("%s: %v %v", m, got, err)
		}
	}
	for _, s := range []string{"", "workspace", "Off", "readonly", "full"} {
		if _, err := ParseMode(s); err == nil || !strings.Contains(err.Error(), "workspace-write, read-only or off") {
			t.Errorf("%q: %v", s, err)
		}
	}
}

func TestPolicyCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, nil, 0o644)
	for _, tt := range []struct {
		p    Policy
		want string // "" for accepted
	}{
		{Policy{Mode: WorkspaceWrite}, ""},
		{Policy{Mode: ReadOnly, Write: []string{dir}}, ""},
		{Policy{Mode: WorkspaceWrite, Write: []string{"rel/dir"}}, "absolute"},
		{Policy{Mode: WorkspaceWrite, Write: []string{filepath.Join(dir, "none")}}, "no such file"},
		{Policy{Mode: WorkspaceWrite, Write: []string{file}}, "not a directory"},
		{Policy{Mode: Off, Network: true}, "--sandbox off"},
		{Policy{Mode: Off, ProtectGit: true}, "--sandbox off"},
		{Policy{Mode: "strict"}, "unknown sandbox mode"},
	} {
		err := tt.p.Check()
		if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.p, err, tt.want)
		}
	}
}

func TestPolicyString(t *testing.T) {
	for _, tt := range []struct {
		p    Policy
		want string
	}{
		{Policy{}, "off"},
		{Policy{Mode: Off}, "off"},
		{Policy{Mode: WorkspaceWrite}, "workspace-write, no network"},
		{Policy{Mode: ReadOnly, Network: true}, "read-only, network allowed"},
		{Policy{Mode: WorkspaceWrite, ProtectGit: true, Write: []string{"/a", "/b"}}, "workspace-write, no network, .git read-only, also writes /a /b"},
		{Policy{Mode: ReadOnly, ProtectGit: true}, "read-only, no network"},
	} {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.p, got, tt.want)
		}
	}
}

// TestPrompt: the system prompt names where a command may write and that the network is off;
// with no sandbox it says nothing.
func TestPrompt(t *testing.T) {
	if got := (Policy{Mode: Off}).Prompt(); got != "" {
		t.Errorf("off: %q", got)
	}
	got := Policy{Mode: WorkspaceWrite, ProtectGit: true}.Prompt()
	for _, want := range []string{"only in the workspace", "$TMPDIR", "Permission denied", ".git is read-only", "network is off"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if got := (Policy{Mode: ReadOnly, Network: true}).Prompt(); strings.Contains(got, "network is off") || !strings.Contains(got, "not write in the workspace") {
		t.Errorf("read-only with network: %q", got)
	}
}

// TestEnforce: a machine without what a policy needs refuses it with the reason and the way out;
// off is never refused; the default is workspace-write only where it can be enforced.
func TestEnforce(t *testing.T) {
	none := Support{Forced: "no sandbox here (test)"}
	var u *UnsupportedError
	if err := none.Enforce(Policy{Mode: WorkspaceWrite}); !errors.As(err, &u) || !strings.Contains(err.Error(), "--sandbox off") || !strings.Contains(err.Error(), "no sandbox here (test)") {
		t.Errorf("got %v", err)
	}
	if err := none.Enforce(Policy{Mode: Off}); err != nil {
		t.Errorf("off refused: %v", err)
	}
	if none.Default() != Off {
		t.Errorf("default where nothing is enforced: %s", none.Default())
	}
	var b bytes.Buffer
	none.Report(&b)
	if !strings.Contains(b.String(), "not available") || !strings.Contains(b.String(), "no sandbox here (test)") {
		t.Errorf("report: %s", b.String())
	}
}

// TestNewAndClose: New makes the temporary directory and resolves every writable directory;
// Close removes it; off needs no sandbox.
func TestNewAndClose(t *testing.T) {
	if s, err := New(Policy{Mode: Off}, Config{Workspace: t.TempDir()}); s != nil || err != nil {
		t.Errorf("off: %v %v", s, err)
	}
	ws, root, extra := t.TempDir(), t.TempDir(), t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(extra, link)
	sup := Support{Forced: "test"}
	s, err := New(Policy{Mode: WorkspaceWrite, Write: []string{link}}, Config{Workspace: ws, TempRoot: root, Support: &sup})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(s.TempDir()); err != nil || !fi.IsDir() || filepath.Dir(s.TempDir()) != mustResolve(t, root) {
		t.Errorf("temporary directory %s: %v", s.TempDir(), err)
	}
	want := []string{mustResolve(t, ws), s.TempDir(), mustResolve(t, extra)}
	if got := s.Writable(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("writable %v, want %v", got, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.TempDir()); err == nil {
		t.Error("Close left the temporary directory")
	}
	ro, err := New(Policy{Mode: ReadOnly}, Config{Workspace: ws, TempRoot: root, Support: &sup})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if got := ro.Writable(); len(got) != 1 || got[0] != ro.TempDir() {
		t.Errorf("read-only writes %v", got)
	}
}

func mustResolve(t *testing.T, p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
