package tui

// The approval panel: a tool call waiting for the person's approval (permission mode ask) is
// shown in a panel of its own between the scrollback and the composer, with its arguments in
// readable form (a command as it would run, a file change as the diff the host read when it
// asked) and the choices Allow once, Allow for this conversation (when the host offers rules that
// would cover calls like it, named in the panel) and Deny.
//
// What is promised: no keystroke typed into the composer answers a call. The panel takes the
// keys only when the person gives them to it with Tab (a key that never starts a sentence); there
// the arrows choose and Enter answers, and anything else — a letter, a paste, Backspace — goes
// back to the composer, focus with it. The focus belongs to one call: if the call shown changes
// (answered elsewhere, stopped, another one first), the focus goes back to the composer, so an
// Enter meant for one call never answers another. After an answer the focus is the composer's
// again, so a key held down cannot answer the next call too. Esc stops, as everywhere: the Stop
// ends the wait.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/reinhq/rein/internal/api"
)

// choice is one answer the panel offers.
type choice struct {
	label string
	allow bool
	scope string // "" for the call alone, or "conversation"
}

// pickAllow is the choice under the cursor when the panel takes the focus: Allow once.
const pickAllow = 0

// choicesFor are the answers the panel offers for a, in the order shown: Allow once, Allow for
// this conversation when a has rules to grant and this client can send the scope, and Deny.
func (m *Model) choicesFor(a api.Approval) []choice {
	cs := []choice{{label: "Allow once", allow: true}}
	if _, ok := m.appr.(ScopedApprovals); ok && len(a.Rules) > 0 && m.caps[api.CapApprovalScope] {
		cs = append(cs, choice{label: "Allow for this conversation", allow: true, scope: "conversation"})
	}
	return append(cs, choice{label: "Deny"})
}

// ScopedApprovals is the optional part of an Approvals that sends an answer's scope (capability
// api.CapApprovalScope).
type ScopedApprovals interface {
	ApproveScoped(ctx context.Context, id, op, callID string, allow bool, scope string) error
}

// panel is the approval panel's focus: the call it was given to, and the choice under the
// cursor. The zero value is a panel without the focus.
type panel struct {
	call string // the waiting call the panel has the focus for; "" when the composer has it
	pick int
}

// canAnswer says whether this client can answer approvals on this host.
func (m *Model) canAnswer() bool { return m.appr != nil && m.caps[api.CapApprovals] }

// panelFocused says whether the panel has the keys: it was given them for the call it shows.
func (m *Model) panelFocused() bool {
	if m.panel.call == "" {
		return false
	}
	a, ok := m.awaiting()
	return ok && a.CallID == m.panel.call
}

// syncPanel gives the focus back to the composer when the call the panel was focused for is no
// longer the one it shows.
func (m *Model) syncPanel() {
	if m.panel.call != "" && !m.panelFocused() {
		m.blurPanel()
	}
}

func (m *Model) focusPanel(a api.Approval) tea.Cmd {
	if !m.canAnswer() {
		m.sb.notice(warn, "this host cannot take an answer to %s (it does not advertise %s)", a.Name, api.CapApprovals)
		return nil
	}
	m.panel = panel{call: a.CallID, pick: pickAllow}
	m.composer.Blur()
	return nil
}

func (m *Model) blurPanel() {
	m.panel = panel{}
	m.composer.Focus()
}

// panelKey handles a key while the panel has the focus; handled false passes the key on to the
// composer's handling (the focus has gone back to it unless the key only scrolls or stops).
func (m *Model) panelKey(a api.Approval, s string) (cmd tea.Cmd, handled bool) {
	switch s {
	case "left", "up":
		m.panel.pick = max(m.panel.pick-1, 0)
		return nil, true
	case "right", "down":
		m.panel.pick = min(m.panel.pick+1, len(m.choicesFor(a))-1)
		return nil, true
	case "tab", "shift+tab":
		m.blurPanel()
		return nil, true
	case "enter":
		cs := m.choicesFor(a)
		c := cs[min(m.panel.pick, len(cs)-1)]
		m.blurPanel()
		return m.answerScoped(a, c.allow, c.scope), true
	case "esc", "ctrl+c", "pgup", "pgdown", "ctrl+o", "ctrl+l":
		return nil, false // they stop or scroll; the Stop ends the wait and with it the focus
	}
	m.blurPanel()
	return nil, false
}

// answer allows or denies a call waiting for approval.
func (m *Model) answer(a api.Approval, allow bool) tea.Cmd { return m.answerScoped(a, allow, "") }

// answerScoped answers a call for itself (scope "") or, allowing it, for the conversation.
func (m *Model) answerScoped(a api.Approval, allow bool, scope string) tea.Cmd {
	if !m.canAnswer() {
		m.sb.notice(warn, "this host cannot take an answer to %s (it does not advertise %s)", a.Name, api.CapApprovals)
		return nil
	}
	if m.answering == nil {
		m.answering = map[string]bool{}
	}
	m.answering[a.CallID] = true
	ap, opID, callID := m.appr, m.opt.NewOp(), a.CallID
	return m.enqueue(op{kind: opApprove, run: func(ctx context.Context, conv string) tea.Msg {
		if sa, ok := ap.(ScopedApprovals); ok && scope != "" {
			return approvedMsg{callID, allow, sa.ApproveScoped(ctx, conv, opID, callID, allow, scope)}
		}
		return approvedMsg{callID, allow, ap.Approve(ctx, conv, opID, callID, allow)}
	}})
}

// awaiting returns the oldest tool call waiting for the person's approval that this client has
// not answered yet.
func (m *Model) awaiting() (api.Approval, bool) {
	for _, a := range m.state.Approvals {
		if !m.answering[a.CallID] {
			return a, true
		}
	}
	return api.Approval{}, false
}

// forgetAnswered drops the answers the published state no longer waits on.
func (m *Model) forgetAnswered() {
	for id := range m.answering {
		if !slices.ContainsFunc(m.state.Approvals, func(a api.Approval) bool { return a.CallID == id }) {
			delete(m.answering, id)
		}
	}
}

// panelLines draws the panel for the call awaiting, or nothing when none waits: a header naming
// the tool and what it would do, its arguments, and the choices with the keys that answer. The
// session picker, while open, has the screen.
func (m *Model) panelLines(width int) []string {
	a, ok := m.awaiting()
	if !ok || m.picker != nil {
		return nil
	}
	focused := m.panelFocused()
	what, body := readableCall(a.Name, a.Args)
	if a.Diff != "" {
		// What would change, as the host read the file when it asked: the diff, whole.
		body = diffLinesOf(a.Diff, width-4, 0)
	}
	cs := m.choicesFor(a)
	if len(cs) == 3 {
		body = append(body, sty.dim.Render("for this conversation: ")+printable(strings.Join(a.Rules, " · ")))
	}

	more := 0
	for _, w := range m.state.Approvals {
		if !m.answering[w.CallID] && w.CallID != a.CallID {
			more++
		}
	}
	head := "── ⚠ " + what + " "
	if more > 0 {
		tail := fmt.Sprintf(" %d more waiting ──", more)
		if width < 60 {
			tail = fmt.Sprintf(" +%d ──", more)
		}
		head = ansi.Truncate(head, max(width-ansi.StringWidth(tail)-2, 8), "… ")
		head += strings.Repeat("─", max(width-ansi.StringWidth(head)-ansi.StringWidth(tail), 0)) + tail
	} else {
		head = ansi.Truncate(head, width, "…")
		head += strings.Repeat("─", max(width-ansi.StringWidth(head), 0))
	}
	out := []string{sty.warn.Render(head)}

	// The arguments are wrapped, never cut at the edge: what is approved is read whole, or the
	// panel says how much is folded. They get what room the screen can spare, all of it unfolded.
	var lines []string
	for _, l := range body {
		for i, w := range strings.Split(ansi.Hardwrap(l, max(width-4, 8), true), "\n") {
			if i > 0 {
				w = "  " + w
			}
			lines = append(lines, "  "+w)
		}
	}
	room := max(min(6, m.height/4), 1)
	if m.expand {
		room = max(m.height-m.composer.Height()-6, room)
	}
	if len(lines) > room {
		left := len(lines) - room + 1
		lines = append(lines[:room-1:room-1], sty.dim.Render(fmt.Sprintf("  … %d more line%s (Ctrl+O unfolds)", left, plural(left))))
	}
	out = append(out, lines...)

	var line, hint string
	switch {
	case !m.canAnswer():
		line = sty.warn.Render("  this host cannot take an answer (no " + api.CapApprovals + ")")
		hint = "Esc stop"
	case focused:
		var b strings.Builder
		for i, c := range cs {
			if i == m.panel.pick {
				b.WriteString(sty.accent.Render("  ❯ ") + sty.bold.Render(c.label))
			} else {
				b.WriteString("    " + c.label)
			}
		}
		line, hint = b.String(), "←→ choose · Enter answer · Tab back to typing"
	default:
		labels := make([]string, len(cs))
		for i, c := range cs {
			labels[i] = c.label
		}
		line, hint = sty.dim.Render("    "+strings.Join(labels, "    ")), "Tab to answer"
	}
	gap := width - ansi.StringWidth(line) - ansi.StringWidth(hint) - 1
	if gap < 2 {
		hint = ""
		gap = 0
	}
	out = append(out, line+strings.Repeat(" ", gap)+sty.dim.Render(hint))
	return out
}

// readableCall says what a call would do, in a few words, and its arguments as lines to read: a
// command as a shell shows it, a file's path with what the call does to it, anything else a line
// per argument. Control characters are shown escaped, never sent to the terminal: what the
// person reads is what the call would do.
func readableCall(name, args string) (what string, body []string) {
	var a map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return name + " asks to run", []string{printable(compactJSON(args))}
	}
	get := func(k string) string {
		var s string
		_ = json.Unmarshal(a[k], &s)
		return s
	}
	switch {
	case name == "bash" && get("command") != "":
		what = name + " wants to run a command"
		if d := get("description"); d != "" {
			what += ": " + printable(firstLine(d, 120))
		}
		for i, l := range strings.Split(strings.TrimRight(get("command"), "\n"), "\n") {
			lead := "  "
			if i == 0 {
				lead = "$ "
			}
			body = append(body, lead+printable(l))
		}
		return what, body
	case name == "write_file" && get("path") != "":
		c := get("content")
		lines := strings.Count(c, "\n")
		if c != "" && !strings.HasSuffix(c, "\n") {
			lines++
		}
		return name + " wants to write a file", []string{printable(get("path")) +
			sty.dim.Render(fmt.Sprintf("  (%d line%s, %s)", lines, plural(lines), byteCount(len(c))))}
	case name == "edit_file" && get("path") != "":
		path := printable(get("path"))
		var all bool
		_ = json.Unmarshal(a["replace_all"], &all)
		if all {
			path += sty.dim.Render("  (every match)")
		}
		body = []string{path}
		body = append(body, diffLines("- ", sty.bad, get("old"))...)
		body = append(body, diffLines("+ ", sty.ok, get("new"))...)
		return name + " wants to edit a file", body
	}
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var s string
		if json.Unmarshal(a[k], &s) != nil {
			s = compactJSON(string(a[k]))
		}
		body = append(body, sty.dim.Render(printable(k)+":")+" "+printable(firstLine(s, 400)))
	}
	return name + " asks to run", body
}

// diffLines shows up to three lines of an edit's text, each after mark.
func diffLines(mark string, st lipgloss.Style, text string) []string {
	if text == "" {
		return []string{sty.dim.Render(mark + "(nothing)")}
	}
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	var out []string
	for i, l := range lines {
		if i == 3 {
			left := len(lines) - 3
			out = append(out, sty.dim.Render(fmt.Sprintf("  … %d more line%s", left, plural(left))))
			break
		}
		out = append(out, st.Render(mark+printable(l)))
	}
	return out
}

func compactJSON(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) == nil {
		return b.String()
	}
	return strings.Join(strings.Fields(s), " ")
}

func byteCount(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d byte%s", n, plural(n))
	}
	return compact(int64(n)) + "B"
}

// printable shows s as one line a terminal draws as it is: tabs become spaces, and control
// characters, invalid bytes and the format characters that reorder or hide text (bidi overrides,
// zero-width ones) become visible escapes. An approval must show the call it would run, not what
// an escape sequence in its arguments paints over it.
func printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\t':
			b.WriteString("    ")
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}
