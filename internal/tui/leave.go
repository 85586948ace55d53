package tui

import (
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Transcript is the conversation as the chat drew it — every line of the scrollback at width,
// with its styles — for the terminal's normal screen once the chat has left its alternate
// screen, so the conversation stays in the terminal's scrollback after the chat ends. It ends
// with how to open the conversation again.
func (m *Model) Transcript(width int) string {
	width = max(width, 20)
	n := len(m.pending(width)) + 1
	if m.sb.live.active() {
		n += len(m.sb.live.lines(width)) + 1
	}
	for _, e := range m.sb.entries {
		n += len(e.lines(width, m.expand)) + 1
	}
	var b strings.Builder
	for _, l := range m.visible(width, n, 0) {
		b.WriteString(l)
		b.WriteString(ansi.ResetStyle)
		b.WriteByte('\n')
	}
	if m.conv != "" {
		b.WriteString(sty.dim.Render("rein chat --resume " + m.conv + "  opens this conversation again"))
		b.WriteByte('\n')
	}
	return b.String()
}

// leave writes the transcript to w, after the program has given the terminal back.
func (m *Model) leave(w io.Writer) {
	if w == nil || len(m.sb.entries) == 0 {
		return
	}
	_, _ = io.WriteString(w, "\n"+m.Transcript(m.width))
}
