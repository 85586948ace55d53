package tui

import (
	"math/rand/v2"
	"regexp"
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
		{"| n | x |\n|--:|:-:|\n| 1 | a |\n| 100 | bcd |", 40, " n   │ x\n─────┼─────\n   1 │  a\n 100 │ bcd"},
		{"## Two\ntext under it", 80, "Two\n\ntext under it"},
		{"3. three\n4. four", 80, "3. three\n4. four"},
		{"a\n\n---", 10, "a\n\n──────────"},
		{"line one  \nline two", 80, "line one\nline two"},
		{"![a cat](cat.png) and <https://x.y>", 80, "image: a cat → cat.png and https://x.y"},
		{"- `go test ./...` runs them", 80, "• go test ./... runs them"},
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

// TestRepliesCannotDriveTheTerminal: escape sequences and control characters in a reply, in its
// text, its code or a table, are drawn as visible escapes; only the chat's own colours reach the
// terminal.
func TestRepliesCannotDriveTheTerminal(t *testing.T) {
	for _, src := range []string{
		"hi \x1b]52;c;aGVsbG8=\x07 there\x1b[2J",
		"```go\nx := 1 \x1b]0;title\x07\n```",
		"| a |\n|---|\n| \x1b[31mred |",
		"- item \u202eevil",
	} {
		got := strings.Join(markdown(src, 80), "\n")
		if rest := sgr.ReplaceAllString(got, ""); strings.ContainsAny(rest, "\x1b\x07\u202e") {
			t.Errorf("markdown(%q) lets through %q", src, rest)
		}
		if !strings.Contains(got, `\x1b`) && !strings.Contains(got, `\u202e`) {
			t.Errorf("markdown(%q) does not show the escape: %q", src, got)
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
	for _, c := range []struct{ lang, code, want string }{
		{"python", "def f(): return 'x'  # why", "\x1b[34mdef\x1b[39m \x1b[36mf\x1b[39m(): \x1b[34mreturn\x1b[39m \x1b[32m'x'\x1b[39m  \x1b[90m# why\x1b[39m"},
		{"bash", "echo \"$HOME\" # here", "\x1b[34mecho\x1b[39m \x1b[32m\"$HOME\"\x1b[39m \x1b[90m# here\x1b[39m"},
		{"diff", "-old\n+new", "\x1b[31m-old\x1b[39m\n\x1b[32m+new\x1b[39m"},
		{"go", "/* a\nb */ x", "\x1b[90m/* a\x1b[39m\n\x1b[90mb */\x1b[39m x"},
	} {
		if got := strings.Join(highlight(c.code, c.lang), "\n"); got != c.want {
			t.Errorf("highlight(%q, %s) =\n%q\nwant\n%q", c.code, c.lang, got, c.want)
		}
	}
}

// sgr matches the colour codes highlight adds.
var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// FuzzHighlight: whatever the code and the language, highlighting keeps every byte of it, in
// its lines, and adds nothing but the sixteen colours' codes.
func FuzzHighlight(f *testing.F) {
	for _, s := range []string{"func main() { return 1 }", "x = \"unterminated\nnext", "/* open", "-- sql\nSELECT 1", "a\tb\n\n`raw\nraw`", "é ü 漢字 $x"} {
		for _, lang := range []string{"go", "python", "bash", "sql", "js", "rust", "json", "diff", "none"} {
			f.Add(s, lang)
		}
	}
	f.Fuzz(func(t *testing.T, code, lang string) {
		if strings.Contains(code, "\x1b") {
			t.Skip("the chat strips escape sequences from a reply before it renders it")
		}
		lines := highlight(code, lang)
		joined := strings.Join(lines, "\n")
		if got := sgr.ReplaceAllString(joined, ""); got != code {
			t.Fatalf("highlight(%q, %q) keeps %q", code, lang, got)
		}
		if strings.Contains(joined, "38;5;") || strings.Contains(joined, "38;2;") {
			t.Fatalf("highlight(%q, %q) uses colours outside the sixteen: %q", code, lang, joined)
		}
		if len(lines) != strings.Count(code, "\n")+1 {
			t.Fatalf("highlight(%q, %q) gave %d lines for %d", code, lang, len(lines), strings.Count(code, "\n")+1)
		}
	})
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
