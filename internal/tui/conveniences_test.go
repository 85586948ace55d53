package tui

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHistoryPersistsPerWorkspace: prompts sent are kept in the workspace's history file and come
// back with Up in a later run; Ctrl+R finds one by what it holds.
func TestHistoryPersistsPerWorkspace(t *testing.T) {
	file := filepath.Join(t.TempDir(), "history", "ws.jsonl")
	d := newDriver(t, newFake(), Options{HistoryFile: file})
	sendFirst(t, d, "first prompt about tables")
	for _, p := range []string{"/help", "second prompt\nwith two lines"} {
		d.typ(strings.ReplaceAll(p, "\n", ""))
		d.press("enter")
	}
	d.until("three remembered", func() bool { return len(d.m.history) == 3 })

	// A later run of the chat in the same workspace.
	d2 := newDriver(t, newFake(), Options{HistoryFile: file})
	d2.press("up")
	if v := d2.m.composer.Value(); v != "second promptwith two lines" {
		t.Fatalf("Up in a new run shows %q", v)
	}
	d2.press("up", "up")
	if v := d2.m.composer.Value(); v != "first prompt about tables" {
		t.Fatalf("Up thrice shows %q", v)
	}
	d2.press("down", "down", "down")
	if v := d2.m.composer.Value(); v != "" {
		t.Fatalf("Down past the newest shows %q, want the empty draft", v)
	}

	// Ctrl+R: the newest prompt holding the query; Ctrl+R again looks further back.
	d2.typ("draft")
	d2.press("ctrl+r")
	d2.typ("pro")
	if v := d2.m.composer.Value(); v != "second promptwith two lines" {
		t.Fatalf("search for pro shows %q", v)
	}
	d2.waitScreen(`search "pro"`)
	d2.press("ctrl+r")
	if v := d2.m.composer.Value(); v != "first prompt about tables" {
		t.Fatalf("Ctrl+R again shows %q", v)
	}
	d2.press("enter")
	if d2.m.search != nil || d2.m.composer.Value() != "first prompt about tables" {
		t.Fatalf("Enter did not take the match: %q", d2.m.composer.Value())
	}
	if d2.called("send") {
		t.Fatal("taking a match sent it")
	}
	// Esc puts back what was typed before the search.
	d2.m.composer.SetValue("mine")
	d2.press("ctrl+r")
	d2.typ("zzz")
	d2.waitScreen(`search "zzz": none`)
	d2.press("esc")
	if d2.m.search != nil || d2.m.composer.Value() != "mine" {
		t.Fatalf("Esc left %q", d2.m.composer.Value())
	}

	// A torn last line (a crash mid-write) is skipped, not fatal.
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`"half a pro`)
	f.Close()
	if h, err := loadHistory(file); err != nil || len(h) != 3 {
		t.Fatalf("loadHistory with a torn tail: %q, %v", h, err)
	}
}

// TestTabCompletesSlashCommands: one match is taken whole; several are cut to what they share
// and listed.
func TestTabCompletesSlashCommands(t *testing.T) {
	d := newDriver(t, newFake(), Options{})
	d.typ("/ev")
	d.press("tab")
	if v := d.m.composer.Value(); v != "/evict " {
		t.Fatalf("/ev + Tab = %q", v)
	}
	d.m.composer.SetValue("/re")
	d.press("tab")
	if v := d.m.composer.Value(); v != "/re" {
		t.Fatalf("/re + Tab = %q", v)
	}
	d.waitScreen("/rewind  /resume")
	d.m.composer.SetValue("/zz")
	d.press("tab")
	d.waitScreen("no completion for /zz")
}

// TestMentionsCompleteWorkspaceFiles: @ and Tab complete a workspace file, as git lists them, so
// what .gitignore ignores is never offered.
func TestMentionsCompleteWorkspaceFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	ws := t.TempDir()
	for name, body := range map[string]string{
		"main.go": "package main\n", "docs/readme.md": "# r\n", "docs/release.md": "# r\n",
		"secret.env": "KEY=1\n", "build/out.bin": "x", ".gitignore": "secret.env\nbuild/\n",
	} {
		p := filepath.Join(ws, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	d := newDriver(t, newFake(), Options{Workspace: ws})
	d.typ("look at @ma")
	d.press("tab")
	d.until("the file list", func() bool { return d.m.files != nil })
	d.until("the completion", func() bool { return d.m.composer.Value() == "look at @main.go " })

	d.typ("and @docs/re")
	d.press("tab")
	d.until("the shared part", func() bool {
		return d.m.composer.Value() == "look at @main.go and @docs/rel" || d.m.composer.Value() == "look at @main.go and @docs/re"
	})
	d.waitScreen("@docs/readme.md  @docs/release.md")

	for _, ignored := range []string{"@secret", "@build/o"} {
		d.m.composer.SetValue(ignored)
		d.press("tab")
		if v := d.m.composer.Value(); v != ignored {
			t.Errorf("%s completed to %q: an ignored file was offered", ignored, v)
		}
	}
	d.m.composer.SetValue("@READ")
	d.press("tab")
	if v := d.m.composer.Value(); v != "@docs/readme.md " {
		t.Errorf("a name's start, any case: %q", v)
	}
}
