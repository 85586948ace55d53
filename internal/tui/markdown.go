package tui

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// markdown renders a reply's markdown — headings, lists, tables, quotes, links and code fenced
// with a language, highlighted — as styled lines at most width cells wide. goldmark parses it
// (CommonMark); the layout, the theme and the highlighting (highlight.go) are rein's, in the
// terminal's own sixteen colours, so a reply reads on light and dark backgrounds alike.
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

// parser is goldmark's CommonMark parser, made once; a parse holds parsing (two chats in one
// process, as tests make, take turns).
var (
	parsing sync.Mutex
	parser  = goldmark.New().Parser()
)

// renderBlock renders one block of markdown, without the blank lines around it.
func renderBlock(src string, width int) []string {
	if width < 8 {
		width = 8
	}
	if strings.TrimSpace(src) == "" {
		return nil
	}
	// What the terminal would obey — an escape sequence, a control character, a bidi override
	// in the model's words — is drawn as a visible escape, line by line (printable).
	src = visibleLines(src)
	var lines []string
	if tableWidth(src) > 0 {
		lines = renderTable(src)
	} else {
		b := []byte(src)
		parsing.Lock()
		doc := parser.Parse(text.NewReader(b))
		parsing.Unlock()
		lines = (&blockRenderer{src: b}).children(doc, width, true)
	}
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

// visibleLines is printable applied to each line of s.
func visibleLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = printable(strings.TrimSuffix(l, "\r"))
	}
	return strings.Join(lines, "\n")
}

// The theme: SGR parameters in the terminal's own sixteen colours and attributes.
const (
	mdHeading = "1;34"
	mdH1      = "1;4;34"
	mdBold    = "1"
	mdEm      = "3"
	mdCode    = "36"
	mdLink    = "4;34"
	mdURL     = "90"
	mdRule    = "90"
	mdQuote   = "3"
)

// paint styles each word of s on its own, the spaces between them plain, so that wrapping a line
// between two words never leaves a style open at a line's end or lost at the next one's start.
func paint(sgr, s string) string {
	var b strings.Builder
	for i, w := range strings.Split(s, " ") {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w != "" {
			b.WriteString("\x1b[" + sgr + "m" + w + "\x1b[m")
		}
	}
	return b.String()
}

// blockRenderer renders the blocks of one parsed block of markdown.
type blockRenderer struct{ src []byte }

// children renders n's child blocks at width, one after another; spaced puts a blank line
// between them (a document's blocks, a loose list item's), tight does not.
func (r *blockRenderer) children(n ast.Node, width int, spaced bool) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		ls := r.block(c, width)
		if len(ls) == 0 {
			continue
		}
		if spaced && len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, ls...)
	}
	return out
}

// block renders one block node at width.
func (r *blockRenderer) block(n ast.Node, width int) []string {
	switch n := n.(type) {
	case *ast.Heading:
		sgr := mdHeading
		if n.Level == 1 {
			sgr = mdH1
		}
		return wrap(paint(sgr, ansi.Strip(r.inline(n))), width, "", "")
	case *ast.Paragraph, *ast.TextBlock:
		return r.paragraph(n, width, "", "")
	case *ast.ThematicBreak:
		return []string{paint(mdRule, strings.Repeat("─", min(width, 40)))}
	case *ast.Blockquote:
		inner := r.children(n, width-2, true)
		for i, l := range inner {
			inner[i] = "│ " + paint(mdQuote, ansi.Strip(l))
		}
		return inner
	case *ast.List:
		return r.list(n, width)
	case *ast.FencedCodeBlock:
		return codeLines(r.code(n), string(n.Language(r.src)), width)
	case *ast.CodeBlock:
		return codeLines(r.code(n), "", width)
	case *ast.HTMLBlock:
		return strings.Split(strings.TrimRight(r.code(n), "\n"), "\n")
	}
	return r.children(n, width, true)
}

// paragraph renders a paragraph's inline content wrapped at width, its first line after first
// and the others after rest; a hard line break starts a new line.
func (r *blockRenderer) paragraph(n ast.Node, width int, first, rest string) []string {
	var out []string
	for i, part := range strings.Split(r.inline(n), "\n") {
		lead := rest
		if i == 0 {
			lead = first
		}
		out = append(out, wrap(part, width, lead, rest)...)
	}
	return out
}

// list renders a list: a bullet, or the item's number, before each item, its other lines
// indented under the first.
func (r *blockRenderer) list(n *ast.List, width int) []string {
	var out []string
	num := n.Start
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		marker := "• "
		if n.IsOrdered() {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		indent := strings.Repeat(" ", ansi.StringWidth(marker))
		var item []string
		for b := c.FirstChild(); b != nil; b = b.NextSibling() {
			var ls []string
			switch b.(type) {
			case *ast.Paragraph, *ast.TextBlock:
				if len(item) == 0 {
					ls = r.paragraph(b, width, marker, indent)
					item = append(item, ls...)
					continue
				}
				ls = r.paragraph(b, width, indent, indent)
			default:
				ls = r.block(b, width-len(indent))
				for i, l := range ls {
					if l != "" {
						ls[i] = indent + l
					}
				}
				if len(item) == 0 && len(ls) > 0 {
					ls[0] = marker + strings.TrimPrefix(ls[0], indent)
				}
			}
			if !n.IsTight && len(item) > 0 {
				item = append(item, "")
			}
			item = append(item, ls...)
		}
		if len(item) == 0 {
			item = []string{strings.TrimRight(marker, " ")}
		}
		out = append(out, item...)
	}
	return out
}

// code is a code block's text.
func (r *blockRenderer) code(n ast.Node) string {
	var b strings.Builder
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(r.src))
	}
	return b.String()
}

// codeLines renders a code block's text two cells in, highlighted when its language is one
// highlight knows, each line cut at width rather than wrapped.
func codeLines(code, lang string, width int) []string {
	lines := highlight(strings.TrimRight(code, "\n"), lang)
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return lines
}

// inline renders the inline content of n as one styled string; a hard line break is a newline.
func (r *blockRenderer) inline(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inlineNode(&b, c)
	}
	return b.String()
}

func (r *blockRenderer) inlineNode(b *strings.Builder, n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		b.Write(n.Segment.Value(r.src))
		switch {
		case n.HardLineBreak():
			b.WriteByte('\n')
		case n.SoftLineBreak():
			b.WriteByte(' ')
		}
	case *ast.String:
		b.Write(n.Value)
	case *ast.CodeSpan:
		b.WriteString(paint(mdCode, ansi.Strip(r.inline(n))))
	case *ast.Emphasis:
		sgr := mdEm
		if n.Level >= 2 {
			sgr = mdBold
		}
		b.WriteString(paint(sgr, ansi.Strip(r.inline(n))))
	case *ast.Link:
		label := r.inline(n)
		dest := string(n.Destination)
		b.WriteString(paint(mdLink, ansi.Strip(label)))
		if dest != "" && dest != ansi.Strip(label) {
			b.WriteString(" " + paint(mdURL, dest))
		}
	case *ast.AutoLink:
		b.WriteString(paint(mdLink, string(n.URL(r.src))))
	case *ast.Image:
		b.WriteString(paint(mdURL, "image: "+ansi.Strip(r.inline(n))+" → "+string(n.Destination)))
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			b.Write(seg.Value(r.src))
		}
	default:
		b.WriteString(r.inline(n))
	}
}

// renderTable draws a block that is only a pipe table: the header bold, the columns apart by
// rules and aligned as the delimiter row says, each cell's markdown rendered inline.
func renderTable(src string) []string {
	var rows [][]string
	var align []byte // per column: 'l', 'r' or 'c'
	for _, line := range strings.Split(strings.TrimSpace(src), "\n") {
		line = strings.TrimSpace(line)
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|"), "|")
		delim := true
		for i, c := range cells {
			c = strings.TrimSpace(c)
			cells[i] = c
			if strings.Trim(c, ":-") != "" || c == "" {
				delim = false
			}
		}
		if delim {
			for _, c := range cells {
				a := byte('l')
				switch {
				case strings.HasPrefix(c, ":") && strings.HasSuffix(c, ":"):
					a = 'c'
				case strings.HasSuffix(c, ":"):
					a = 'r'
				}
				align = append(align, a)
			}
			continue
		}
		for i, c := range cells {
			cells[i] = inlineMarkdown(c)
		}
		rows = append(rows, cells)
	}
	var cols []int
	for _, row := range rows {
		for i, c := range row {
			for len(cols) <= i {
				cols = append(cols, 0)
			}
			cols[i] = max(cols[i], ansi.StringWidth(c))
		}
	}
	var out []string
	for k, row := range rows {
		var line strings.Builder
		for i := range cols {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			if k == 0 {
				c = paint(mdBold, ansi.Strip(c))
			}
			if i > 0 {
				line.WriteString(paint(mdRule, "│"))
			}
			pad := cols[i] - ansi.StringWidth(c)
			left := 0
			if i < len(align) && k > 0 {
				switch align[i] {
				case 'r':
					left = pad
				case 'c':
					left = pad / 2
				}
			}
			line.WriteString(" " + strings.Repeat(" ", left) + c + strings.Repeat(" ", pad-left+1))
		}
		out = append(out, line.String())
		if k == 0 && len(rows) > 1 {
			var rule []string
			for _, w := range cols {
				rule = append(rule, strings.Repeat("─", w+2))
			}
			out = append(out, paint(mdRule, strings.Join(rule, "┼")))
		}
	}
	return out
}

// inlineMarkdown renders a line of markdown's inline content (a table's cell).
func inlineMarkdown(s string) string {
	if s == "" {
		return ""
	}
	b := []byte(s)
	parsing.Lock()
	doc := parser.Parse(text.NewReader(b))
	parsing.Unlock()
	r := &blockRenderer{src: b}
	var out []string
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		out = append(out, strings.ReplaceAll(r.inline(c), "\n", " "))
	}
	return strings.Join(out, " ")
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

// trailing matches the padding at a line's end: spaces and the style codes around them.
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
