package tui

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func plainLines(ls []string) string { return ansi.Strip(strings.Join(ls, "\n")) }

func TestMarkdownLines(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{"# Title", "Title"},
		{"- a\n* b\n+ c", "• a\n• b\n• c"},
		{"1. one\n2) two", "1. one\n2) two"},
		{"> quoted", "│ quoted"},
		{"```go\nx := 1\n```", "  go\n│ x := 1"},
		{"**bold** and *em* and `code`", "bold and em and code"},
		{"see [docs](https://x.y)", "see docs (https://x.y)"},
		{"a * b * c", "a * b * c"},
		{"---", strings.Repeat("─", 40)},
		{"a very long line of words that must wrap", "a very long line of\nwords that must wrap"},
		{"- a list item that is long enough to wrap", "• a list item that is\n  long enough to wrap"},
	} {
		width := 80
		if strings.Contains(c.in, "long") {
			width = 22
		}
		if got := plainLines(markdown(c.in, width)); got != c.want {
			t.Errorf("markdown(%q) =\n%s\nwant\n%s", c.in, got, c.want)
		}
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
