package tui

import (
	"regexp"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// markdown renders the light markdown models write — paragraphs, headings, lists, quotes, fenced
// code, **bold**, *emphasis*, `code` and links — as styled lines at most width cells wide. It is
// hand-written rather than glamour: glamour re-parses and re-styles the whole document on every
// streamed delta and pulls in a CSS-like style engine and a syntax highlighter, where the chat
// needs a few line rules that are cheap enough to run at every keystroke of a stream.
func markdown(src string, width int) []string {
	if width < 8 {
		width = 8
	}
	var out []string
	fence := ""
	for _, line := range strings.Split(strings.ReplaceAll(src, "\t", "    "), "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
				continue
			}
			out = append(out, codeLines(line, width)...)
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			if lang := strings.TrimSpace(trimmed[3:]); lang != "" {
				out = append(out, sty.dim.Render("  "+lang))
			}
			continue
		}
		switch {
		case trimmed == "":
			out = append(out, "")
		case isRule(trimmed):
			out = append(out, sty.dim.Render(strings.Repeat("─", min(width, 40))))
		case strings.HasPrefix(trimmed, "#"):
			h := strings.TrimSpace(strings.TrimLeft(trimmed, "#"))
			out = append(out, wrap(sty.heading.Render(inline(h)), width, "", "")...)
		case strings.HasPrefix(trimmed, ">"):
			q := strings.TrimSpace(strings.TrimPrefix(trimmed, ">"))
			bar := sty.dim.Render("│ ")
			out = append(out, wrap(sty.quote.Render(inline(q)), width, bar, bar)...)
		case strings.HasPrefix(trimmed, "|"):
			out = append(out, ansi.Truncate(inline(line), width, "…"))
		default:
			if indent, marker, rest, ok := listItem(line); ok {
				lead := strings.Repeat(" ", indent) + marker + " "
				out = append(out, wrap(inline(rest), width, lead, strings.Repeat(" ", ansi.StringWidth(lead)))...)
				continue
			}
			out = append(out, wrap(inline(line), width, "", "")...)
		}
	}
	return out
}

func isRule(s string) bool {
	if len(s) < 3 {
		return false
	}
	for _, c := range []string{"-", "*", "_"} {
		if strings.Trim(s, c+" ") == "" && strings.Count(s, c) >= 3 {
			return true
		}
	}
	return false
}

var orderedItem = regexp.MustCompile(`^(\d{1,3}[.)])\s+(.*)$`)

// listItem recognises "- x", "* x", "+ x" and "1. x", with their indent.
func listItem(line string) (indent int, marker, rest string, ok bool) {
	t := strings.TrimLeft(line, " ")
	indent = len(line) - len(t)
	if len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && t[1] == ' ' {
		return indent, "•", strings.TrimSpace(t[2:]), true
	}
	if m := orderedItem.FindStringSubmatch(t); m != nil {
		return indent, m[1], m[2], true
	}
	return 0, "", "", false
}

func codeLines(line string, width int) []string {
	bar := sty.dim.Render("│ ")
	w := width - 2
	if ansi.StringWidth(line) <= w {
		return []string{bar + sty.code.Render(line)}
	}
	var out []string
	for _, l := range strings.Split(ansi.Hardwrap(line, w, true), "\n") {
		out = append(out, bar+sty.code.Render(l))
	}
	return out
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

// inline styles `code`, **bold**, *emphasis* and [links](url) in one line.
func inline(s string) string {
	if !strings.ContainsAny(s, "`*[") {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexAny(s, "`*[")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		switch {
		case s[0] == '`':
			if j := strings.IndexByte(s[1:], '`'); j > 0 {
				b.WriteString(sty.code.Render(s[1 : 1+j]))
				s = s[j+2:]
				continue
			}
		case strings.HasPrefix(s, "**"):
			if j := strings.Index(s[2:], "**"); j > 0 {
				b.WriteString(sty.bold.Render(s[2 : 2+j]))
				s = s[j+4:]
				continue
			}
		case s[0] == '*' && len(s) > 1 && s[1] != ' ':
			if j := strings.IndexByte(s[1:], '*'); j > 0 && s[j] != ' ' {
				b.WriteString(sty.em.Render(s[1 : 1+j]))
				s = s[j+2:]
				continue
			}
		case s[0] == '[':
			if m := link.FindStringSubmatch(s); m != nil {
				b.WriteString(sty.link.Render(m[1]))
				b.WriteString(sty.dim.Render(" (" + m[2] + ")"))
				s = s[len(m[0]):]
				continue
			}
		}
		b.WriteByte(s[0])
		s = s[1:]
	}
	return b.String()
}

var link = regexp.MustCompile(`^\[([^\]]+)\]\(([^)\s]+)\)`)

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
