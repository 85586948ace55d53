package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// testdata/older/batch-cut-by-crash.jsonl is a record written by rein before tool_finished kept
// a call's result: a batch of three calls killed (SIGKILL) while the second ran, after the first
// had finished. It still loads, and settles as it always did: with no result kept, the finished
// call is answered interrupted like the running one, the third not_executed. Then the session
// goes on.
func TestOlderRecordSettlesAsBefore(t *testing.T) {
	old, err := os.ReadFile(filepath.Join("testdata", "older", "batch-cut-by-crash.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	recs, st, err := replay(old)
	if err != nil {
		t.Fatalf("the older record does not replay: %v", err)
	}
	var finished []*record.ToolFinished
	for _, r := range recs {
		if f, ok := r.Body.(*record.ToolFinished); ok {
			finished = append(finished, f)
		}
	}
	if len(finished) != 1 || finished[0].Content != "" || len(st.Owed()) != 3 {
		t.Fatalf("the fixture is not what it says: %d tool_finished (%+v), owed %v", len(finished), finished, st.Owed())
	}

	sb := newSandbox(t)
	id := st.Meta().Session
	dir := filepath.Join(session.ProjectDir(sb.home, sb.ws), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "record.jsonl")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	res := sb.rein(t, "doctor", path)
	if res.code != 0 || !strings.HasPrefix(res.stdout, "admissible") || !strings.Contains(res.stdout, "left in flight") {
		t.Fatalf("doctor on the older record:\n%s", res)
	}

	// The record names the workspace it was made in; --cwd moves it to the sandbox's.
	if res := sb.rein(t, "resume", id, "--cwd", sb.ws); res.code != 0 {
		t.Fatalf("rein resume:\n%s", res)
	}
	settled, _ := os.ReadFile(path)
	all, _, err := replay(settled)
	if err != nil {
		t.Fatalf("the settled record does not replay: %v", err)
	}
	if err := checkSettle(all[len(recs):], st); err != nil {
		t.Fatalf("what resume appended: %v", err)
	}
	var got []record.Outcome
	for _, r := range all[len(recs)].Body.(*record.ToolResults).Results {
		got = append(got, r.Outcome)
	}
	if want := []record.Outcome{record.Interrupted, record.Interrupted, record.NotExecuted}; !slices.Equal(got, want) {
		t.Fatalf("the cut batch is answered %v, want %v as before", got, want)
	}
	if res := sb.rein(t, "doctor", path); res.code != 0 || !strings.HasPrefix(res.stdout, "admissible") {
		t.Fatalf("doctor after resume:\n%s", res)
	}

	if res := sb.rein(t, "resume", id, "continue", "--sim-delay", "0"); res.code != 0 {
		t.Fatalf("rein resume continue:\n%s", res)
	}
	final, _ := os.ReadFile(path)
	all, st2, err := replay(final)
	if err != nil || st2.Phase() != fold.ReadyForUser {
		t.Fatalf("the continued record: %v (phase %s)", err, st2.Phase())
	}
	if err := checkCalls(all, true); err != nil {
		t.Fatal(err)
	}
}
