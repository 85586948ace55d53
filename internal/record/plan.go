package record

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The agent's plan is kept in the record as the todo tool's calls: each call's arguments are the
// whole plan, replacing the one before (as Claude Code's TodoWrite and Codex's update_plan work).
// No kind of its own records it: the assistant message that makes the call and the tool result
// that accepts it are the record of it, so every reader of a record (the console, the terminal UI
// through the host's events, doctor) derives the same plan with a Plan.

// TodoTool is the name of the plan tool whose calls carry the plan.
const TodoTool = "todo"

// PlanStatus is the state of one item of a plan.
type PlanStatus string

// The states of a plan item.
const (
	PlanPending    PlanStatus = "pending"
	PlanInProgress PlanStatus = "in_progress"
	PlanCompleted  PlanStatus = "completed"
)

// PlanItem is one step of the agent's plan: what it is, its state, and optionally the words for
// it while it is in hand ("Running the tests" for "Run the tests").
type PlanItem struct {
	Content    string     `json:"content"`
	Status     PlanStatus `json:"status"`
	ActiveForm string     `json:"active_form,omitempty"`
}

// PlanArgs is the argument object of a todo call.
type PlanArgs struct {
	Items []PlanItem `json:"items"`
}

// MaxPlanItems bounds a plan: a longer one is a list of work, not a plan.
const MaxPlanItems = 50

// ParsePlan reads a todo call's arguments and judges them: every item has content and a known
// status, at most one is in progress, and there are at most MaxPlanItems. The error is worded for
// the model, which must correct its call.
func ParsePlan(args json.RawMessage) ([]PlanItem, error) {
	var a PlanArgs
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("the plan is not an object {\"items\": [{\"content\", \"status\", \"active_form\"?}]}: %w", err)
	}
	if len(a.Items) > MaxPlanItems {
		return nil, fmt.Errorf("the plan has %d items; keep it to %d or fewer", len(a.Items), MaxPlanItems)
	}
	var doing []int
	for i, it := range a.Items {
		if strings.TrimSpace(it.Content) == "" {
			return nil, fmt.Errorf("item %d has no content: say what the step is", i+1)
		}
		switch it.Status {
		case PlanPending, PlanCompleted:
		case PlanInProgress:
			doing = append(doing, i+1)
		default:
			return nil, fmt.Errorf("item %d has status %q; a status is pending, in_progress or completed", i+1, it.Status)
		}
	}
	if len(doing) > 1 {
		return nil, fmt.Errorf("items %v are all in_progress; keep one step in progress at a time", doing)
	}
	if a.Items == nil {
		a.Items = []PlanItem{}
	}
	return a.Items, nil
}

// Plan follows a record's todo calls and says the plan in force: the items of the newest todo
// call answered ok, unless the turn that made it was withdrawn (rewound or cleared), when the plan
// before it stands again. Feed it every record in order with Apply. Its zero value is an empty
// plan.
type Plan struct {
	// made are the accepted plans, oldest first, each with the turn whose call made it.
	made []madePlan
	// asked are the todo calls made and not yet answered, by call id.
	asked map[string]madePlan
}

type madePlan struct {
	turn  int64
	items []PlanItem
}

// Apply takes one record's payload into the plan and reports whether the plan in force changed.
func (p *Plan) Apply(body Payload) bool {
	switch b := body.(type) {
	case *AssistantMessage:
		for _, part := range b.Parts {
			if part.Type != PartToolCall || part.Name != TodoTool {
				continue
			}
			items, err := ParsePlan(part.Args)
			if err != nil {
				continue
			}
			if p.asked == nil {
				p.asked = map[string]madePlan{}
			}
			p.asked[part.CallID] = madePlan{turn: b.Turn, items: items}
		}
	case *ToolResults:
		changed := false
		for _, r := range b.Results {
			m, ok := p.asked[r.CallID]
			if !ok {
				continue
			}
			delete(p.asked, r.CallID)
			if r.Outcome == OK && !r.IsError {
				p.made = append(p.made, m)
				changed = true
			}
		}
		return changed
	case *Rewound:
		return p.withdraw(b.Anchor)
	case *Cleared:
		return p.withdraw(0)
	}
	return false
}

// withdraw forgets the plans made by turns from anchor on.
func (p *Plan) withdraw(anchor int64) bool {
	n := len(p.made)
	for n > 0 && p.made[n-1].turn >= anchor {
		n--
	}
	changed := n != len(p.made)
	p.made = p.made[:n]
	clear(p.asked)
	return changed
}

// Items returns the plan in force (nil when there is none). The slice is the plan's own: do not
// change it.
func (p *Plan) Items() []PlanItem {
	if len(p.made) == 0 {
		return nil
	}
	return p.made[len(p.made)-1].items
}

// FormatPlan renders a plan as a checklist, one item a line: "[x]" done, "[>]" in progress (with
// its active form when it has one), "[ ]" pending.
func FormatPlan(items []PlanItem) string {
	if len(items) == 0 {
		return "(the plan is empty)"
	}
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch it.Status {
		case PlanCompleted:
			b.WriteString("[x] ")
		case PlanInProgress:
			b.WriteString("[>] ")
		default:
			b.WriteString("[ ] ")
		}
		b.WriteString(it.Content)
		if it.Status == PlanInProgress && it.ActiveForm != "" && it.ActiveForm != it.Content {
			b.WriteString(" (" + it.ActiveForm + ")")
		}
	}
	return b.String()
}
