package tui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/reinhq/rein/internal/api"
)

// commands are the slash commands, in the order /help lists them.
var commands = []struct{ name, args, help string }{
	{"context", "", "the survey: what the context holds, turn by turn, with sizes"},
	{"evict", "<from> <to> <note>", "take turns from–to out of the context, leaving the note"},
	{"rewind", "<turn> [files]", "withdraw turns from <turn> on (files: files too)"},
	{"clear", "", "withdraw every turn (they stay readable in the transcript)"},
	{"fork", "[<turn>]", "continue in a new conversation that inherits this context"},
	{"model", "[<n>|<name>]", "the model and the provider's known models, or switch to one"},
	{"usage", "", "tokens in and out, cache, and cost, per exchange and in all"},
	{"sessions", "", "list the conversations"},
	{"resume", "[<id>]", "open a conversation (no id: pick one)"},
	{"new", "[rein|claude|codex]", "start a new conversation (in rein, Claude Code or Codex)"},
	{"help", "", "this list"},
	{"quit", "", "leave (the host keeps the conversation)"},
}

func helpLines() []string {
	out := []string{sty.bold.Render("Commands")}
	for _, c := range commands {
		name := "/" + c.name
		if c.args != "" {
			name += " " + c.args
		}
		out = append(out, fmt.Sprintf("  %-26s %s", name, sty.dim.Render(c.help)))
	}
	out = append(out, "", sty.bold.Render("Keys"))
	for _, k := range [][2]string{
		{"Enter", "send (while the agent works: steering at its next step)"},
		{"Alt+Enter", "send queued: delivered after the running exchange"},
		{"Ctrl+J, Shift+Enter", "new line"},
		{"Esc, Ctrl+C", "Stop: the exchange ends, waiting messages come back here"},
		{"Tab", "answer a call waiting for approval (←→, Enter); else complete /commands and @files"},
		{"Ctrl+R", "search earlier messages (kept per workspace)"},
		{"Ctrl+C twice", "quit, when nothing runs"},
		{"Up, Down", "earlier messages, at the composer's first or last line"},
		{"PgUp, PgDn", "scroll; Esc or Ctrl+L back to the bottom"},
		{"Ctrl+O", "unfold tool output and thinking"},
	} {
		out = append(out, fmt.Sprintf("  %-26s %s", k[0], sty.dim.Render(k[1])))
	}
	return out
}

// backends are the back-ends /new may name (capability backends.v1).
var backends = []string{api.BackendRein, api.BackendClaude, api.BackendCodex}

func backendName(b string) string {
	switch b {
	case api.BackendClaude:
		return "Claude Code"
	case api.BackendCodex:
		return "Codex"
	}
	return "rein's own loop"
}

// slash runs a slash command.
func (m *Model) slash(line string) tea.Cmd {
	name, rest, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "/"), " ")
	rest = strings.TrimSpace(rest)
	args := strings.Fields(rest)
	switch name {
	case "help", "?":
		m.sb.block(helpLines()...)
	case "context":
		if m.conv == "" {
			m.sb.notice(dim, "the context is empty: nothing has been sent yet")
			return nil
		}
		return m.fetchTranscript(true)
	case "evict":
		return m.evict(rest, args)
	case "rewind":
		if len(args) == 2 && args[1] == "files" {
			return m.rewindFiles(args[0])
		}
		turn, err := strconv.ParseInt(strings.Join(args, ""), 10, 64)
		if len(args) != 1 || err != nil {
			m.sb.notice(warn, "usage: /rewind <turn> [files]: withdraws every turn from <turn> on (/context lists them); with files, the workspace's files too")
			return nil
		}
		return m.editCmd("rewind", api.CapEdits, func(ctx context.Context, e Editor, conv, op string) (api.Survey, error) {
			return e.Rewind(ctx, conv, op, turn)
		})
	case "clear":
		return m.editCmd("clear", api.CapEdits, func(ctx context.Context, e Editor, conv, op string) (api.Survey, error) {
			return e.Clear(ctx, conv, op)
		})
	case "fork":
		return m.fork(args)
	case "model":
		return m.setModel(args)
	case "usage":
		m.sb.block(m.usageLines()...)
	case "release": // said by the status line while a call is held (held.go), not by /help
		return m.release()
	case "sessions":
		return m.fetchList(listForSessions)
	case "resume":
		if len(args) == 0 {
			return m.fetchList(listForPicker)
		}
		return m.fetchList(listForResume(args[0]))
	case "new":
		if len(args) > 1 || len(args) == 1 && !slices.Contains(backends, args[0]) {
			m.sb.notice(warn, "usage: /new [rein|claude|codex]: a new conversation, in rein's own loop, Claude Code or Codex (the host says which it offers)")
			return nil
		}
		m.fresh()
		if len(args) == 1 {
			m.backend = args[0]
			m.sb.notice(dim, "it runs in %s", backendName(m.backend))
		}
	case "quit", "exit", "q":
		return m.exit()
	default:
		m.sb.notice(warn, "unknown command /%s: /help lists them (start with // to send a line that begins with /)", name)
	}
	return nil
}

func (m *Model) evict(rest string, args []string) tea.Cmd {
	if len(args) < 3 {
		m.sb.notice(warn, "usage: /evict <from> <to> <note>  (the note says what the turns held)")
		return nil
	}
	from, err1 := strconv.ParseInt(args[0], 10, 64)
	to, err2 := strconv.ParseInt(args[1], 10, 64)
	if err1 != nil || err2 != nil {
		m.sb.notice(warn, "usage: /evict <from> <to> <note>: from and to are turn ids (/context lists them)")
		return nil
	}
	note := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(rest, args[0])), args[1]))
	return m.editCmd("evict", api.CapEdits, func(ctx context.Context, e Editor, conv, op string) (api.Survey, error) {
		return e.Evict(ctx, conv, op, from, to, note)
	})
}

func (m *Model) fork(args []string) tea.Cmd {
	var at int64
	if len(args) > 0 {
		n, err := strconv.ParseInt(args[0], 10, 64)
		if err != nil {
			m.sb.notice(warn, "usage: /fork [<turn>]: inherit the context up to <turn> (default: all of it)")
			return nil
		}
		at = n
	}
	if !m.can("fork", api.CapFork) {
		return nil
	}
	e, opID := m.edit, m.opt.NewOp()
	return m.enqueue(op{kind: opFork, run: func(ctx context.Context, conv string) tea.Msg {
		v, err := e.Fork(ctx, conv, opID, at)
		return forkedMsg{v, err}
	}})
}

func (m *Model) setModel(args []string) tea.Cmd {
	if len(args) == 0 {
		m.sb.block(m.modelLines()...)
		return nil
	}
	if !m.can("model", api.CapModel) {
		return nil
	}
	e, opID, model := m.edit, m.opt.NewOp(), m.modelArg(args[0])
	return m.enqueue(op{kind: opModel, run: func(ctx context.Context, conv string) tea.Msg {
		v, err := e.SetModel(ctx, conv, opID, model)
		return modelSetMsg{v, err}
	}})
}

// fresh leaves the conversation: the next message starts a new one.
func (m *Model) fresh() {
	m.dropQueued()
	if m.cancel != nil {
		m.cancel()
	}
	m.gen++
	m.conv, m.title, m.state, m.seq, m.base = "", "", api.State{}, 0, 0
	m.sb.reset()
	m.outbox = nil
	m.meter.reset()
	m.tally.reset()
	m.sb.notice(dim, "a new conversation starts with your next message")
}

// can says whether the host takes the call; if not, it says so in the scrollback.
func (m *Model) can(what, capability string) bool {
	if m.conv == "" {
		m.sb.notice(dim, "/%s: there is no conversation yet", what)
		return false
	}
	if !m.caps[capability] || m.edit == nil {
		m.sb.notice(warn, "/%s is not supported by this host (it does not advertise %s)", what, capability)
		return false
	}
	return true
}

// editCmd queues a context edit. Edits are refused while the conversation works (the host's rule
// too): a person's edit never races the agent's loop.
func (m *Model) editCmd(what, capability string, do func(ctx context.Context, e Editor, conv, op string) (api.Survey, error)) tea.Cmd {
	if !m.can(what, capability) {
		return nil
	}
	if m.working() {
		m.sb.notice(warn, "/%s: the conversation is working; stop it first (Esc), then edit its context", what)
		return nil
	}
	e, opID := m.edit, m.opt.NewOp()
	return m.enqueue(op{kind: opEdit, run: func(ctx context.Context, conv string) tea.Msg {
		sv, err := do(ctx, e, conv, opID)
		return editedMsg{what: what, survey: sv, err: err}
	}})
}

// surveyLines renders the survey as a table.
func surveyLines(sv api.Survey, window int64) []string {
	tokens := (sv.Bytes + sv.SystemBytes) / 4
	head := fmt.Sprintf("Context: %d items, %s bytes (~%s tokens", len(sv.Rows), compact(sv.Bytes+sv.SystemBytes), compact(tokens))
	if window > 0 {
		head += fmt.Sprintf(" of %s, %d%%", compact(window), tokens*100/window)
	}
	out := []string{sty.bold.Render(head + ")"), sty.dim.Render(fmt.Sprintf("  %-9s %-9s %-8s %7s  %s", "turns", "role", "kind", "bytes", "label"))}
	for _, r := range sv.Rows {
		span := strconv.FormatInt(r.From, 10)
		if r.To != r.From {
			span += "–" + strconv.FormatInt(r.To, 10)
		}
		label := r.Label
		if r.Kind == api.Residual {
			label = sty.em.Render(label)
		}
		out = append(out, fmt.Sprintf("  %-9s %-9s %-8s %7s  %s", span, r.Role, r.Kind, compact(r.Bytes), label))
	}
	out = append(out, sty.dim.Render(fmt.Sprintf("  system prompt %s bytes · /evict <from> <to> <note> · /rewind <turn> · /clear", compact(sv.SystemBytes))))
	return out
}

// sessionLines renders a list of conversations.
func sessionLines(vs []api.View, current string) []string {
	if len(vs) == 0 {
		return []string{sty.dim.Render("no conversations yet")}
	}
	out := []string{sty.bold.Render(fmt.Sprintf("Conversations (%d) · /resume <id> opens one", len(vs)))}
	for _, v := range vs {
		out = append(out, sessionRow(v, current))
	}
	return out
}

func sessionRow(v api.View, current string) string {
	mark := "  "
	if v.ID == current {
		mark = "• "
	}
	status := ""
	if api.Working(v.State) {
		status = sty.warn.Render(" working")
	}
	if v.Closed {
		status = sty.dim.Render(" closed")
	}
	title := v.Title
	if title == "" {
		title = sty.dim.Render("(empty)")
	}
	when := v.Updated
	if len(when) >= 16 {
		when = strings.Replace(when[:16], "T", " ", 1)
	}
	return mark + v.ID + "  " + sty.dim.Render(when) + "  " + ansi.Truncate(title, 60, "…") + status
}
