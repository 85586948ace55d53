package diff

import (
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// apply applies a unified diff to before, as patch(1) would, checking every context and removed
// line against before.
func apply(t *rapid.T, before, d string) string {
	src := lines(before)
	var out strings.Builder
	at := 0 // the next line of src not yet copied
	ls := strings.Split(strings.TrimSuffix(d, "\n"), "\n")
	if len(ls) >= 2 && strings.HasPrefix(ls[0], "--- ") {
		ls = ls[2:]
	}
	var last *string // the line just written, for a following NoNewline
	for i := 0; i < len(ls); i++ {
		l := ls[i]
		if l == NoNewline {
			if last == nil || !strings.HasSuffix(*last, "\n") {
				t.Fatalf("line %d: %s after a line that is not the last or has its newline", i, NoNewline)
			}
			s := out.String()
			out.Reset()
			out.WriteString(strings.TrimSuffix(s, "\n"))
			last = nil
			continue
		}
		if strings.HasPrefix(l, "@@ ") {
			var from int
			f := strings.Fields(l)[1] // -start[,n]
			start, _, _ := strings.Cut(f[1:], ",")
			from, _ = strconv.Atoi(start)
			if strings.HasSuffix(f, ",0") {
				from++ // an empty range names the line before it
			}
			for ; at < from-1; at++ {
				out.WriteString(src[at])
			}
			continue
		}
		body := l[1:] + "\n"
		switch l[0] {
		case ' ', '-':
			if at >= len(src) || strings.TrimSuffix(src[at], "\n") != l[1:] {
				t.Fatalf("line %d of the diff %q does not match line %d of before", i, l, at+1)
			}
			if l[0] == ' ' {
				out.WriteString(body)
				last = &body
			} else if i+1 < len(ls) && ls[i+1] == NoNewline {
				i++ // the removed line's own mark
			}
			at++
		case '+':
			out.WriteString(body)
			last = &body
		default:
			t.Fatalf("line %d of the diff is %q", i, l)
		}
	}
	for ; at < len(src); at++ {
		out.WriteString(src[at])
	}
	return out.String()
}

func text(t *rapid.T, label string) string {
	// Up to 400 lines: past 200, difflib's matcher treats lines common in the file as junk, and
	// the diff must still be right.
	words := rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b", "c", "d", "e", ""}), 0, rapid.SampledFrom([]int{30, 400}).Draw(t, label+" size")).Draw(t, label)
	s := strings.Join(words, "\n")
	if rapid.Bool().Draw(t, label+" newline") && s != "" {
		s += "\n"
	}
	return s
}

// Applying the diff to before gives after, whatever the two texts, newlines at their ends or not.
func TestUnifiedApplies(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		before, after := text(t, "before"), text(t, "after")
		d := Unified("a/f", "b/f", before, after)
		if (d == "") != (before == after) {
			t.Fatalf("diff %q for %q → %q", d, before, after)
		}
		if d == "" {
			return
		}
		if got := apply(t, before, d); got != after {
			t.Fatalf("applied:\n%q\nwant %q\ndiff:\n%s", got, after, d)
		}
		added, removed := Stat(d)
		if added == 0 && removed == 0 {
			t.Fatalf("Stat counts nothing in\n%s", d)
		}
	})
}

func TestUnifiedGolden(t *testing.T) {
	// Two changes five unchanged lines apart make one hunk (under 2×Context apart), as diff -u does.
	before := "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n"
	after := "one\ntwo\nthree\nFOUR\nfive\nsix\nseven\neight\nnine\nten"
	want := "--- a/n.txt\n+++ b/n.txt\n@@ -1,10 +1,10 @@\n one\n two\n three\n-four\n+FOUR\n five\n six\n seven\n eight\n nine\n-ten\n+ten\n" + NoNewline + "\n"
	if got := Unified("a/n.txt", "b/n.txt", before, after); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if a, r := Stat(want); a != 2 || r != 2 {
		t.Fatalf("Stat = +%d -%d, want +2 -2", a, r)
	}
}
