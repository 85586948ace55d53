package tui

import (
	_ "embed"
	"regexp"
	"strings"
	"sync"

	"charm.land/glamour/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// markdown renders a reply's markdown — headings, lists, tables, quotes, links and code fenced
// with a language, highlighted — as styled lines at most width cells wide. The parsing and
// layout are glamour's (goldmark underneath, chroma for code); what is rein's is the theme and
// the cut into blocks.
//
// A reply is cut into blocks at blank lines outside code fences and each block is rendered on its
// own, so the blocks a stream has finished are rendered once (see settled) and the reply drawn
// live is, line for line, the reply drawn from the record. The price is that a construct spanning
// a blank line (a loose list, a reference link defined in a later block) renders block by block.
func markdown(src string, width int) []string {
	var d settled
	d.advance(src, width)
	return joinBlocks(d.lines, renderBlock(src[d.end:], width))
}

// theme is the chat's glamour style. Its colours are the terminal's own sixteen (and chroma's
// sixteen-colour formatter for code), so a reply reads on light and dark backgrounds alike.
//
// theme.json is glamour's StyleConfig in its JSON form.
//
//go:embed theme.json
var theme []byte

// renderers keeps one glamour renderer per width: building one parses the theme and sets up
// goldmark, which costs more than rendering a block. A renderer holds state while it renders, so
// rendering holds rendering (two chats in one process, as tests make, take turns).
var (
	rendering sync.Mutex
	renderers = map[int]*glamour.TermRenderer{}
)

func renderer(width int) *glamour.TermRenderer {
	if r, ok := renderers[width]; ok {
		return r
	}
	if len(renderers) > 16 {
		clear(renderers)
	}
	r, err := glamour.NewTermRenderer(
		glamour.WithStylesFromJSONBytes(theme),
		glamour.WithWordWrap(width),
		glamour.WithChromaFormatter("terminal16"),
	)
	if err != nil {
		panic(err) // the theme is embedded: a bad one is a build error a test catches
	}
	renderers[width] = r
	return r
}

// renderBlock renders one block of markdown, without the blank lines around it.
func renderBlock(src string, width int) []string {
	if width < 8 {
		width = 8
	}
	if strings.TrimSpace(src) == "" {
		return nil
	}
	w := width
	if tw := tableWidth(src); tw > 0 && tw < width {
		w = tw // glamour stretches a table to the width it is given: give it the table's own
	}
	rendering.Lock()
	out, err := renderer(w).Render(strings.ReplaceAll(src, "\t", "    "))
	rendering.Unlock()
	if err != nil {
		// glamour fails only on a writer error; show the text as typed rather than nothing
		out = src
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = trimRight(l)
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > width {
			lines[i] = ansi.Truncate(l, width, "…")
		}
	}
	return lines
}

// tableWidth is the width a block that is only a table needs to show its cells unwrapped, or 0
// when the block is not a table.
func tableWidth(src string) int {
	var cols []int
	for _, line := range strings.Split(strings.TrimSpace(src), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			return 0
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i, c := range cells {
			c = strings.TrimSpace(c)
			if strings.Trim(c, ":-") == "" && c != "" {
				continue // the delimiter row
			}
			for len(cols) <= i {
				cols = append(cols, 0)
			}
			cols[i] = max(cols[i], ansi.StringWidth(c))
		}
	}
	if len(cols) == 0 {
		return 0
	}
	w := len(cols) - 1 // the separators
	for _, c := range cols {
		w += c + 2
	}
	return max(w, 8)
}

// trailing matches the padding glamour adds to fill a line: spaces and the style codes around them.
var trailing = regexp.MustCompile(`(?:[ \t]|\x1b\[[0-9;:]*m)+$`)

// trimRight drops a line's padding, closing any style the padding held.
func trimRight(l string) string {
	m := trailing.FindStringIndex(l)
	if m == nil {
		return l
	}
	cut := l[m[0]:]
	l = l[:m[0]]
	if strings.Contains(cut, "\x1b[") && strings.Contains(l, "\x1b[") {
		l += "\x1b[m"
	}
	return l
}

// joinBlocks puts b after a with one blank line between them.
func joinBlocks(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	out := a[:len(a):len(a)]
	if len(out) > 0 {
		out = append(out, "")
	}
	return append(out, b...)
}

// wrap word-wraps s to width, the first line after first and the others after rest.
func wrap(s string, width int, first, rest string) []string {
	w := width - max(ansi.StringWidth(first), ansi.StringWidth(rest))
	if w < 4 {
		w = 4
	}
	var lines []string
	if ansi.StringWidth(s) <= w {
		lines = []string{s}
	} else {
		lines = strings.Split(ansi.Wrap(s, w, ""), "\n")
	}
	for i, l := range lines {
		if i == 0 {
			lines[i] = first + l
		} else {
			lines[i] = rest + l
		}
	}
	return lines
}

// styles are the chat's few text styles. They use the terminal's own sixteen colours and
// attributes, so the chat reads on light and dark backgrounds alike.
type styles struct {
	dim, bold, em, code, heading, quote, link lipgloss.Style
	user, userBar, warn, bad, ok, accent      lipgloss.Style
}

var sty = styles{
	dim:     lipgloss.NewStyle().Faint(true),
	bold:    lipgloss.NewStyle().Bold(true),
	em:      lipgloss.NewStyle().Italic(true),
	code:    lipgloss.NewStyle().Foreground(lipgloss.ANSIColor(6)),
	heading: lipgloss.NewStyle().Bold(true).Foreground(lipgloss.ANSIColor(4)),
	quote:   lipgloss.NewStyle().Italic(true),
	link:    lipgloss.NewStyle().Underline(true).Foreground(lipgloss.ANSIColor(4)),
	user:    lipgloss.NewStyle().Bold(true),
	userBar: lipgloss.NewStyle().Foreground(lipgloss.ANSIColor(4)),
	warn:    lipgloss.NewStyle().Foreground(lipgloss.ANSIColor(3)),
	bad:     lipgloss.NewStyle().Foreground(lipgloss.ANSIColor(1)),
	ok:      lipgloss.NewStyle().Foreground(lipgloss.ANSIColor(2)),
	accent:  lipgloss.NewStyle().Foreground(lipgloss.ANSIColor(5)),
}
