package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/tool"
	fstool "github.com/reinhq/rein/internal/tool/fs"
	"github.com/reinhq/rein/internal/tool/shell"
	"github.com/reinhq/rein/internal/tool/todo"
)

// The system prompt describes the tools a session has: the name of every tool of the shell, the
// file tools and the doors appears in it. A workspace's AGENTS.md and CLAUDE.md follow it, in that
// order; a blank one is left out.
func TestSystemPromptNamesTheTools(t *testing.T) {
	ws := t.TempDir()
	sh, err := shell.New(ws, shell.Options{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := fstool.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	tools := append([]tool.Tool{sh}, files.Tools()...)
	tools = append(tools, todo.Tool{})
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Spec().Name)
	}
	for _, d := range agent.Doors() {
		names = append(names, d.Spec().Name)
	}
	p := agent.SystemPrompt(ws)
	for _, name := range names {
		if !strings.Contains(p, name) {
			t.Errorf("the system prompt does not describe the tool %s", name)
		}
	}
	if !strings.Contains(p, "the workspace "+ws+" ") || strings.Contains(p, "Project instructions") {
		t.Errorf("the prompt of a workspace with no instructions:\n%s", p)
	}

	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("AGENTS.md", "  run make test before you finish \n")
	write("CLAUDE.md", "\n\t\n")
	p = agent.SystemPrompt(ws)
	if !strings.HasSuffix(p, "\n\nProject instructions from AGENTS.md:\n\nrun make test before you finish") {
		t.Errorf("AGENTS.md is not the prompt's end, trimmed:\n%s", p)
	}
	if strings.Contains(p, "CLAUDE.md") {
		t.Errorf("a blank CLAUDE.md reached the prompt")
	}
	write("CLAUDE.md", "prefer small commits")
	p = agent.SystemPrompt(ws)
	if a, c := strings.Index(p, "from AGENTS.md"), strings.Index(p, "from CLAUDE.md"); a < 0 || c < a {
		t.Errorf("AGENTS.md should come before CLAUDE.md:\n%s", p)
	}
}

// TestInstructionsFromAHostileWorkspace: a cloned repository's AGENTS.md or CLAUDE.md cannot hang
// or flood rein. A named pipe or a link to /dev/zero is left out at once (rein would otherwise
// wait on the pipe, or read the device for ever); a file past 32 KiB is cut there, at a line's
// end, and the prompt says so.
func TestInstructionsFromAHostileWorkspace(t *testing.T) {
	ws := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(ws, "AGENTS.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(ws, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { done <- agent.SystemPrompt(ws) }()
	select {
	case p := <-done:
		if strings.Contains(p, "Project instructions") {
			t.Errorf("a pipe or a device reached the prompt")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SystemPrompt did not return with a named pipe as AGENTS.md and /dev/zero as CLAUDE.md")
	}

	os.Remove(filepath.Join(ws, "AGENTS.md"))
	line := "- keep the build green; run the tests before you say you are done\n"
	big := strings.Repeat(line, 100<<10/len(line))
	if err := os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	p := agent.SystemPrompt(ws)
	i := strings.Index(p, "Project instructions from AGENTS.md")
	if i < 0 {
		t.Fatalf("a large AGENTS.md was left out:\n%.300s", p)
	}
	kept := p[i:]
	if len(kept) > 33<<10 || !strings.Contains(kept, "[rein: AGENTS.md is 99 KiB") || strings.Contains(kept, "you say you\n") {
		t.Fatalf("a 100 KiB AGENTS.md: %d bytes kept, ending %q", len(kept), kept[max(len(kept)-200, 0):])
	}
}
