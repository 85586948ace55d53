package main

import (
	"strings"
	"testing"
)

// TestRunShowsThePlan: a real rein run whose model (the simulator) sets a plan with the todo tool
// and then updates it shows each plan as it is set, as a checklist and as {"type":"plan"} lines,
// and the simulator, which validates every request, accepts the calls' results.
func TestRunShowsThePlan(t *testing.T) {
	sb := newSandbox(t)
	todo := func(items ...map[string]any) map[string]any {
		return map[string]any{"name": "todo", "arguments": map[string]any{"items": items}}
	}
	item := func(content, status string) map[string]any {
		return map[string]any{"content": content, "status": status}
	}
	script := writeScript(t, t.TempDir(),
		map[string]any{"text": "Planning.", "tool_calls": []any{todo(item("Read the code", "in_progress"), item("Fix it", "pending"))}},
		map[string]any{"text": "Read it.", "tool_calls": []any{todo(item("Read the code", "completed"), item("Fix it", "in_progress"))}},
		map[string]any{"text": "Done."},
	)
	res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "fix it")...)
	if res.code != 0 {
		t.Fatalf("rein run: %s", res)
	}
	for _, want := range []string{"  plan:\n    [>] Read the code\n    [ ] Fix it\n", "  plan:\n    [x] Read the code\n    [>] Fix it\n"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("stdout lacks %q\n%s", want, res)
		}
	}
	res = sb.rein(t, append(append([]string{"run", "--json"}, simArgs(script)...), "fix it")...)
	if res.code != 0 {
		t.Fatalf("rein run --json: %s", res)
	}
	want := `{"type":"plan","items":[{"content":"Read the code","status":"completed"},{"content":"Fix it","status":"in_progress"}]}`
	if !strings.Contains(res.stdout, want+"\n") || strings.Count(res.stdout, `{"type":"plan"`) != 2 {
		t.Errorf("--json: want two plan lines, the second %s\n%s", want, res)
	}
}
