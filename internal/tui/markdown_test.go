package tui

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func plainLines(ls []string) string { return ansi.Strip(strings.Join(ls, "\n")) }

func TestMarkdownLines(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"plain", 80, "plain"},
		{"# Title", 80, "Title"},
		{"- a\n- b\n- c", 80, "• a\n• b\n• c"},
		{"1. one\n2. two", 80, "1. one\n2. two"},
		{"- a\n  - nested", 80, "• a\n  • nested"},
		{"> quoted", 80, "│ quoted"},
		{"```go\nx := 1\n```", 80, "  x := 1"},
		{"**bold** and *em* and `code`", 80, "bold and em and code"},
		{"see [docs](https://x.y)", 80, "see docs https://x.y"},
		{"a * b * c", 80, "a * b * c"},
		{"| a | b |\n|---|---|\n| 1 | two |", 20, " a │ b\n───┼─────\n 1 │ two"},
		{"a very long line of words that must wrap", 22, "a very long line of\nwords that must wrap"},
		{"one\n\n\n\ntwo", 80, "one\n\ntwo"},
	} {
		if got := plainLines(markdown(c.in, c.width)); got != c.want {
			t.Errorf("markdown(%q) =\n%s\nwant\n%s", c.in, got, c.want)
		}
		for _, l := range markdown(c.in, c.width) {
			if w := ansi.StringWidth(l); w > c.width {
				t.Errorf("markdown(%q): line %q is %d cells, wider than %d", c.in, l, w, c.width)
			}
		}
	}
}

// TestCodeIsHighlighted: a fenced block with a language is coloured by token, in the terminal's
// own sixteen colours (so it reads on light and dark backgrounds), and an unknown language still
// shows its code.
func TestCodeIsHighlighted(t *testing.T) {
	got := strings.Join(markdown("```go\nfunc main() { return 1 }\n```", 60), "\n")
	for _, want := range []string{"\x1b[34mfunc", "\x1b[36mmain", "\x1b[35m1"} {
		if !strings.Contains(got, want) {
			t.Errorf("highlighted Go lacks %q:\n%q", want, got)
		}
	}
	if strings.Contains(got, "38;5;") || strings.Contains(got, "38;2;") {
		t.Errorf("code uses colours outside the terminal's sixteen: %q", got)
	}
	if got := plainLines(markdown("```nosuchlang\nsome text\n```", 60)); got != "  some text" {
		t.Errorf("unknown language: %q", got)
	}
}

// TestLiveRenderingEqualsTheWhole: however the reply is cut into deltas, the streamed block
// draws exactly what the recorded message will (the settled prefix is only a cache).
func TestLiveRenderingEqualsTheWhole(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for trial := 0; trial < 200; trial++ {
		text := reply(200 + r.IntN(3000))
		if r.IntN(3) == 0 {
			text = "\n\n" + text + "\n\n"
		}
		width := 20 + r.IntN(100)
		var l live
		for i := 0; i < len(text); {
			n := 1 + r.IntN(40)
			if i+n > len(text) {
				n = len(text) - i
			}
			l.text.WriteString(text[i : i+n])
			l.ver++
			i += n
			if r.IntN(4) == 0 || i == len(text) {
				got := plainLines(l.lines(width))
				want := plainLines(assistantLines(text[:i], "", width))
				if got != want {
					t.Fatalf("seed %d trial %d at %d bytes, width %d:\n--- live\n%s\n--- whole\n%s", seed, trial, i, width, got, want)
				}
			}
		}
	}
}
