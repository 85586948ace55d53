// Package diff shows what a change to a text does, as a unified diff: the lines removed and added,
// with three lines of context around each change, in hunks headed by their line ranges, the way
// diff -u and patch(1) write and read them.
//
// The line matching is github.com/pmezard/go-difflib's SequenceMatcher (a port of Python's
// difflib); this package groups its opcodes into hunks and writes them itself, so that a last line
// with no newline is marked as patch(1) expects ("\ No newline at end of file"), which difflib's
// own writer does not do.
package diff

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Context is the number of unchanged lines shown around each change.
const Context = 3

// NoNewline is the line that follows a last line without a newline.
const NoNewline = `\ No newline at end of file`

// Unified is the unified diff that turns before into after, headed "--- from" and "+++ to" when
// from or to is not empty; "" when the two are the same.
func Unified(from, to, before, after string) string {
	if before == after {
		return ""
	}
	a, b := lines(before), lines(after)
	var out strings.Builder
	if from != "" || to != "" {
		fmt.Fprintf(&out, "--- %s\n+++ %s\n", from, to)
	}
	m := difflib.NewMatcher(a, b)
	for _, group := range m.GetGroupedOpCodes(Context) {
		first, last := group[0], group[len(group)-1]
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", span(first.I1, last.I2), span(first.J1, last.J2))
		for _, op := range group {
			switch op.Tag {
			case 'e':
				write(&out, ' ', a[op.I1:op.I2])
			case 'd':
				write(&out, '-', a[op.I1:op.I2])
			case 'i':
				write(&out, '+', b[op.J1:op.J2])
			case 'r':
				write(&out, '-', a[op.I1:op.I2])
				write(&out, '+', b[op.J1:op.J2])
			}
		}
	}
	return out.String()
}

// lines splits s into its lines, each with its newline but a last one that has none.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	ls := strings.SplitAfter(s, "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// span is a hunk's range of lines: its first line (1-based) and count, as diff -u writes it.
func span(from, to int) string {
	n := to - from
	switch {
	case n == 0:
		return fmt.Sprintf("%d,0", from)
	case n == 1:
		return fmt.Sprint(from + 1)
	}
	return fmt.Sprintf("%d,%d", from+1, n)
}

func write(out *strings.Builder, mark byte, ls []string) {
	for _, l := range ls {
		out.WriteByte(mark)
		out.WriteString(l)
		if !strings.HasSuffix(l, "\n") {
			out.WriteString("\n" + NoNewline + "\n")
		}
	}
}

// Stat counts the lines a unified diff adds and removes.
func Stat(d string) (added, removed int) {
	ls := strings.Split(d, "\n")
	if len(ls) >= 2 && strings.HasPrefix(ls[0], "--- ") && strings.HasPrefix(ls[1], "+++ ") {
		ls = ls[2:]
	}
	for _, l := range ls {
		switch {
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return added, removed
}
