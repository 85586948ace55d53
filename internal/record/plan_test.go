package record_test

import (
	"encoding/json"
	"testing"

	"github.com/reinhq/rein/internal/record"
)

func todoCall(turn int64, id, args string) *record.AssistantMessage {
	return &record.AssistantMessage{Turn: turn, StopReason: "tool_use", Parts: []record.Part{
		{Type: record.PartToolCall, CallID: id, Name: record.TodoTool, Args: json.RawMessage(args)},
	}}
}

func answer(id string, o record.Outcome) *record.ToolResults {
	return &record.ToolResults{Results: []record.ToolResult{{CallID: id, Content: "x", Outcome: o, IsError: o != record.OK}}}
}

func contents(items []record.PlanItem) []string {
	var s []string
	for _, it := range items {
		s = append(s, it.Content+":"+string(it.Status))
	}
	return s
}

func TestPlanFollowsTheRecord(t *testing.T) {
	var p record.Plan
	steps := []struct {
		body    record.Payload
		changed bool
		want    []string
	}{
		{todoCall(2, "a", `{"items":[{"content":"one","status":"in_progress"},{"content":"two","status":"pending"}]}`), false, nil},
		{answer("a", record.OK), true, []string{"one:in_progress", "two:pending"}},
		// A call refused (denied, failed) leaves the plan as it was.
		{todoCall(4, "b", `{"items":[{"content":"three","status":"pending"}]}`), false, []string{"one:in_progress", "two:pending"}},
		{answer("b", record.Denied), false, []string{"one:in_progress", "two:pending"}},
		// A call whose arguments are no plan is never one.
		{todoCall(4, "c", `{"items":[{"content":"x","status":"bogus"}]}`), false, []string{"one:in_progress", "two:pending"}},
		{answer("c", record.OK), false, []string{"one:in_progress", "two:pending"}},
		{todoCall(6, "d", `{"items":[{"content":"one","status":"completed"},{"content":"two","status":"in_progress"}]}`), false, []string{"one:in_progress", "two:pending"}},
		{answer("d", record.OK), true, []string{"one:completed", "two:in_progress"}},
		// Rewinding the turn that made the plan brings back the one before.
		{&record.Rewound{Anchor: 5}, true, []string{"one:in_progress", "two:pending"}},
		{&record.Rewound{Anchor: 9}, false, []string{"one:in_progress", "two:pending"}},
		{&record.Cleared{}, true, nil},
	}
	for i, s := range steps {
		if got := p.Apply(s.body); got != s.changed {
			t.Errorf("step %d (%s): changed %v, want %v", i, s.body.Kind(), got, s.changed)
		}
		if got := contents(p.Items()); !equal(got, s.want) {
			t.Errorf("step %d (%s): plan %v, want %v", i, s.body.Kind(), got, s.want)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFormatPlan(t *testing.T) {
	got := record.FormatPlan([]record.PlanItem{
		{Content: "Read", Status: record.PlanCompleted},
		{Content: "Fix", Status: record.PlanInProgress, ActiveForm: "Fixing"},
		{Content: "Test", Status: record.PlanPending, ActiveForm: "Testing"},
	})
	if want := "[x] Read\n[>] Fix (Fixing)\n[ ] Test"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func FuzzParsePlan(f *testing.F) {
	f.Add(`{"items":[{"content":"a","status":"pending"}]}`)
	f.Add(`{"items":null}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, s string) {
		items, err := record.ParsePlan(json.RawMessage(s))
		if err != nil {
			return
		}
		doing := 0
		for _, it := range items {
			if it.Status == record.PlanInProgress {
				doing++
			}
		}
		if doing > 1 || len(items) > record.MaxPlanItems {
			t.Fatalf("accepted %q", s)
		}
	})
}
