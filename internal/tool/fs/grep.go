package fstool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/reinhq/rein/internal/fsys"
	"io"
	"io/fs"
	"os"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// The limits of grep. Go's regexp runs in time linear in the text, but the factor is the size of
// the compiled program, and one call of it cannot be interrupted: so the pattern's size is
// bounded, and text is handed to it in pieces small enough that a Stop is seen within a few
// milliseconds (about matchBudget bytes×instructions between two looks at ctx).
const (
	maxGrepHits    = 200
	maxHitBytes    = 300      // a hit's text is clipped to this
	maxGrepFile    = 16 << 20 // larger files are skipped, and counted
	maxGrepPattern = 1000     // bytes of the regular expression
	maxGrepInsts   = 2000     // instructions of its compiled program
	matchBudget    = 1 << 16  // bytes × instructions one regexp call may cost
)

type grepTool struct{ w *Workspace }

// Grep returns the grep tool: lines of the workspace's text files matching a regular expression.
func (w *Workspace) Grep() tool.Tool { return grepTool{w} }

func (grepTool) Spec() provider.Tool {
	return provider.Tool{
		Name: "grep",
		Description: fmt.Sprintf("Search the workspace's text files for lines matching a regular expression (RE2 syntax, "+
			"as Go's regexp; (?i) for case-insensitive). Answers path:line:text, at most %d hits, each clipped to %d "+
			"bytes, and the total count. Binary files, files over %d MiB, .git and .gitignored paths are skipped. A search goes "+
			"%d levels deep, visits at most %d entries and runs at most %s; the answer says when one of these cut it short.",
			maxGrepHits, maxHitBytes, maxGrepFile>>20, defaultLimits.depth, defaultLimits.entries, defaultLimits.time),
		Schema: schema(`{"type":"object","properties":{` +
			`"pattern":{"type":"string","description":"The regular expression."},` +
			`"path":{"type":"string","description":"A directory to search under, or one file (default: the workspace root)."},` +
			`"glob":{"type":"string","description":"Only files matching this glob, such as *.go (by name) or src/**/*.ts (by path under path)."}},` +
			`"required":["pattern"],"additionalProperties":false}`),
	}
}

func (g grepTool) Access(args json.RawMessage) tool.Access {
	return g.w.access(tool.EffectRead, args)
}

// grepState gathers hits as files are searched.
type grepState struct {
	re, pre       *regexp.Regexp
	chunk         int  // bytes one regexp call may search: matchBudget / the program's size
	dollar        bool // the pattern may hold $, which a \r before \n defeats in the whole-block test
	out           strings.Builder
	hits, files   int
	shown         int
	skippedLarge  int
	skippedBinary int
}

// compileGrep compiles a grep pattern within the bounds above.
func compileGrep(pattern string) (*grepState, error) {
	if len(pattern) > maxGrepPattern {
		return nil, fmt.Errorf("the regular expression is %d bytes long, more than %d; search for a shorter one", len(pattern), maxGrepPattern)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("bad regular expression: %w", err)
	}
	// regexp compiles this way too; it does not say how large the program came out.
	parsed, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("bad regular expression: %w", err)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return nil, fmt.Errorf("bad regular expression: %w", err)
	}
	if n := len(prog.Inst); n > maxGrepInsts {
		return nil, fmt.Errorf("the regular expression is too complex to search with: it compiles to %d instructions, more than %d "+
			"(a large {n,m} repetition is the usual cause); simplify it", n, maxGrepInsts)
	}
	st := &grepState{re: re, dollar: strings.Contains(pattern, "$"), chunk: max(matchBudget/len(prog.Inst), 64)}
	// A test of a block of whole lines first skips those without a hit at the speed of one regexp
	// pass; (?m) makes ^ and $ mean what they mean per line. \A and \z would not, so such
	// patterns go line by line.
	if !strings.Contains(pattern, `\A`) && !strings.Contains(pattern, `\z`) {
		st.pre, _ = regexp.Compile("(?m)" + pattern)
	}
	return st, nil
}

func (g grepTool) Run(ctx context.Context, call tool.Call) tool.Result {
	var a struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
		Glob    string `json:"glob"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Failure("invalid arguments for grep: %v", err)
	}
	st, err := compileGrep(a.Pattern)
	if err != nil {
		return tool.Failure("%v", err)
	}
	var filter pattern
	if a.Glob != "" {
		if filter, err = compilePattern(a.Glob); err != nil {
			return tool.Failure("%v", err)
		}
	}
	base, fi, err := g.w.base(a.Path)
	if err != nil {
		return g.w.fail(a.Path, err)
	}
	srch, cancel := g.w.newSearch(ctx)
	defer cancel()
	where := "the workspace"
	if base != "." {
		where = base
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			return g.w.fail(a.Path, &IrregularError{Path: a.Path, Kind: fsys.KindOf(fi.Mode()), Does: "grep searches"})
		}
		err = g.file(srch.ctx, st, base, a.Path)
		var irr *IrregularError
		switch {
		case errors.As(err, &irr):
			return g.w.fail(a.Path, err)
		case st.skippedBinary > 0:
			return tool.Failure("%s is a binary file; grep searches only text", a.Path)
		}
	} else {
		// A glob with a / matches the path under path, one step per directory on the way down;
		// one without, the file's name alone.
		byPath := strings.Contains(a.Glob, "/")
		var m *walkMatcher
		if filter != nil {
			m = newWalkMatcher(filter)
		}
		err = g.w.walk(srch, base, func(name string, d fs.DirEntry, depth int) error {
			if m != nil && (byPath || !d.IsDir()) {
				at := depth
				if !byPath {
					at = 1
				}
				match, dead, err := m.at(srch.ctx, at, d.Name())
				if err != nil {
					return err
				}
				if byPath && d.IsDir() && dead {
					return fs.SkipDir
				}
				if !match {
					return nil
				}
			}
			if d.IsDir() || !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
				return nil // a directory, or a named pipe, a device, a socket: not text to search
			}
			err := g.file(srch.ctx, st, name, name)
			if srch.ctx.Err() != nil {
				return err
			}
			return nil // an unreadable file, or a link to something else than a regular file, is skipped
		})
	}
	switch {
	case srch.stopped():
		st.out.WriteString("[interrupted: the search was cut short when the session was stopped]")
		return tool.Result{Content: st.out.String(), IsError: true, Outcome: record.Interrupted}
	case err != nil && !srch.timedOut():
		return g.w.fail(a.Path, err)
	}
	return tool.Success(st.summary(a.Pattern, srch.notes(where, "path, the glob or the pattern")))
}

// file searches one file, given by its workspace-relative name (and as the call named it, for a
// refusal). It returns ctx's error if a Stop or the time limit cut it short.
func (g grepTool) file(ctx context.Context, st *grepState, name, given string) error {
	f, fi, err := g.w.openRegular(name, os.O_RDONLY, 0, given, "grep searches")
	if err != nil {
		return err
	}
	defer f.Close()
	if fi.Size() > maxGrepFile {
		st.skippedLarge++
		return nil
	}
	data, err := readAll(ctx, f, fi.Size(), maxGrepFile)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, errTooLarge):
		st.skippedLarge++ // it grew while it was read
		return nil
	case err != nil:
		return err
	}
	if isBinary(data) {
		st.skippedBinary++
		return nil
	}
	return st.search(ctx, name, data)
}

// search finds the lines of data that match, a block of whole lines of about st.chunk bytes at a
// time, looking at ctx between blocks; a line longer than a block is matched as a stream that a
// Stop ends.
func (st *grepState) search(ctx context.Context, name string, data []byte) error {
	found := false
	n := 0 // lines before the block
	for len(data) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := len(data)
		if end > st.chunk {
			if i := bytes.LastIndexByte(data[:st.chunk], '\n'); i >= 0 {
				end = i + 1
			} else if i := bytes.IndexByte(data[st.chunk:], '\n'); i >= 0 {
				end = st.chunk + i + 1 // one line longer than a block
			}
		}
		block := data[:end]
		data = data[end:]
		if st.pre != nil && len(block) <= st.chunk && !(st.dollar && bytes.IndexByte(block, '\r') >= 0) && !st.pre.Match(block) {
			n += bytes.Count(block, []byte("\n"))
			if block[len(block)-1] != '\n' {
				n++
			}
			continue
		}
		for len(block) > 0 {
			line := block
			if i := bytes.IndexByte(block, '\n'); i >= 0 {
				line, block = block[:i], block[i+1:]
			} else {
				block = nil
			}
			n++
			line = bytes.TrimSuffix(line, []byte("\r"))
			ok, err := st.match(ctx, line)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			found = true
			st.hits++
			if st.shown < maxGrepHits {
				st.shown++
				fmt.Fprintf(&st.out, "%s:%d:%s\n", name, n, clip(line, maxHitBytes))
			}
		}
	}
	if found {
		st.files++
	}
	return nil
}

// match matches one line: at once if it is short enough, else as a stream of runes that ends
// early once ctx is cancelled (the answer is then thrown away).
func (st *grepState) match(ctx context.Context, line []byte) (bool, error) {
	if len(line) <= st.chunk {
		return st.re.Match(line), nil
	}
	ok := st.re.MatchReader(&stopReader{ctx: ctx, b: line, every: max(st.chunk/utf8.UTFMax, 1)})
	return ok, ctx.Err()
}

// stopReader hands a regexp a line rune by rune and, once ctx is cancelled, says the line ended:
// a regexp call cannot be interrupted, but it ends where its input does.
type stopReader struct {
	ctx   context.Context
	b     []byte
	n     int // runes read since ctx was last looked at
	every int // runes between looks at ctx
}

func (r *stopReader) ReadRune() (rune, int, error) {
	if r.n++; r.n >= r.every {
		r.n = 0
		if r.ctx.Err() != nil {
			r.b = nil
		}
	}
	if len(r.b) == 0 {
		return 0, 0, io.EOF
	}
	c, size := utf8.DecodeRune(r.b)
	r.b = r.b[size:]
	return c, size, nil
}

func (st *grepState) summary(pattern string, bounds []string) string {
	var notes []string
	if st.skippedLarge > 0 {
		notes = append(notes, fmt.Sprintf("%d files over %d MiB were skipped", st.skippedLarge, maxGrepFile>>20))
	}
	if st.hits == 0 {
		s := fmt.Sprintf("no matches for %s", pattern)
		if len(notes) > 0 {
			s += " (" + strings.Join(notes, "; ") + ")"
		}
		if len(bounds) > 0 {
			s += "\n[" + strings.Join(bounds, "]\n[") + "]"
		}
		return s
	}
	if st.hits > st.shown {
		notes = append([]string{fmt.Sprintf("showing %d of %d matches in %d files; narrow the pattern, path or glob", st.shown, st.hits, st.files)}, notes...)
	} else {
		notes = append([]string{fmt.Sprintf("%d matches in %d files", st.hits, st.files)}, notes...)
	}
	s := st.out.String() + "[" + strings.Join(notes, "; ") + "]"
	if len(bounds) > 0 {
		s += "\n[" + strings.Join(bounds, "]\n[") + "]"
	}
	return s
}

// clip returns line as valid UTF-8, cut to at most n bytes on a character boundary.
func clip(line []byte, n int) string {
	if len(line) <= n {
		return strings.ToValidUTF8(string(line), "\uFFFD")
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(line[:cut]), "\uFFFD") + "…"
}
