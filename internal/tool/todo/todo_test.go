package todo_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/todo"
	"github.com/reinhq/rein/internal/tool/tooltest"
)

func TestConformance(t *testing.T) {
	tooltest.Conformance(t, todo.Tool{},
		`{"items":[]}`,
		`{"items":[{"content":"Read the parser","status":"completed"},{"content":"Fix the bug","status":"in_progress","active_form":"Fixing the bug"},{"content":"Run the tests","status":"pending"}]}`,
	)
}

func TestRun(t *testing.T) {
	reg, err := tool.NewRegistry(todo.Tool{})
	if err != nil {
		t.Fatal(err)
	}
	r := tool.Runner{Tools: reg, Policy: tool.Policy{Mode: tool.ModeReadOnly}}
	for _, tc := range []struct {
		args    string
		outcome record.Outcome
		want    string
	}{
		{`{"items":[{"content":"a","status":"completed"},{"content":"b","status":"in_progress","active_form":"doing b"},{"content":"c","status":"pending"}]}`,
			record.OK, "The plan is now:\n[x] a\n[>] b (doing b)\n[ ] c"},
		{`{"items":[]}`, record.OK, "(the plan is empty)"},
		{`{"items":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`,
			record.Failed, "items [1 2] are all in_progress; keep one step in progress at a time"},
		{`{"items":[{"content":"a","status":"done"}]}`, record.Failed, `status`},
		{`{"items":[{"content":"  ","status":"pending"}]}`, record.Failed, "item 1 has no content"},
		{`{"items":[{"content":"a"}]}`, record.Failed, "status"},
		{`{}`, record.Failed, "items"},
		{`{"items":[{"content":"a","status":"pending","extra":1}]}`, record.Failed, "extra"},
	} {
		res := r.Run(context.Background(), tool.Call{ID: "c1", Name: "todo", Args: json.RawMessage(tc.args)})
		if res.Outcome != tc.outcome || !strings.Contains(res.Content, tc.want) {
			t.Errorf("%s: got %s %q, want %s containing %q", tc.args, res.Outcome, res.Content, tc.outcome, tc.want)
		}
	}
}

// A plan of more than MaxPlanItems items is refused by the schema before the tool runs.
func TestTooLong(t *testing.T) {
	reg, _ := tool.NewRegistry(todo.Tool{})
	items := make([]record.PlanItem, record.MaxPlanItems+1)
	for i := range items {
		items[i] = record.PlanItem{Content: "x", Status: record.PlanPending}
	}
	args, _ := json.Marshal(record.PlanArgs{Items: items})
	if err := reg.Check(tool.Call{Name: "todo", Args: args}); err == nil {
		t.Fatal("a plan of 51 items passed the schema")
	}
	if _, err := record.ParsePlan(args); err == nil {
		t.Fatal("a plan of 51 items passed ParsePlan")
	}
}
