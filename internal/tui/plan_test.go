package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEndToEndPlan: in a real rein chat, the plan the model sets with the todo tool shows in a
// panel above the composer while it works, follows each update, and leaves once every step is
// done.
func TestEndToEndPlan(t *testing.T) {
	needTmux(t)
	bin := reinBin(t)
	_, ws, env := e2eSandbox(t)
	todo := func(items ...map[string]any) map[string]any {
		return map[string]any{"name": "todo", "arguments": map[string]any{"items": items}}
	}
	item := func(content, status, active string) map[string]any {
		return map[string]any{"content": content, "status": status, "active_form": active}
	}
	words := strings.Repeat("working through the plan one step at a time ", 30)
	b, _ := json.Marshal(map[string]any{"steps": []any{
		map[string]any{"text": "A plan.", "tool_calls": []any{todo(item("Read the notes", "in_progress", "Reading the notes"), item("Write a summary", "pending", "Writing a summary"))}},
		map[string]any{"text": "Read.", "tool_calls": []any{todo(item("Read the notes", "completed", ""), item("Write a summary", "in_progress", "Writing a summary"))}},
		map[string]any{"text": "Summary: " + words, "delay_ms": 30},
		map[string]any{"text": "All done.", "tool_calls": []any{todo(item("Read the notes", "completed", ""), item("Write a summary", "completed", ""))}},
		map[string]any{"text": "Finished."},
	}})
	script := filepath.Join(filepath.Dir(ws), "script.json")
	if err := os.WriteFile(script, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := startPane(t, ws, env, 100, 30, bin, "chat", "--provider", "sim", "--sim-delay", "1ms", "--sim-script", script)
	p.wait(10*time.Second, "Send a message", "ready")
	p.text("summarize the notes")
	p.keys("Enter")
	scr := p.wait(20*time.Second, "── plan 1/2 done", "✔ Read the notes", "▶ Writing a summary", "working")
	// The panel sits above the composer's rule: the plan's last row comes after the scrollback.
	if strings.Index(scr, "▶ Writing a summary") < strings.Index(scr, "A plan.") {
		t.Errorf("the plan panel is not below the scrollback:\n%s", scr)
	}
	p.wait(20*time.Second, "ready")
	// The next exchange completes the plan: the panel goes.
	p.text("finish")
	p.keys("Enter")
	scr = p.wait(20*time.Second, "Finished.", "ready")
	if strings.Contains(scr, "── plan") {
		t.Errorf("a plan whose every step is done is still shown:\n%s", scr)
	}
	p.keys("C-c", "C-c")
	p.waitGone(10 * time.Second)
}
