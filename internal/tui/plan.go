package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/reinhq/rein/internal/record"
)

// The plan panel: the agent's plan (its todo calls, followed by record.Plan as the records arrive)
// drawn between the scrollback and the approval panel while it has a step not yet done. A plan
// of more than planRows steps shows the rows around the step in hand and says how many are
// folded.

// planRows is the most steps the panel shows.
const planRows = 8

// planLines draws the plan panel, or nothing when there is no plan or every step is done. The
// session picker, while open, has the screen.
func (m *Model) planLines(width int) []string {
	items := m.sb.plan.Items()
	if len(items) == 0 || m.picker != nil {
		return nil
	}
	done, doing := 0, -1
	for i, it := range items {
		switch it.Status {
		case record.PlanCompleted:
			done++
		case record.PlanInProgress:
			doing = i
		}
	}
	if done == len(items) {
		return nil
	}
	head := fmt.Sprintf("── plan %d/%d done ", done, len(items))
	out := []string{sty.dim.Render(head + strings.Repeat("─", max(width-ansi.StringWidth(head), 0)))}
	first := 0
	if len(items) > planRows {
		first = min(max(doing-planRows/2, 0), len(items)-planRows)
	}
	last := min(first+planRows, len(items))
	if first > 0 {
		out = append(out, sty.dim.Render(fmt.Sprintf("  … %d above", first)))
	}
	for _, it := range items[first:last] {
		var row string
		switch it.Status {
		case record.PlanCompleted:
			row = sty.ok.Render("  ✔ ") + sty.dim.Render(it.Content)
		case record.PlanInProgress:
			text := it.Content
			if it.ActiveForm != "" {
				text = it.ActiveForm
			}
			row = sty.accent.Render("  ▶ ") + sty.bold.Render(text)
		default:
			row = "  ☐ " + it.Content
		}
		out = append(out, ansi.Truncate(row, width, "…"))
	}
	if last < len(items) {
		out = append(out, sty.dim.Render(fmt.Sprintf("  … %d more", len(items)-last)))
	}
	return out
}
