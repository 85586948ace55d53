package shell

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/tool"
	"mvdan.cc/sh/v3/syntax"
)

// This file reads a bash line for the permission rules: what it would run, as far as its text
// tells. It parses the line with mvdan.cc/sh (the well-kept bash parser in Go) rather than lexing
// it, so that lists, pipes, subshells, groups, command and process substitutions, here-documents
// and quoting are read as bash reads them.
//
// What it gives the policy (tool.Access):
//   - Subjects: every simple command, anywhere in the line (inside substitutions, function bodies,
//     the scripts of sh -c, eval and trap), its words unquoted and joined by one space, with its
//     assignments: "FOO=1 git push".
//   - Partial: a simple command some of whose words are made when it runs ($X, $(…), a glob, a
//     brace expansion), known up to the first such word.
//   - Readings, for deny and ask rules only: each command a wrapper runs (env, command, exec,
//     nohup, time, nice, timeout, setsid, stdbuf, sudo, doas, xargs, busybox, builtin, find
//     -exec), a command named by its path named by its file, and git with its global options
//     (-C, -c, --git-dir…) left out.
//   - Opaque, when it writes to a file (a redirection other than to /dev/null or a descriptor):
//     allow pattern rules then do not apply.
//   - Unjudged, when part of it cannot be read at all: a command name made when it runs ($g push),
//     eval of anything but plain words, source or ., an alias definition, a shell reading its
//     commands from its input (echo … | sh), xargs -I, git -c alias.…, nesting deeper than
//     maxNest, or a line that does not parse. The policy then refuses it under any deny rule
//     whose first word appears anywhere in it.
//
// It does not look into scripts and programs (./deploy.sh, make, python -c), git aliases from a
// configuration file, or what a variable will hold; rules are a convenience, not a boundary.

// maxNest is how deep scripts within scripts (sh -c 'sh -c …') are read.
const maxNest = 8

// lineAccess reads line for the policy.
func lineAccess(line string) tool.Access {
	r := &reader{seen: map[string]bool{}}
	r.script(line, 0)
	r.acc.Effect = tool.EffectExec
	if r.unjudged {
		r.acc.Unjudged = line + "\n" + strings.Join(r.words, "\n")
	}
	return r.acc
}

// reader gathers what a line would run.
type reader struct {
	acc      tool.Access
	unjudged bool
	words    []string // every word met, unquoted (as far as literal), for Unjudged
	seen     map[string]bool
}

func (r *reader) opaque(why string) {
	if !r.acc.Opaque {
		r.acc.Opaque, r.acc.Why = true, why
	}
}

// unjudge marks the line as not readable in full. Its reason replaces an opaque one: it is the
// one a deny needs to give.
func (r *reader) unjudge(format string, args ...any) {
	if !r.unjudged {
		r.unjudged = true
		r.acc.Opaque, r.acc.Why = true, fmt.Sprintf(format, args...)
	}
}

func (r *reader) note(w word) {
	if w.text != "" {
		r.words = append(r.words, w.text)
	}
}

// script reads a whole line (or a script within one, depth deep).
func (r *reader) script(src string, depth int) {
	if depth > maxNest {
		r.unjudge("it nests scripts more than %d deep", maxNest)
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		r.unjudge("it does not parse as bash (%v)", err)
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			r.call(n, depth)
		case *syntax.Assign:
			if n.Value != nil {
				r.note(wordOf(n.Value))
			}
		case *syntax.Redirect:
			r.redirect(n)
		}
		return true
	})
}

// redirect makes the line opaque when rd writes to a file.
func (r *reader) redirect(rd *syntax.Redirect) {
	w := wordOf(rd.Word)
	r.note(w)
	switch rd.Op {
	case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.DplIn:
		return // reads
	case syntax.DplOut:
		if w.lit && (w.text == "-" || isDigits(w.text)) {
			return // >&2, >&-
		}
	}
	if w.lit && (w.text == "/dev/null" || w.text == "/dev/stdout" || w.text == "/dev/stderr") {
		return
	}
	r.opaque(fmt.Sprintf("it writes to a file (%s %s)", rd.Op, source(rd.Word)))
}

// call reads one simple command: its subject, then what it runs.
func (r *reader) call(c *syntax.CallExpr, depth int) {
	if len(c.Args) == 0 {
		return // assignments alone run nothing (their substitutions are walked)
	}
	var ws []word
	for _, a := range c.Assigns {
		v := word{lit: true}
		if a.Value != nil {
			v = wordOf(a.Value)
		}
		if a.Name == nil || a.Index != nil || a.Array != nil {
			v.lit = false
		}
		name := ""
		if a.Name != nil {
			name = a.Name.Value
		}
		op := "="
		if a.Append {
			op = "+="
		}
		ws = append(ws, word{text: name + op + v.text, lit: v.lit})
	}
	assigns := len(ws)
	for _, a := range c.Args {
		w := wordOf(a)
		r.note(w)
		ws = append(ws, w)
	}
	subj, partial := r.text(ws)
	switch {
	case partial && subj == "":
		// A command name with no literal beginning ($g push): every pattern could match some
		// continuation of nothing; the line is unjudged instead (runs says so).
	case partial:
		r.acc.Partial = appendNew(r.acc.Partial, subj)
	default:
		r.acc.Subjects = appendNew(r.acc.Subjects, subj)
	}
	if assigns > 0 {
		r.reading(ws[assigns:], subj, false)
	}
	r.runs(ws[assigns:], subj, depth, false)
}

// text is ws as a subject: the words joined by one space, up to the literal beginning of the first
// word made when it runs (partial then).
func (r *reader) text(ws []word) (string, bool) {
	var b strings.Builder
	for i, w := range ws {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w.text)
		if !w.lit {
			return b.String(), true
		}
	}
	return b.String(), false
}

// reading records ws as a reading of the subject of; open says more words may follow ws.
func (r *reader) reading(ws []word, of string, open bool) {
	text, partial := r.text(ws)
	if open && !partial {
		text, partial = text+" ", true
	}
	if text == of && !partial {
		return
	}
	key := fmt.Sprintf("%t\x00%s", partial, text)
	if r.seen[key] {
		return
	}
	r.seen[key] = true
	r.acc.Readings = append(r.acc.Readings, tool.Reading{Text: text, Of: of, Partial: partial})
}

// runs reads what the command ws (its name first) runs besides itself: a wrapped command, a
// script. open says words no one can read yet follow ws (xargs' input).
func (r *reader) runs(ws []word, of string, depth int, open bool) {
	if len(ws) == 0 {
		return
	}
	if !ws[0].lit {
		// A path's literal beginning names no command (/usr/bin/gi? push); its file's does.
		if t := ws[0].text; strings.Contains(t, "/") && !strings.HasSuffix(t, "/") {
			r.reading([]word{{text: t[strings.LastIndexByte(t, '/')+1:]}}, of, false)
		}
		r.unjudge("the command name %s is made when it runs", source0(ws[0]))
		return
	}
	name := ws[0].text
	if strings.Contains(name, "/") && path.Base(name) != name {
		ws = append([]word{{text: path.Base(name), lit: true}}, ws[1:]...)
		r.reading(ws, of, open)
		name = ws[0].text
	}
	next := func(i int) {
		if i > 0 && i < len(ws) {
			r.reading(ws[i:], of, open)
			r.runs(ws[i:], of, depth, open)
		}
	}
	switch name {
	case "env":
		i, opts, bad := skipOptions(ws, "uCS", []string{"--unset", "--chdir", "--split-string"}, 0, true)
		if bad != "" {
			r.unjudge("env: %s", bad)
			return
		}
		for _, o := range opts {
			if o.name == "-S" || o.name == "--split-string" {
				r.scriptOf(append([]word{o.arg}, wordsFrom(ws, i)...), "env -S", depth)
				return
			}
		}
		next(i)
	case "command":
		i, opts, bad := skipOptions(ws, "", nil, 0, false)
		if bad != "" {
			r.unjudge("command: %s", bad)
			return
		}
		if !slices.ContainsFunc(opts, func(o opt) bool { return o.name == "-v" || o.name == "-V" }) {
			next(i)
		}
	case "exec":
		i, _, bad := skipOptions(ws, "a", nil, 0, false)
		if bad != "" {
			r.unjudge("exec: %s", bad)
			return
		}
		next(i)
	case "nohup", "builtin", "busybox", "unbuffer", "chronic":
		next(1)
	case "ionice":
		i, _, bad := skipOptions(ws, "cnpPu", []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}, 0, false)
		if bad != "" {
			r.unjudge("ionice: %s", bad)
			return
		}
		next(i)
	case "chrt", "taskset":
		i, _, bad := skipOptions(ws, "TPD", nil, 1, false) // the priority or the mask first
		if bad != "" {
			r.unjudge("%s: %s", name, bad)
			return
		}
		next(i)
	case "strace", "ltrace":
		i, _, bad := skipOptions(ws, "eopsuEabIOPSXnA", nil, 0, false)
		if bad != "" {
			r.unjudge("%s: %s", name, bad)
			return
		}
		next(i)
	case "flock", "script":
		i, opts, bad := skipOptions(ws, "cwEIOBTm", []string{"--command", "--timeout", "--conflict-exit-code",
			"--log-in", "--log-out", "--log-io", "--log-timing", "--logging-format", "--output-limit"}, 0, false)
		if bad != "" {
			r.unjudge("%s: %s", name, bad)
			return
		}
		for _, o := range opts {
			if o.name == "-c" || o.name == "--command" {
				r.scriptOf([]word{o.arg}, name+" -c", depth)
				return
			}
		}
		if name == "flock" && i+1 < len(ws) {
			next(i + 1) // flock FILE COMMAND…
		}
	case "watch":
		i, opts, bad := skipOptions(ws, "nq", []string{"--interval", "--equexit"}, 0, false)
		if bad != "" {
			r.unjudge("watch: %s", bad)
			return
		}
		if slices.ContainsFunc(opts, func(o opt) bool { return o.name == "-x" || o.name == "--exec" }) {
			next(i)
		} else if i < len(ws) {
			r.scriptOf(ws[i:], "watch", depth) // watch runs its words through sh -c
		}
	case "time":
		i, _, bad := skipOptions(ws, "fo", []string{"--format", "--output"}, 0, false)
		if bad != "" {
			r.unjudge("time: %s", bad)
			return
		}
		next(i)
	case "nice":
		i, _, bad := skipOptions(ws, "n", []string{"--adjustment"}, 0, false)
		if bad != "" {
			r.unjudge("nice: %s", bad)
			return
		}
		next(i)
	case "timeout":
		i, _, bad := skipOptions(ws, "sk", []string{"--signal", "--kill-after"}, 1, false)
		if bad != "" {
			r.unjudge("timeout: %s", bad)
			return
		}
		next(i)
	case "setsid":
		i, _, bad := skipOptions(ws, "", nil, 0, false)
		if bad != "" {
			r.unjudge("setsid: %s", bad)
			return
		}
		next(i)
	case "stdbuf":
		i, _, bad := skipOptions(ws, "ioe", []string{"--input", "--output", "--error"}, 0, false)
		if bad != "" {
			r.unjudge("stdbuf: %s", bad)
			return
		}
		next(i)
	case "sudo":
		i, opts, bad := skipOptions(ws, "ugCDhprtTU", []string{"--user", "--group", "--close-from", "--chdir",
			"--host", "--prompt", "--role", "--type", "--command-timeout", "--other-user"}, 0, true)
		if bad != "" {
			r.unjudge("sudo: %s", bad)
			return
		}
		if !slices.ContainsFunc(opts, func(o opt) bool { return o.name == "-e" || o.name == "--edit" }) {
			next(i)
		}
	case "doas":
		i, _, bad := skipOptions(ws, "uC", nil, 0, false)
		if bad != "" {
			r.unjudge("doas: %s", bad)
			return
		}
		next(i)
	case "xargs":
		i, opts, bad := skipOptions(ws, "adEILnPs", []string{"--arg-file", "--delimiter", "--max-args", "--max-procs",
			"--max-chars", "--process-slot-var"}, 0, false)
		if bad != "" {
			r.unjudge("xargs: %s", bad)
			return
		}
		for _, o := range opts {
			if o.name == "-I" || o.name == "-i" || strings.HasPrefix(o.name, "--replace") {
				r.unjudge("xargs %s puts its input into the command", o.name)
				return
			}
		}
		if i >= len(ws) {
			ws, i = append(ws, word{text: "echo", lit: true}), len(ws)
		}
		r.reading(ws[i:], of, true)
		r.runs(ws[i:], of, depth, true)
	case "find":
		r.find(ws, of, depth)
	case "eval":
		r.scriptOf(ws[1:], "eval", depth)
	case "source", ".":
		r.unjudge("%s runs the commands of a file", name)
	case "alias":
		if slices.ContainsFunc(ws[1:], func(w word) bool { return !w.lit || strings.Contains(w.text, "=") }) {
			r.unjudge("it defines an alias")
		}
	case "trap":
		i, _, bad := skipOptions(ws, "", nil, 0, false)
		switch {
		case bad != "":
			r.unjudge("trap: %s", bad)
		case i < len(ws) && ws[i].lit && ws[i].text != "-" && !isDigits(ws[i].text):
			r.script(ws[i].text, depth+1)
		case i < len(ws) && !ws[i].lit:
			r.unjudge("the action of trap is made when it runs")
		}
	case "su":
		_, opts, bad := skipOptions(ws, "csgG", []string{"--command", "--shell", "--group", "--supp-group"}, 0, false)
		if bad != "" {
			r.unjudge("su: %s", bad)
			return
		}
		for _, o := range opts {
			if o.name == "-c" || o.name == "--command" {
				r.scriptOf([]word{o.arg}, "su -c", depth)
			}
		}
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "rbash":
		r.shell(ws, depth)
	case "git":
		r.git(ws, of)
	}
}

// scriptOf reads ws, joined by spaces, as a script (eval, env -S, su -c), or marks the line
// unjudged if a word of it is made when it runs.
func (r *reader) scriptOf(ws []word, what string, depth int) {
	var parts []string
	for _, w := range ws {
		if !w.lit {
			r.unjudge("the script %s runs is made when it runs (%s)", what, source0(w))
			return
		}
		parts = append(parts, w.text)
	}
	r.script(strings.Join(parts, " "), depth+1)
}

// shell reads sh, bash and their kin: -c's script, or unjudged when it reads its commands from its
// input; a script file is judged by its name only.
func (r *reader) shell(ws []word, depth int) {
	cflag, sflag := false, false
	i := 1
	for ; i < len(ws); i++ {
		w := ws[i]
		if !w.lit {
			r.unjudge("%s: the word %s is made when it runs", ws[0].text, source0(w))
			return
		}
		t := w.text
		if t == "--" {
			i++
			break
		}
		if len(t) < 2 || t[0] != '-' && t[0] != '+' {
			break
		}
		if strings.HasPrefix(t, "--") {
			if t == "--rcfile" || t == "--init-file" {
				i++
			}
			continue
		}
		for _, c := range t[1:] {
			switch c {
			case 'c':
				cflag = true
			case 's':
				sflag = true
			case 'o', 'O':
				i++
			}
		}
	}
	switch {
	case cflag && i < len(ws):
		r.scriptOf(ws[i:i+1], ws[0].text+" -c", depth)
	case cflag:
		r.unjudge("%s -c is given no script", ws[0].text)
	case sflag || i >= len(ws):
		r.unjudge("%s reads its commands from its input", ws[0].text)
	}
}

// git adds the reading of a git command without its global options: git -C . push → git push.
func (r *reader) git(ws []word, of string) {
	i, opts, bad := skipOptions(ws, "Cc", []string{"--git-dir", "--work-tree", "--namespace", "--super-prefix",
		"--config-env", "--attr-source", "--exec-path"}, 0, false)
	if bad != "" {
		r.unjudge("git: %s", bad)
		return
	}
	for _, o := range opts {
		if (o.name == "-c" || o.name == "--config-env") && strings.HasPrefix(strings.ToLower(o.arg.text), "alias.") {
			r.unjudge("git %s %s defines an alias", o.name, o.arg.text)
			return
		}
	}
	if i > 1 && i < len(ws) {
		r.reading(append([]word{ws[0]}, ws[i:]...), of, false)
	}
}

// find reads the commands of -exec, -execdir, -ok and -okdir; {} is made when it runs.
func (r *reader) find(ws []word, of string, depth int) {
	for i := 1; i < len(ws); i++ {
		switch ws[i].text {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		var sub []word
		for i++; i < len(ws) && ws[i].text != ";" && ws[i].text != "+"; i++ {
			w := ws[i]
			if w.lit && strings.Contains(w.text, "{}") {
				w = word{text: w.text[:strings.Index(w.text, "{}")]}
			}
			sub = append(sub, w)
		}
		if len(sub) > 0 {
			r.reading(sub, of, false)
			r.runs(sub, of, depth, false)
		}
	}
}

// opt is one option a wrapper was given, and its argument if it takes one.
type opt struct {
	name string
	arg  word
}

// skipOptions finds where the command a wrapper runs begins in ws (ws[0] is the wrapper): after
// its options (short ones taking an argument listed in withArg, long ones in longArg; a long
// option may also be written --name=value), then operands words that are not the command, then
// NAME=value words when assigns. bad says why it could not tell: a word it had to read is made
// when it runs.
func skipOptions(ws []word, withArg string, longArg []string, operands int, assigns bool) (i int, opts []opt, bad string) {
	argOf := func(j int) (word, bool) {
		if j >= len(ws) {
			return word{lit: true}, true
		}
		return ws[j], ws[j].lit
	}
	for i = 1; i < len(ws); i++ {
		w := ws[i]
		if !w.lit && (w.text == "" || w.text[0] == '-') {
			return i, opts, fmt.Sprintf("the word %s is made when it runs", source0(w))
		}
		if !w.lit {
			break // it begins as no option does: an operand (git pu?h) or the command
		}
		t := w.text
		if t == "--" {
			i++
			break
		}
		if t == "-" {
			continue // env's -i
		}
		if len(t) < 2 || t[0] != '-' {
			break
		}
		if strings.HasPrefix(t, "--") {
			name, val, hasVal := strings.Cut(t, "=")
			o := opt{name: name, arg: word{text: val, lit: true}}
			if !hasVal && slices.Contains(longArg, name) {
				i++
				var ok bool
				if o.arg, ok = argOf(i); !ok {
					return i, opts, fmt.Sprintf("the argument of %s is made when it runs", name)
				}
			}
			opts = append(opts, o)
			continue
		}
		for k := 1; k < len(t); k++ {
			c := t[k]
			o := opt{name: "-" + string(c)}
			if strings.IndexByte(withArg, c) >= 0 {
				if k+1 < len(t) {
					o.arg = word{text: t[k+1:], lit: true}
				} else {
					i++
					var ok bool
					if o.arg, ok = argOf(i); !ok {
						return i, opts, fmt.Sprintf("the argument of %s is made when it runs", o.name)
					}
				}
				opts = append(opts, o)
				break
			}
			opts = append(opts, o)
		}
	}
	for ; operands > 0 && i < len(ws); operands-- {
		if !ws[i].lit {
			return i, opts, fmt.Sprintf("the word %s is made when it runs", source0(ws[i]))
		}
		i++
	}
	for assigns && i < len(ws) {
		name, _, ok := strings.Cut(ws[i].text, "=")
		if ok && isName(name) {
			i++ // NAME=value, its value literal or not
			continue
		}
		if !ws[i].lit && !strings.Contains(ws[i].text, "/") {
			return i, opts, fmt.Sprintf("the word %s is made when it runs", source0(ws[i]))
		}
		break
	}
	return i, opts, ""
}

func wordsFrom(ws []word, i int) []word {
	if i >= len(ws) {
		return nil
	}
	return ws[i:]
}

// ---- words --------------------------------------------------------------------------------------

// word is a shell word after quote removal. When it is not literal (a part is made when it runs:
// a parameter, a substitution, a glob, a brace expansion), text holds its literal beginning, and
// src its source.
type word struct {
	text string
	lit  bool
	src  string
}

// wordOf unquotes w as far as it is literal.
func wordOf(w *syntax.Word) word {
	if w == nil {
		return word{lit: true}
	}
	cp := &syntax.Word{Parts: slices.Clone(w.Parts)}
	syntax.SplitBraces(cp)
	var b strings.Builder
	for _, p := range cp.Parts {
		if !unquote(&b, p, false) {
			return word{text: b.String(), src: source(w)}
		}
	}
	return word{text: b.String(), lit: true}
}

// unquote appends p to b without its quoting, reporting whether p is literal throughout (false:
// b holds the literal part of p before the first thing made when it runs).
func unquote(b *strings.Builder, p syntax.WordPart, quoted bool) bool {
	switch p := p.(type) {
	case *syntax.Lit:
		return unescape(b, p.Value, quoted)
	case *syntax.SglQuoted:
		if p.Dollar {
			ansiC(b, p.Value)
		} else {
			b.WriteString(p.Value)
		}
		return true
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			if !unquote(b, q, true) {
				return false
			}
		}
		return true
	}
	return false
}

// unescape appends the literal s with its backslashes removed as bash removes them (outside
// quotes: before any character; inside double quotes: before $ ` " \ and a newline). An unquoted
// glob character ends the literal part.
func unescape(b *strings.Builder, s string, quoted bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			n := s[i+1]
			if !quoted || strings.IndexByte("$`\"\\\n", n) >= 0 {
				i++
				if n != '\n' {
					b.WriteByte(n)
				}
				continue
			}
		case !quoted && (c == '*' || c == '?'):
			return false
		case !quoted && c == '[' && strings.IndexByte(s[i+1:], ']') >= 0:
			return false
		}
		b.WriteByte(c)
	}
	return true
}

// ansiC appends the value of a $'…' string.
func ansiC(b *strings.Builder, s string) {
	simple := map[byte]byte{'a': 7, 'b': 8, 'e': 27, 'E': 27, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11,
		'\\': '\\', '\'': '\'', '"': '"', '?': '?'}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		c := s[i]
		if v, ok := simple[c]; ok {
			b.WriteByte(v)
			continue
		}
		digits := func(max int, ok func(byte) bool) string {
			j := i + 1
			for j < len(s) && j-i-1 < max && ok(s[j]) {
				j++
			}
			d := s[i+1 : j]
			i = j - 1
			return d
		}
		switch {
		case c >= '0' && c <= '7':
			i--
			d := digits(3, func(x byte) bool { return x >= '0' && x <= '7' })
			var n int
			fmt.Sscanf(d, "%o", &n)
			b.WriteByte(byte(n))
		case c == 'x' || c == 'u' || c == 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			d := digits(max, isHex)
			if d == "" {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			var n int
			fmt.Sscanf(d, "%x", &n)
			if c == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
		case c == 'c' && i+1 < len(s):
			i++
			b.WriteByte(s[i] & 0x1f)
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// source is w as written.
func source(w *syntax.Word) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, w); err != nil {
		return "?"
	}
	return clip(b.String(), 60)
}

func source0(w word) string {
	if w.src != "" {
		return w.src
	}
	return w.text
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
