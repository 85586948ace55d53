package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// rendered caches an entry's lines for one width; an entry re-renders only when it changed
// (its ver), the width changed, or tool output was expanded or folded.
type rendered struct {
	lines  []string
	width  int
	ver    int
	expand bool
	valid  bool
}

func (c *rendered) hit(width, ver int, expand bool) bool {
	return c.valid && c.width == width && c.ver == ver && c.expand == expand
}

func (c *rendered) put(lines []string, width, ver int, expand bool) []string {
	*c = rendered{lines: lines, width: width, ver: ver, expand: expand, valid: true}
	return lines
}

// spaced says whether an entry of this kind opens with a blank line.
func spaced(k entryKind) bool {
	return k == userEntry || k == assistantEntry || k == thinkingEntry || k == blockEntry
}

// lines renders e at width, from the cache when it can.
func (e *entry) lines(width int, expand bool) []string {
	if e.cache.hit(width, e.ver, expand) {
		return e.cache.lines
	}
	var out []string
	switch e.kind {
	case userEntry:
		out = userLines(e.text, e.note, width)
	case assistantEntry:
		out = assistantLines(e.text, e.note, width)
	case thinkingEntry:
		out = thinkingLines(e.text, width, expand)
	case toolEntry:
		out = toolLines(e.call, width, expand)
	case residueEntry:
		out = residueLines(e, width)
	case noticeEntry:
		out = noticeLines(e.text, e.tone, width)
	case blockEntry:
		for _, l := range strings.Split(e.text, "\n") {
			out = append(out, ansi.Truncate(l, width, "…"))
		}
	}
	if e.gone {
		for i, l := range out {
			out[i] = sty.dim.Render(ansi.Strip(l))
		}
	}
	return e.cache.put(out, width, e.ver, expand)
}

func userLines(text, note string, width int) []string {
	bar := sty.userBar.Render("› ")
	var out []string
	for _, para := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		lead := "  "
		if len(out) == 0 {
			lead = bar
		}
		out = append(out, wrap(sty.user.Render(para), width, lead, "  ")...)
	}
	if note != "" && len(out) > 0 {
		out[len(out)-1] += sty.dim.Render(" · " + note)
	}
	return out
}

func assistantLines(text, note string, width int) []string {
	var out []string
	if note != "" {
		out = append(out, sty.dim.Render("  "+note))
	}
	return append(out, bulleted(markdown(strings.Trim(text, "\n"), width-2), note == "")...)
}

// bulleted indents an assistant message's lines under its bullet.
func bulleted(md []string, bullet bool) []string {
	for len(md) > 0 && md[0] == "" {
		md = md[1:]
	}
	for len(md) > 0 && md[len(md)-1] == "" {
		md = md[:len(md)-1]
	}
	out := make([]string, 0, len(md))
	for i, l := range md {
		switch {
		case i == 0 && bullet:
			out = append(out, sty.accent.Render("● ")+l)
		case l == "":
			out = append(out, "")
		default:
			out = append(out, "  "+l)
		}
	}
	return out
}

func thinkingLines(text string, width int, expand bool) []string {
	text = strings.TrimSpace(text)
	if !expand {
		n := strings.Count(text, "\n") + 1
		head := "✻ " + firstLine(text, 400)
		if n > 1 {
			head += fmt.Sprintf(" (%d lines, Ctrl-O shows them)", n)
		}
		return []string{sty.dim.Render(ansi.Truncate(head, width, "…"))}
	}
	var out []string
	for i, l := range strings.Split(text, "\n") {
		lead := "  "
		if i == 0 {
			lead = "✻ "
		}
		for _, w := range wrap(l, width, lead, "  ") {
			out = append(out, sty.dim.Render(w))
		}
	}
	return out
}

// outcomeBadge is a tool call's fate in a word and a glyph.
func outcomeBadge(c *toolCall) string {
	switch c.outcome {
	case "":
		return sty.dim.Render("…")
	case "running":
		return sty.dim.Render("running…")
	case "ok":
		return sty.ok.Render("✓")
	case "error":
		return sty.bad.Render("✗ error")
	case "denied":
		return sty.warn.Render("⊘ denied")
	case "interrupted":
		return sty.warn.Render("⏹ interrupted")
	case "not_executed":
		return sty.dim.Render("not executed")
	case "timed_out":
		return sty.warn.Render("⏱ timed out")
	}
	return sty.dim.Render(c.outcome)
}

func toolLines(c *toolCall, width int, expand bool) []string {
	tail := " " + outcomeBadge(c)
	if c.hasDur {
		tail += sty.dim.Render(" · " + duration(c.dur))
	}
	if c.exit != nil && *c.exit != 0 {
		tail += sty.dim.Render(fmt.Sprintf(" · exit %d", *c.exit))
	}
	head := "  " + sty.dim.Render("▸ ") + sty.bold.Render(c.name)
	room := width - ansi.StringWidth(head) - ansi.StringWidth(tail) - 1
	args := ""
	if c.args != "" && room > 3 {
		args = " " + ansi.Truncate(c.args, room, "…")
	}
	out := []string{head + args + tail}
	out = append(out, liveTail(c, width)...)
	d := callDiff(c.name, c.rawArgs)
	if d != "" {
		fold := diffFold
		if expand {
			fold = 0
		}
		out = append(out, diffLinesOf(d, width, fold)...)
	}
	if !expand {
		return out
	}
	bar := sty.dim.Render("    │ ")
	if d == "" && c.rawArgs != "" && (len(c.rawArgs) > len(c.args)+20 || strings.Contains(c.args, "…")) {
		for _, l := range limitLines(c.rawArgs, 20) {
			out = append(out, bar+sty.dim.Render(ansi.Truncate(l, width-6, "…")))
		}
	}
	if c.output != "" {
		for _, l := range limitLines(c.output, 40) {
			out = append(out, bar+ansi.Truncate(l, width-6, "…"))
		}
	} else if c.outcome != "" && c.outcome != "running" {
		out = append(out, bar+sty.dim.Render("(no output)"))
	}
	return out
}

// limitLines keeps the first n lines of s and says how many it left out.
func limitLines(s string, n int) []string {
	lines := strings.Split(strings.ReplaceAll(s, "\t", "    "), "\n")
	if len(lines) > n {
		more := len(lines) - n
		lines = append(lines[:n:n], fmt.Sprintf("… %d more line%s", more, plural(more)))
	}
	return lines
}

func duration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func residueLines(e *entry, width int) []string {
	span := fmt.Sprintf("turn %d", e.from)
	if e.to != e.from {
		span = fmt.Sprintf("turns %d–%d", e.from, e.to)
	}
	by := ""
	if e.note != "" {
		by = " by " + e.note
	}
	head := sty.accent.Render("  ▤ ") + sty.dim.Render(span+" left the context"+by+": ")
	return wrap(head+sty.em.Render(e.text), width, "", "    ")
}

func noticeLines(text string, t tone, width int) []string {
	s := sty.dim
	switch t {
	case warn:
		s = sty.warn
	case bad:
		s = sty.bad
	case plain:
		s = sty.bold
	}
	var out []string
	for _, l := range strings.Split(text, "\n") {
		for _, w := range wrap(l, width, "  ", "    ") {
			out = append(out, s.Render(w))
		}
	}
	return out
}

// liveLines renders the exchange in hand: thinking, streamed text, the calls being written.
func (l *live) lines(width int) []string {
	if l.cache.hit(width, l.ver, false) {
		return l.cache.lines
	}
	var out []string
	if l.thinking.Len() > 0 {
		th := strings.TrimSpace(l.thinking.String())
		last := th
		if i := strings.LastIndexByte(th, '\n'); i >= 0 {
			last = th[i+1:]
		}
		out = append(out, sty.dim.Render(ansi.Truncate("✻ "+last, width, "…")))
	}
	if l.text.Len() > 0 {
		text := l.text.String()
		l.done.advance(text, width-2)
		md := joinBlocks(l.done.lines, renderBlock(strings.TrimRight(text[l.done.end:], "\n"), width-2))
		out = append(out, bulleted(md, true)...)
	}
	for _, c := range l.calls {
		out = append(out, toolLines(c, width, false)...)
	}
	if l.status != "" {
		out = append(out, noticeLines(l.status, warn, width)...)
	}
	return l.cache.put(out, width, l.ver, false)
}
