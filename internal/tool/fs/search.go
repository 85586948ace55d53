package fstool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// The limits of glob and grep answers.
const (
	maxGlobResults = 1000
	maxGrepHits    = 200
	maxHitBytes    = 300      // a hit's text is clipped to this
	maxGrepFile    = 16 << 20 // larger files are skipped, and counted
)

// walk visits the entries under base (a workspace-relative directory) in lexical order, skipping
// .git and what the root .gitignore ignores, and calls visit with each path relative to the
// workspace root. It stops early when ctx is cancelled.
func (w *Workspace) walk(ctx context.Context, base string, visit func(name string, d fs.DirEntry) error) error {
	var ig ignorer
	if data, err := w.root.ReadFile(".gitignore"); err == nil {
		ig = parseIgnore(string(data))
	}
	return fs.WalkDir(w.root.FS(), base, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			if name == base {
				return err
			}
			return nil // an unreadable entry below base is skipped, not fatal
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if name == base {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" || ig.ignored(name, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		return visit(name, d)
	})
}

// base resolves a search's path argument to a workspace-relative directory or file.
func (w *Workspace) base(p string) (string, fs.FileInfo, error) {
	rel, err := w.rel(p)
	if err != nil {
		return "", nil, err
	}
	fi, err := w.root.Stat(rel)
	if err != nil {
		return "", nil, err
	}
	return rel, fi, nil
}

func under(base, name string) string {
	if base == "." {
		return name
	}
	return strings.TrimPrefix(name, base+"/")
}

type globTool struct{ w *Workspace }

// Glob returns the glob tool: the workspace's paths that match a pattern.
func (w *Workspace) Glob() tool.Tool { return globTool{w} }

func (globTool) Spec() provider.Tool {
	return provider.Tool{
		Name: "glob",
		Description: fmt.Sprintf("List the workspace's files and directories matching a glob pattern, sorted, at most %d. "+
			"* and ? match within one path segment, ** any number of directories, {a,b} either; a pattern is "+
			"matched against paths relative to path (default: the workspace root), so *.go matches only at the top "+
			"and **/*.go at any depth. Directories end with /. .git and .gitignored paths are skipped.", maxGlobResults),
		Schema: schema(`{"type":"object","properties":{` +
			`"pattern":{"type":"string","description":"The glob, such as **/*.go or src/*/{a,b}.ts."},` +
			`"path":{"type":"string","description":"The directory to search under (default: the workspace root)."}},` +
			`"required":["pattern"],"additionalProperties":false}`),
	}
}

func (g globTool) Access(args json.RawMessage) tool.Access {
	return g.w.access(tool.EffectRead, args)
}

func (g globTool) Run(ctx context.Context, call tool.Call) tool.Result {
	var a struct {
		Pattern string `json:"pattern"`
		Path    string `json:"path"`
	}
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tool.Failure("invalid arguments for glob: %v", err)
	}
	pat := a.Pattern
	if filepath.IsAbs(pat) { // an absolute pattern inside the workspace is relative to its root
		rel, err := g.w.rel(pat)
		if err != nil {
			return g.w.fail(a.Pattern, err)
		}
		pat, a.Path = rel, ""
	}
	p, err := compilePattern(pat)
	if err != nil {
		return tool.Failure("%v", err)
	}
	base, fi, err := g.w.base(a.Path)
	if err != nil {
		return g.w.fail(a.Path, err)
	}
	if !fi.IsDir() {
		return tool.Failure("%s is not a directory", a.Path)
	}
	var hits []string
	total := 0
	err = g.w.walk(ctx, base, func(name string, d fs.DirEntry) error {
		if !p.match(under(base, name)) {
			return nil
		}
		total++
		if d.IsDir() {
			name += "/"
		}
		hits = append(hits, name)
		return nil
	})
	sort.Strings(hits)
	if len(hits) > maxGlobResults {
		hits = hits[:maxGlobResults]
	}
	var b strings.Builder
	for _, h := range hits {
		b.WriteString(h)
		b.WriteByte('\n')
	}
	where := "the workspace"
	if base != "." {
		where = base
	}
	switch {
	case err != nil && ctx.Err() != nil:
		b.WriteString("[interrupted: the search was cut short when the session was stopped]")
		return tool.Result{Content: b.String(), IsError: true, Outcome: record.Interrupted}
	case err != nil:
		return g.w.fail(a.Path, err)
	case total == 0:
		return tool.Success(fmt.Sprintf("no paths under %s match %s", where, a.Pattern))
	case total > len(hits):
		fmt.Fprintf(&b, "[%d more paths match; narrow the pattern or the path]", total-len(hits))
	}
	return tool.Success(b.String())
}

type grepTool struct{ w *Workspace }

// Grep returns the grep tool: lines of the workspace's text files matching a regular expression.
func (w *Workspace) Grep() tool.Tool { return grepTool{w} }

func (grepTool) Spec() provider.Tool {
	return provider.Tool{
		Name: "grep",
		Description: fmt.Sprintf("Search the workspace's text files for lines matching a regular expression (RE2 syntax, "+
			"as Go's regexp; (?i) for case-insensitive). Answers path:line:text, at most %d hits, each clipped to %d "+
			"bytes, and the total count. Binary files, .git and .gitignored paths are skipped.", maxGrepHits, maxHitBytes),
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
	dollar        bool // the pattern may hold $, which a \r before \n defeats in the whole-file test
	out           strings.Builder
	hits, files   int
	shown         int
	skippedLarge  int
	skippedBinary int
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
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return tool.Failure("bad regular expression: %v", err)
	}
	st := &grepState{re: re, dollar: strings.Contains(a.Pattern, "$")}
	// A whole-file test first skips files without a hit at the speed of one regexp pass; (?m) makes
	// ^ and $ mean what they mean per line. \A and \z would not, so such patterns go line by line.
	if !strings.Contains(a.Pattern, `\A`) && !strings.Contains(a.Pattern, `\z`) {
		st.pre, _ = regexp.Compile("(?m)" + a.Pattern)
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
	if !fi.IsDir() {
		err = g.file(st, base)
		if st.skippedBinary > 0 {
			return tool.Failure("%s is a binary file; grep searches only text", a.Path)
		}
	} else {
		err = g.w.walk(ctx, base, func(name string, d fs.DirEntry) error {
			if d.IsDir() {
				return nil
			}
			if filter != nil {
				target := d.Name()
				if strings.Contains(a.Glob, "/") {
					target = under(base, name)
				}
				if !filter.match(target) {
					return nil
				}
			}
			return g.file(st, name)
		})
	}
	switch {
	case err != nil && ctx.Err() != nil:
		st.out.WriteString("[interrupted: the search was cut short when the session was stopped]")
		return tool.Result{Content: st.out.String(), IsError: true, Outcome: record.Interrupted}
	case err != nil:
		return g.w.fail(a.Path, err)
	}
	return tool.Success(st.summary(a.Pattern))
}

// file searches one file, given by its workspace-relative name.
func (g grepTool) file(st *grepState, name string) error {
	fi, err := g.w.root.Stat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return nil // a dangling or escaping link, a device: not text to search
	}
	if fi.Size() > maxGrepFile {
		st.skippedLarge++
		return nil
	}
	data, err := g.w.root.ReadFile(name)
	if err != nil {
		return nil
	}
	if isBinary(data) {
		st.skippedBinary++
		return nil
	}
	if st.pre != nil && !(st.dollar && bytes.IndexByte(data, '\r') >= 0) && !st.pre.Match(data) {
		return nil
	}
	found := false
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !st.re.Match(line) {
			continue
		}
		found = true
		st.hits++
		if st.shown < maxGrepHits {
			st.shown++
			fmt.Fprintf(&st.out, "%s:%d:%s\n", name, n, clip(line, maxHitBytes))
		}
	}
	if found {
		st.files++
	}
	return nil
}

func (st *grepState) summary(pattern string) string {
	var notes []string
	if st.skippedLarge > 0 {
		notes = append(notes, fmt.Sprintf("%d files over %d MiB were skipped", st.skippedLarge, maxGrepFile>>20))
	}
	if st.hits == 0 {
		s := fmt.Sprintf("no matches for %s", pattern)
		if len(notes) > 0 {
			s += " (" + strings.Join(notes, "; ") + ")"
		}
		return s
	}
	if st.hits > st.shown {
		notes = append([]string{fmt.Sprintf("showing %d of %d matches in %d files; narrow the pattern, path or glob", st.shown, st.hits, st.files)}, notes...)
	} else {
		notes = append([]string{fmt.Sprintf("%d matches in %d files", st.hits, st.files)}, notes...)
	}
	return st.out.String() + "[" + strings.Join(notes, "; ") + "]"
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
