package main

import (
	"strings"
	"testing"
)

// Human output tells the truth: a stream attempt that failed and was retried is marked as
// discarded where its text went; a provider error is printed once, with its status or none; the
// turn limit is said once, with the way on.
func TestOutputTellsTheTruth(t *testing.T) {
	sb := newSandbox(t)
	t.Run("discarded attempt", func(t *testing.T) {
		script := writeScript(t, t.TempDir(),
			map[string]any{"text": "partial answer that will be cut", "cut": map[string]any{"after_deltas": 3}},
			map[string]any{"text": "the real answer."})
		res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "hi")...)
		if res.code != 0 {
			t.Fatalf("%s", res)
		}
		i, j := strings.Index(res.stdout, "discarded"), strings.Index(res.stdout, "the real answer.")
		if !strings.HasPrefix(res.stdout, "partial") || i < 0 || j < i {
			t.Fatalf("the discarded attempt is not marked before the real answer:\n%s", res)
		}
		if strings.Contains(res.stderr, "(0)") {
			t.Fatalf("a status of 0 was printed:\n%s", res)
		}
	})
	t.Run("provider error once", func(t *testing.T) {
		script := writeScript(t, t.TempDir(), map[string]any{"status": 400, "message": "a distinctive refusal"})
		res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "hi")...)
		if res.code != 1 || strings.Count(res.stderr, "a distinctive refusal") != 1 || !strings.Contains(res.stderr, "(400)") {
			t.Fatalf("the provider's error is not printed exactly once with its status:\n%s", res)
		}
	})
	t.Run("turn limit once", func(t *testing.T) {
		script := writeScript(t, t.TempDir(),
			map[string]any{"tool_calls": []map[string]any{bash("echo 1")}},
			map[string]any{"tool_calls": []map[string]any{bash("echo 2")}})
		res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "--max-turns", "1", "hi")...)
		if res.code != 3 || strings.Count(res.stderr, "limit of 1 turns") != 1 || !strings.Contains(res.stderr, "rein resume ") {
			t.Fatalf("the turn limit is not said exactly once with the way on:\n%s", res)
		}
	})
}
