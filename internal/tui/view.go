package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/reinhq/rein/internal/api"
)

// The screen, top to bottom: the scrollback (or the session picker), the approval panel while a
// call waits for the person (approval.go), a rule, the composer, and the status line.

// picker is the session picker: a list of conversations to open.
type picker struct {
	items  []api.View
	cursor int
}

func (m *Model) pickerKey(s string) tea.Cmd {
	p := m.picker
	switch s {
	case "up", "ctrl+p", "k":
		if p.cursor > 0 {
			p.cursor--
		}
	case "down", "ctrl+n", "j":
		if p.cursor < len(p.items)-1 {
			p.cursor++
		}
	case "home", "g":
		p.cursor = 0
	case "end", "G":
		p.cursor = len(p.items) - 1
	case "enter":
		v := p.items[p.cursor]
		m.picker = nil
		return m.open(v)
	case "esc", "ctrl+c", "q":
		m.picker = nil
	}
	return nil
}

func (p *picker) lines(width, height int, current string) []string {
	out := []string{sty.bold.Render("Resume a conversation") + sty.dim.Render("  ↑↓ choose · Enter open · Esc new conversation"), ""}
	room := height - len(out)
	first := 0
	if p.cursor >= room {
		first = p.cursor - room + 1
	}
	for i := first; i < len(p.items) && len(out) < height; i++ {
		row := sessionRow(p.items[i], current)
		if i == p.cursor {
			row = sty.accent.Render("›") + row[1:]
		}
		out = append(out, ansi.Truncate(row, width, "…"))
	}
	return out
}

// layout sizes the composer to the window.
func (m *Model) layout() {
	m.composer.SetWidth(max(m.width-2, 8))
}

// scrollHeight is the number of rows the scrollback has.
func (m *Model) scrollHeight() int {
	w := max(m.width, 20)
	return max(m.height-m.composer.Height()-2-len(m.panelLines(w))-len(m.planLines(w)), 1)
}

// pending are the lines of messages sent but not yet in the record: the outbox, and submissions
// the host holds, waiting for the running exchange.
func (m *Model) pending(width int) []string {
	var out []string
	ops := map[string]bool{}
	for _, s := range m.outbox {
		ops[s.op] = true
		out = append(out, userLines(s.text, "sending", width)...)
	}
	for _, s := range m.state.Submissions {
		if s.State != api.Accepted || ops[s.Op] {
			continue
		}
		note := "waiting: steering at the next step"
		if s.Queue {
			note = "queued: after this exchange"
		}
		for _, l := range userLines(s.Text, note, width) {
			out = append(out, sty.dim.Render(ansi.Strip(l)))
		}
	}
	return out
}

// visible returns n lines of the scrollback, skip lines up from its bottom, and how many lines
// lie below and above the window.
func (m *Model) visible(width, n, skip int) (lines []string) {
	need := n + skip
	var rev []string // lines in reverse order, bottom first
	push := func(ls []string, spaced bool) {
		for i := len(ls) - 1; i >= 0 && len(rev) < need; i-- {
			rev = append(rev, ls[i])
		}
		if spaced && len(rev) < need {
			rev = append(rev, "")
		}
	}
	if p := m.pending(width); len(p) > 0 {
		push(p, true)
	}
	if m.sb.live.active() {
		push(m.sb.live.lines(width), true)
	}
	for i := len(m.sb.entries) - 1; i >= 0 && len(rev) < need; i-- {
		e := m.sb.entries[i]
		push(e.lines(width, m.expand), spaced(e.kind) && i > 0)
	}
	if skip > len(rev) {
		skip = len(rev)
	}
	rev = rev[skip:]
	lines = make([]string, 0, n)
	for i := min(len(rev), n) - 1; i >= 0; i-- {
		lines = append(lines, rev[i])
	}
	return lines
}

// totalLines counts the scrollback's lines at the current width.
func (m *Model) totalLines() int {
	w := m.width
	n := len(m.pending(w)) + 1
	if m.sb.live.active() {
		n += len(m.sb.live.lines(w)) + 1
	}
	for i, e := range m.sb.entries {
		n += len(e.lines(w, m.expand))
		if spaced(e.kind) && i > 0 {
			n++
		}
	}
	return n
}

func (m *Model) totalLinesIf(cond bool) int {
	if !cond {
		return 0
	}
	return m.totalLines()
}

// View draws the screen.
func (m *Model) View() tea.View {
	content, cur := m.draw()
	v := tea.NewView(content)
	v.AltScreen = true
	v.Cursor = cur
	v.WindowTitle = "rein chat"
	if m.title != "" {
		v.WindowTitle = "rein · " + m.title
	}
	return v
}

// draw renders the screen as text, and where the cursor goes.
func (m *Model) draw() (string, *tea.Cursor) {
	w := max(m.width, 20)
	comp := strings.Split(m.composer.View(), "\n")
	h := m.scrollHeight()
	panel := append(m.planLines(w), m.panelLines(w)...)
	var body []string
	if m.picker != nil {
		body = m.picker.lines(w, h, m.conv)
	} else {
		body = m.visible(w, h, m.scroll)
	}
	var b strings.Builder
	b.Grow((h + len(comp) + 2) * (w + 16))
	pad := h - len(body)
	if m.picker != nil {
		pad = 0 // the picker reads from the top
	}
	for i := 0; i < pad; i++ {
		b.WriteByte('\n')
	}
	for _, l := range body {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	for i := pad + len(body); i < h; i++ {
		b.WriteByte('\n')
	}
	for _, l := range panel {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(m.rule(w))
	b.WriteByte('\n')
	for i, l := range comp {
		if i == 0 {
			b.WriteString(sty.userBar.Render("› "))
		} else {
			b.WriteString("  ")
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(m.status(w))
	var cur *tea.Cursor
	if m.picker == nil {
		if c := m.composer.Cursor(); c != nil {
			c.Position.X += 2
			c.Position.Y += h + len(panel) + 1
			cur = c
		}
	}
	return b.String(), cur
}

func (m *Model) rule(w int) string {
	if m.scroll == 0 {
		return sty.dim.Render(strings.Repeat("─", w))
	}
	label := fmt.Sprintf("── ↓ %d more lines below (PgDn, Esc) ", m.scroll)
	return sty.dim.Render(label + strings.Repeat("─", max(w-ansi.StringWidth(label), 0)))
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// status is the status line: the working state, the retry countdown, the model, the context
// used of the window; hints on the right.
func (m *Model) status(w int) string {
	var left []string
	now := m.opt.Now()
	a, asking := m.awaiting()
	if held := m.heldStatus(); held != "" {
		left = append(left, held)
	} else if asking {
		left = append(left, sty.warn.Render("⚠ approve "+a.Name+"?"))
	} else if m.working() {
		frame := 0
		if !m.workingSince.IsZero() {
			frame = int(now.Sub(m.workingSince) / tickEvery)
		}
		s := sty.accent.Render(spinner[frame%len(spinner)]) + " working"
		if !m.workingSince.IsZero() {
			s += sty.dim.Render(" " + elapsed(now.Sub(m.workingSince)))
		}
		left = append(left, s)
	} else {
		left = append(left, sty.dim.Render("ready"))
	}
	if !m.retryAt.IsZero() {
		if d := m.retryAt.Sub(now); d > 0 {
			left = append(left, sty.warn.Render(fmt.Sprintf("%s: retrying in %.1fs", m.retryClass, d.Seconds())))
		}
	}
	if m.window > 0 {
		ctx := fmt.Sprintf("%s/%s ctx", compact(m.meter.used), compact(m.window))
		if m.meter.used > 0 && !m.meter.exact {
			ctx = "~" + ctx
		}
		left = append(left, ctx+fmt.Sprintf(" (%d%%)", m.meter.used*100/m.window))
	}
	if m.model != "" {
		left = append(left, m.model)
	}
	if t := m.tally.total; t.n > 0 && t.priced {
		left = append(left, money(t.cost))
	}
	if m.sandbox != "" {
		left = append(left, "sandbox "+m.sandbox)
	}
	right := "/help"
	switch {
	case m.search != nil:
		right = m.searchLine()
	case m.flash != "":
		right = m.flash
	case asking && m.panelFocused():
		right = "Enter answer · Esc stop"
	case asking:
		right = "Tab answer · Esc stop"
	case m.working():
		right = "Esc stop"
	case m.conv != "":
		right = m.conv
	}
	right = ansi.Truncate(right, w/2, "…")
	room := w - ansi.StringWidth(right) - 1
	// The parts go in order of weight; what does not fit is left out whole, the model first.
	sep := sty.dim.Render(" · ")
	l := left[0]
	for _, p := range left[1:] {
		if ansi.StringWidth(l+sep+p) >= room {
			break
		}
		l += sep + p
	}
	l = ansi.Truncate(l, room-1, "…")
	gap := w - ansi.StringWidth(l) - ansi.StringWidth(right)
	return l + strings.Repeat(" ", max(gap, 1)) + sty.dim.Render(right)
}

func elapsed(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
