// Package todo provides the plan tool, todo: the model keeps a short plan of its work, each item
// pending, in progress or completed, and replaces the whole plan on every call (as Claude Code's
// TodoWrite and Codex's update_plan do). The tool changes nothing outside the session; the plan
// lives in the record as the calls' arguments, and record.Plan derives the plan in force from any
// record, so rein run, rein chat and the web chat show the same plan.
package todo

import (
	"context"
	"encoding/json"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// Tool is the todo tool. Its zero value is ready to use.
type Tool struct{}

var schema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "items": {
      "type": "array",
      "maxItems": 50,
      "description": "The whole plan, in order. It replaces the plan you gave before.",
      "items": {
        "type": "object",
        "properties": {
          "content": {"type": "string", "minLength": 1, "description": "The step, in the imperative: \"Run the tests\"."},
          "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
          "active_form": {"type": "string", "description": "The step while it is in hand: \"Running the tests\"."}
        },
        "required": ["content", "status"],
        "additionalProperties": false
      }
    }
  },
  "required": ["items"],
  "additionalProperties": false
}`)

// Spec describes the tool to the model.
func (Tool) Spec() provider.Tool {
	return provider.Tool{
		Name: record.TodoTool,
		Description: "Keep a short plan of the work in hand, which the person sees as it changes. " +
			"Each call gives the whole plan and replaces the one before. Use it for work of three " +
			"steps or more: give the steps when you start, mark one in_progress before you begin it " +
			"and completed as soon as it is done (one in_progress at a time), and add or drop steps as " +
			"you learn. Skip it for a single quick step.",
		Schema: schema,
	}
}

// Access says the tool only reads: it changes nothing but the session's own plan, so every mode
// allows it.
func (Tool) Access(json.RawMessage) tool.Access {
	return tool.Access{Effect: tool.EffectRead}
}

// Run judges the plan and answers it as a checklist, so the model reads back what it set.
func (Tool) Run(ctx context.Context, call tool.Call) tool.Result {
	if ctx.Err() != nil {
		return tool.Result{Content: "the session was stopped before the plan was set", IsError: true, Outcome: record.NotExecuted}
	}
	items, err := record.ParsePlan(call.Args)
	if err != nil {
		return tool.Result{Content: "the plan was not set: " + err.Error(), IsError: true, Outcome: record.Failed}
	}
	return tool.Result{Content: "The plan is now:\n" + record.FormatPlan(items), Outcome: record.OK}
}
