package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/reinhq/rein/internal/diff"
)

// File changes drawn as unified diffs: removed lines red, added green, hunk heads in the accent
// colour, each line after a bar. A call of edit_file shows its old text against its new, and
// write_file the content it writes; an approval shows the host's diff of the file as it was
// when asked. Long diffs are folded, saying how much and how to unfold.

// diffFold is how many lines of a diff the scrollback shows folded.
const diffFold = 12

// callDiff is the diff an edit_file or write_file call's arguments describe, or "".
func callDiff(name, args string) string {
	var a struct {
		Path       *string `json:"path"`
		Old        *string `json:"old"`
		New        *string `json:"new"`
		Content    *string `json:"content"`
		ReplaceAll bool    `json:"replace_all"`
	}
	if json.Unmarshal([]byte(args), &a) != nil || a.Path == nil {
		return ""
	}
	switch {
	case name == "edit_file" && a.Old != nil && a.New != nil:
		d := diff.Unified("", "", *a.Old, *a.New)
		var body []string
		for _, l := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
			if !strings.HasPrefix(l, "@@") { // the snippet's own line numbers are not the file's
				body = append(body, l)
			}
		}
		to := *a.Path
		if a.ReplaceAll {
			to += " (every match)"
		}
		return fmt.Sprintf("--- %s\n+++ %s\n%s\n", *a.Path, to, strings.Join(body, "\n"))
	case name == "write_file" && a.Content != nil:
		var b strings.Builder
		fmt.Fprintf(&b, "--- %s\n+++ %s (written whole)\n", *a.Path, *a.Path)
		for _, l := range strings.SplitAfter(strings.TrimSuffix(*a.Content, "\n"), "\n") {
			b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
		}
		return b.String()
	}
	return ""
}

// diffLinesOf draws unified diff text d in width columns, folded to fold lines (0: all): its path
// line, then each line coloured by its mark.
func diffLinesOf(d string, width, fold int) []string {
	ls := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	bar := sty.dim.Render("    │ ")
	var out []string
	if len(ls) >= 2 && strings.HasPrefix(ls[0], "--- ") && strings.HasPrefix(ls[1], "+++ ") {
		from, to := ls[0][4:], ls[1][4:]
		path := to
		if from != to && from != "/dev/null" {
			path = from + " → " + to
		}
		added, removed := diff.Stat(d)
		out = append(out, bar+sty.bold.Render(ansi.Truncate(printable(path), max(width-20, 8), "…"))+" "+
			sty.ok.Render(fmt.Sprintf("+%d", added))+" "+sty.bad.Render(fmt.Sprintf("-%d", removed)))
		ls = ls[2:]
	}
	shown := ls
	if fold > 0 && len(ls) > fold {
		shown = ls[:fold-1]
	}
	room := max(width-6, 8)
	for _, l := range shown {
		text := ansi.Truncate(printable(l), room, "…")
		switch {
		case strings.HasPrefix(l, "+"):
			text = sty.ok.Render(text)
		case strings.HasPrefix(l, "-"):
			text = sty.bad.Render(text)
		case strings.HasPrefix(l, "@@"):
			text = sty.accent.Render(text)
		case strings.HasPrefix(l, `\`):
			text = sty.dim.Render(text)
		}
		out = append(out, bar+text)
	}
	if left := len(ls) - len(shown); left > 0 {
		out = append(out, bar+sty.dim.Render(fmt.Sprintf("… %d more line%s of the diff (Ctrl+O unfolds)", left, plural(left))))
	}
	return out
}
