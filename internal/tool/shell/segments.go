package shell

import "strings"

// Segments splits a shell line into its simple commands, for matching permission rules: it cuts at
// ; & | && || newlines and parentheses outside quotes, collapses unquoted runs of blanks to one
// space, and drops leading keywords such as if, then, do and {. It is a lexer, not a parser: it
// does not expand anything. opaque reports command or process substitution ($(...), `...`,
// <(...), >(...)), whose commands the segments do not show.
func Segments(line string) (segs []string, opaque bool) {
	var cur strings.Builder
	flush := func() {
		s := stripKeywords(strings.TrimSpace(cur.String()))
		if s != "" {
			segs = append(segs, s)
		}
		cur.Reset()
	}
	var single, double, blank bool
	for i := 0; i < len(line); i++ {
		c := line[i]
		if single {
			cur.WriteByte(c)
			single = c != '\''
			continue
		}
		if c == '\\' && i+1 < len(line) {
			i++
			if line[i] == '\n' { // a line continuation
				continue
			}
			cur.WriteByte(c)
			cur.WriteByte(line[i])
			blank = false
			continue
		}
		if c == '`' || c == '$' && i+1 < len(line) && line[i+1] == '(' {
			opaque = true
		}
		if double {
			cur.WriteByte(c)
			double = c != '"'
			continue
		}
		switch c {
		case '\'':
			single = true
		case '"':
			double = true
		case '<', '>':
			if i+1 < len(line) && line[i+1] == '(' {
				opaque = true
			}
		case '&':
			// >&2, <&0 and &> are redirections, not separators.
			if i > 0 && (line[i-1] == '>' || line[i-1] == '<') || i+1 < len(line) && line[i+1] == '>' {
				break
			}
			flush()
			blank = false
			continue
		case ';', '|', '\n', '(', ')':
			flush()
			blank = false
			continue
		case ' ', '\t':
			if !blank {
				cur.WriteByte(' ')
			}
			blank = true
			continue
		}
		blank = false
		cur.WriteByte(c)
	}
	flush()
	return segs, opaque
}

var keywords = map[string]bool{
	"{": true, "}": true, "!": true, "if": true, "then": true, "else": true, "elif": true, "fi": true,
	"do": true, "done": true, "while": true, "until": true, "time": true,
}

func stripKeywords(s string) string {
	for {
		word, rest, _ := strings.Cut(s, " ")
		if !keywords[word] {
			return s
		}
		s = rest
	}
}
