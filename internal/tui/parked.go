package tui

// A conversation parked on a held tool call (capability api.CapRelease): the status line says it
// is held and why, the scrollback shows each hook's answer and each hold and release, and /release
// asks the host to release it (the hooks and the person are asked again). Esc stops it as it stops
// anything: its held calls are answered not_executed.

import (
	"context"

	tea "charm.land/bubbletea/v2"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/record"
)

// Releaser is the optional part of a host that releases a held conversation.
type Releaser interface {
	Release(ctx context.Context, id, op string) error
}

// Release implements Releaser.
func (h *ClientHost) Release(ctx context.Context, id, op string) error {
	_, err := h.c.Release(ctx, id, op)
	return err
}

// heldStatus is the status line's word on a held conversation, or "".
func (m *Model) heldStatus() string {
	h := m.state.Hold
	if h == nil {
		return ""
	}
	return sty.warn.Render("⏸ held: "+firstLine(h.Reason, 80)) + sty.dim.Render(" (/release, Esc stops)")
}

// releasedMsg is a release's answer.
type releasedMsg struct{ err error }

// release asks the host to release the held conversation.
func (m *Model) release() tea.Cmd {
	r, ok := m.host.(Releaser)
	switch {
	case m.conv == "" || m.state.Hold == nil:
		m.sb.notice(dim, "nothing is held here")
		return nil
	case !ok || !m.caps[api.CapRelease]:
		m.sb.notice(warn, "this host cannot release a held call (it does not advertise %s)", api.CapRelease)
		return nil
	}
	opID := m.opt.NewOp()
	return m.enqueue(op{kind: opEdit, run: func(ctx context.Context, conv string) tea.Msg {
		return releasedMsg{r.Release(ctx, conv, opID)}
	}})
}

// holdEvent shows a hook's answer, a hold or a release in the scrollback; it says whether p was
// one of them.
func (s *scrollback) holdEvent(p any) bool {
	switch b := p.(type) {
	case *record.Hook:
		if b.Decision == record.HookPass && b.Failed == "" && b.Context == "" && !b.Error {
			return true
		}
		line := b.Event + " hook " + firstLine(b.Command, 60) + ": " + b.Decision
		if b.Reason != "" {
			line += " (" + firstLine(b.Reason, 200) + ")"
		}
		if b.Context != "" {
			line += "; adds: " + firstLine(b.Context, 200)
		}
		style := dim
		if b.Decision == record.HookRefuse || b.Failed != "" {
			style = warn
		}
		s.notice(style, "%s", line)
	case *record.Hold:
		s.notice(warn, "⏸ held %s: %s", b.CallID, firstLine(b.Reason, 200))
	case *record.Released:
		s.notice(dim, "released (by %s): the held call is asked about again", b.By)
	default:
		return false
	}
	return true
}
