package console

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// Safe returns a writer that passes to w what a terminal draws and makes visible what it would
// act on: a command's output, a model's words, a provider's error or a file's name may carry
// escape sequences that write the clipboard (OSC 52), retitle the window, clear or repaint the
// screen, or reverse text (bidi overrides) to show something other than what is there. Colours
// (SGR sequences) are dropped; every other control character, C1 control, byte that is not UTF-8
// and bidi control is written as an escape (\x1b, \u009b, \u202e); a carriage return is a line's
// end, so no line can be drawn over. Newlines, tabs and every character a person reads pass as
// they are. A character, a colour or a line end split between two Writes is judged whole.
func Safe(w io.Writer) io.Writer { return &safe{w: w} }

type safe struct {
	w       io.Writer
	pending []byte // the start of a character, a colour or a line end that the next Write finishes
	out     []byte
}

// maxHeld bounds what a Write holds back for the next: a colour sequence longer than this is not
// one.
const maxHeld = 32

func (s *safe) Write(p []byte) (int, error) {
	in := p
	if len(s.pending) > 0 {
		in = append(s.pending, p...)
		s.pending = nil
	}
	out := s.out[:0]
	i := 0
scan:
	for i < len(in) {
		c := in[i]
		switch {
		case c == '\n' || c == '\t' || c >= 0x20 && c < 0x7f:
			j := i + 1
			for j < len(in) && (in[j] == '\n' || in[j] == '\t' || in[j] >= 0x20 && in[j] < 0x7f) {
				j++
			}
			out = append(out, in[i:j]...)
			i = j
		case c == '\r':
			if i+1 == len(in) {
				break scan // a line end, or the start of one: the next Write says
			}
			if in[i+1] != '\n' {
				out = append(out, '\n')
			}
			i++
		case c == 0x1b:
			n, ok := colour(in[i:])
			if n < 0 && len(in)-i < maxHeld {
				break scan // perhaps a colour: the next Write says
			}
			if ok {
				i += n
				continue
			}
			out = append(out, `\x1b`...)
			i++
		case c < 0x20 || c == 0x7f:
			out = fmt.Appendf(out, `\x%02x`, c)
			i++
		default:
			if !utf8.FullRune(in[i:]) && len(in)-i < utf8.UTFMax {
				break scan // a character the next Write finishes
			}
			r, n := utf8.DecodeRune(in[i:])
			switch {
			case r == utf8.RuneError && n == 1:
				out = fmt.Appendf(out, `\x%02x`, c)
			case r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
				out = fmt.Appendf(out, `\u%04x`, r)
			default:
				out = append(out, in[i:i+n]...)
			}
			i += n
		}
	}
	if i < len(in) {
		s.pending = append([]byte(nil), in[i:]...)
	}
	s.out = out
	if len(out) == 0 {
		return len(p), nil
	}
	_, err := s.w.Write(out)
	return len(p), err
}

// colour reads an escape sequence at the start of b (b[0] is ESC): its length and true when it is
// a colour (SGR: ESC [ digits and separators m), false when it is anything else, or -1 when b ends
// before it can tell.
func colour(b []byte) (int, bool) {
	if len(b) < 2 {
		return -1, false
	}
	if b[1] != '[' {
		return 0, false
	}
	for j := 2; j < len(b); j++ {
		switch c := b[j]; {
		case c >= '0' && c <= '9' || c == ';' || c == ':':
		case c == 'm':
			return j + 1, true
		default:
			return 0, false
		}
	}
	return -1, false
}
