package tui

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// highlight colours code of a language it knows by token — keywords, the names of functions
// called or defined, numbers, strings, comments — in the terminal's own sixteen colours, and
// returns it line by line; code of another language comes back as it is. It is a scanner, not a
// parser: what it cannot tell apart it leaves uncoloured, and every byte of the code is kept.
func highlight(code, lang string) []string {
	l, ok := languages[strings.ToLower(strings.TrimSpace(lang))]
	if !ok {
		return strings.Split(code, "\n")
	}
	if l.diff {
		return highlightDiff(code)
	}
	var out []string
	var line strings.Builder
	paint := func(colour, s string) {
		// A token never spans a line in the output: each line opens and closes its own colours.
		for i, part := range strings.Split(s, "\n") {
			if i > 0 {
				out = append(out, line.String())
				line.Reset()
			}
			if part == "" {
				continue
			}
			if colour == "" {
				line.WriteString(part)
			} else {
				line.WriteString(colour + part + sgrReset)
			}
		}
	}
	for i := 0; i < len(code); {
		rest := code[i:]
		switch {
		case l.block[0] != "" && strings.HasPrefix(rest, l.block[0]):
			n := strings.Index(rest[len(l.block[0]):], l.block[1])
			if n < 0 {
				n = len(rest)
			} else {
				n += len(l.block[0]) + len(l.block[1])
			}
			paint(sgrComment, rest[:n])
			i += n
		case l.isComment(rest):
			n := strings.IndexByte(rest, '\n')
			if n < 0 {
				n = len(rest)
			}
			paint(sgrComment, rest[:n])
			i += n
		case strings.IndexByte(l.quotes, rest[0]) >= 0:
			n := stringEnd(rest, rest[0], rest[0] == '`' || l.multiline)
			paint(sgrString, rest[:n])
			i += n
		case rest[0] >= '0' && rest[0] <= '9':
			n := 1
			for n < len(rest) && (isWord(rest[n]) || rest[n] == '.' && n+1 < len(rest) && rest[n+1] >= '0' && rest[n+1] <= '9') {
				n++
			}
			paint(sgrNumber, rest[:n])
			i += n
		case isWordStart(rest):
			n := 0
			for n < len(rest) {
				r, size := utf8.DecodeRuneInString(rest[n:])
				if !(r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
					break
				}
				n += size
			}
			word := rest[:n]
			after := strings.TrimLeft(rest[n:], " \t")
			switch {
			case l.keywords[word]:
				paint(sgrKeyword, word)
			case strings.HasPrefix(after, "("):
				paint(sgrFunction, word)
			default:
				paint("", word)
			}
			i += n
		default:
			_, size := utf8.DecodeRuneInString(rest)
			paint("", rest[:size])
			i += size
		}
	}
	return append(out, line.String())
}

// The sixteen colours' codes highlight paints with, each closed by sgrReset (the foreground's).
const (
	sgrKeyword  = "\x1b[34m"
	sgrFunction = "\x1b[36m"
	sgrNumber   = "\x1b[35m"
	sgrString   = "\x1b[32m"
	sgrComment  = "\x1b[90m"
	sgrDeleted  = "\x1b[31m"
	sgrReset    = "\x1b[39m"
)

// highlightDiff colours a patch's lines: added green, removed red, hunks cyan.
func highlightDiff(code string) []string {
	lines := strings.Split(code, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---"):
			lines[i] = sgrKeyword + l + sgrReset
		case strings.HasPrefix(l, "+"):
			lines[i] = sgrString + l + sgrReset
		case strings.HasPrefix(l, "-"):
			lines[i] = sgrDeleted + l + sgrReset
		case strings.HasPrefix(l, "@@"):
			lines[i] = sgrFunction + l + sgrReset
		}
	}
	return lines
}

// stringEnd is the length of the string literal that opens s with quote: to the quote that
// closes it (a backslash escapes the next byte but in a raw string), or to the line's end unless
// the language lets strings span lines.
func stringEnd(s string, quote byte, multiline bool) int {
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && quote != '`':
			i++
		case s[i] == quote:
			return i + 1
		case s[i] == '\n' && !multiline:
			return i
		}
	}
	return len(s)
}

func isWord(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func isWordStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r == '_' || r == '$' || unicode.IsLetter(r)
}

// language is what highlight knows of a language: its keywords, how its comments and strings
// open.
type language struct {
	keywords  map[string]bool
	line      []string  // what opens a comment to the line's end
	block     [2]string // what opens and closes a comment of many lines
	quotes    string    // the bytes that open a string
	multiline bool      // a string may span lines
	diff      bool      // a patch, coloured by line
}

func (l language) isComment(s string) bool {
	for _, p := range l.line {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// languages are the languages highlight knows, by the names a fence gives them.
var languages = func() map[string]language {
	cLike := [2]string{"/*", "*/"}
	slashes := []string{"//"}
	hash := []string{"#"}
	m := map[string]language{}
	add := func(l language, names ...string) {
		for _, n := range names {
			m[n] = l
		}
	}
	add(language{keywords: words(`break case chan const continue default defer else fallthrough for func go goto if
		import interface map package range return select struct switch type var nil true false iota`),
		line: slashes, block: cLike, quotes: "\"'`"}, "go", "golang")
	add(language{keywords: words(`and as assert async await break class continue def del elif else except finally for
		from global if import in is lambda nonlocal not or pass raise return try while with yield None True False self`),
		line: hash, quotes: "\"'"}, "python", "py", "python3")
	add(language{keywords: words(`async await break case catch class const continue debugger default delete do else
		export extends finally for from function if import in instanceof let new of return static super switch this
		throw try typeof var void while yield null undefined true false interface type enum implements readonly
		private protected public declare namespace abstract as keyof`),
		line: slashes, block: cLike, quotes: "\"'`"}, "javascript", "js", "jsx", "mjs", "typescript", "ts", "tsx")
	add(language{keywords: words(`as async await break const continue crate dyn else enum extern false fn for if impl
		in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where
		while Some None Ok Err`),
		line: slashes, block: cLike, quotes: "\""}, "rust", "rs")
	add(language{keywords: words(`auto break case catch char class const continue default delete do double else enum
		extends extern final finally float for goto if implements import int interface long namespace new null
		nullptr package private protected public return short signed sizeof static struct super switch template
		this throw throws try typedef union unsigned using virtual void volatile while bool true false fun val var
		when object override let func guard self`),
		line: slashes, block: cLike, quotes: "\"'"}, "c", "h", "cpp", "c++", "cc", "hpp", "java", "kotlin", "kt",
		"swift", "csharp", "cs", "c#", "scala", "dart")
	add(language{keywords: words(`if then else elif fi for while until do done case esac in function return local
		export readonly declare set unset shift exit break continue source alias echo cd test true false`),
		line: hash, quotes: "\"'", multiline: true}, "bash", "sh", "shell", "zsh", "console", "shellsession")
	add(language{keywords: words(`true false null`), quotes: "\""}, "json", "jsonc", "json5")
	add(language{keywords: words(`true false null yes no on off`), line: hash, quotes: "\"'"}, "yaml", "yml")
	add(language{keywords: words(`true false`), line: hash, quotes: "\"'"}, "toml", "ini")
	add(language{keywords: words(`select from where and or not insert into values update set delete create table
		drop alter index join left right inner outer on group by order having limit offset as null is in like
		primary key foreign references distinct union all case when then else end begin commit rollback
		SELECT FROM WHERE AND OR NOT INSERT INTO VALUES UPDATE SET DELETE CREATE TABLE DROP ALTER INDEX JOIN LEFT
		RIGHT INNER OUTER ON GROUP BY ORDER HAVING LIMIT OFFSET AS NULL IS IN LIKE PRIMARY KEY FOREIGN REFERENCES
		DISTINCT UNION ALL CASE WHEN THEN ELSE END BEGIN COMMIT ROLLBACK`),
		line: []string{"--"}, block: cLike, quotes: "'\""}, "sql", "postgresql", "sqlite")
	add(language{keywords: words(`alias and begin break case class def defined do else elsif end ensure false for if
		in module next nil not or redo rescue retry return self super then true undef unless until when while yield
		require attr_reader attr_accessor`),
		line: hash, quotes: "\"'"}, "ruby", "rb")
	add(language{diff: true}, "diff", "patch")
	return m
}()
