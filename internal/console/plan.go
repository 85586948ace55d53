package console

import (
	"strings"

	"github.com/reinhq/rein/internal/record"
)

// planRecord takes one record into the plan the session's todo calls keep and prints the plan
// when it changed: with --json as {"type":"plan","items":[...]}, else as a checklist under the
// tool's result.
func (p *Printer) planRecord(body record.Payload) {
	if !p.plan.Apply(body) {
		return
	}
	items := p.plan.Items()
	if p.json {
		if items == nil {
			items = []record.PlanItem{}
		}
		p.emit("type", "plan", "items", items)
		return
	}
	p.line(p.out, "  plan:\n    %s\n", strings.ReplaceAll(record.FormatPlan(items), "\n", "\n    "))
}

// searches prints the provider's own web searches a reply made (server tool parts), a line each:
// what was searched for and what was found.
func (p *Printer) searches(b *record.AssistantMessage) {
	for _, part := range b.Parts {
		if part.Type == record.PartServerTool && part.Text != "" {
			p.line(p.out, "⌕ %s\n", part.Text)
		}
	}
}
