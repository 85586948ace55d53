package main

import (
	"os"
	"path/filepath"
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

// Sessions started in the same second list newest first, and `rein resume` with no id settles
// the newest: ids sort by the microsecond of their start.
func TestSessionsInStartOrder(t *testing.T) {
	sb := newSandbox(t)
	script := writeScript(t, t.TempDir(), map[string]any{"text": "ok"}, map[string]any{"text": "ok"}, map[string]any{"text": "ok"})
	var ids []string
	for i := 0; i < 3; i++ {
		res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "--json", "hi")...)
		if res.code != 0 {
			t.Fatalf("%s", res)
		}
		i := strings.Index(res.stdout, `"session":"`)
		if i < 0 {
			t.Fatalf("no session in %s", res.stdout)
		}
		id := res.stdout[i+len(`"session":"`):]
		ids = append(ids, id[:strings.IndexByte(id, '"')])
	}
	res := sb.rein(t, "sessions")
	at := func(id string) int { return strings.Index(res.stdout, id) }
	if at(ids[2]) < 0 || !(at(ids[2]) < at(ids[1]) && at(ids[1]) < at(ids[0])) {
		t.Fatalf("sessions %v are not listed newest first:\n%s", ids, res)
	}
	r := sb.rein(t, "resume")
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, ids[2]) {
		t.Fatalf("resume with no id did not take the newest session %s:\n%s", ids[2], r)
	}
}

// rein doctor says what a file is when it is not a record it can judge: empty, or not a rein
// record at all (and never offers to move all of it aside).
func TestDoctorSaysWhatAFileIs(t *testing.T) {
	sb := newSandbox(t)
	dir := t.TempDir()
	empty, notRec := filepath.Join(dir, "empty.jsonl"), filepath.Join(dir, "notes.txt")
	must(t, os.WriteFile(empty, nil, 0o600))
	must(t, os.WriteFile(notRec, []byte("some notes, no newline"), 0o600))
	if r := sb.rein(t, "doctor", empty); r.code != 0 || !strings.Contains(r.stdout, "is empty, it holds no records") {
		t.Fatalf("empty file:\n%s", r)
	}
	for _, args := range [][]string{{"doctor", notRec}, {"doctor", "--repair", notRec}} {
		r := sb.rein(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "is not a rein record") || strings.Contains(r.stdout+r.stderr, "--repair would") {
			t.Fatalf("%v:\n%s", args, r)
		}
	}
	if b, _ := os.ReadFile(notRec); string(b) != "some notes, no newline" {
		t.Fatalf("doctor changed a file that is not a record: %q", b)
	}
	if _, err := os.Stat(notRec + ".torn"); err == nil {
		t.Fatal("doctor moved a file that is not a record aside")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
