package fstool

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// The limits of a glob answer.
const (
	maxGlobResults = 1000
	maxGlobBytes   = 128 << 10 // the listing stops before it grows past this
)

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

type globTool struct{ w *Workspace }

// Glob returns the glob tool: the workspace's paths that match a pattern.
func (w *Workspace) Glob() tool.Tool { return globTool{w} }

func (globTool) Spec() provider.Tool {
	return provider.Tool{
		Name: "glob",
		Description: fmt.Sprintf("List the workspace's files and directories matching a glob pattern, sorted, at most %d. "+
			"* and ? match within one path segment, ** any number of directories, {a,b} either; a pattern is "+
			"matched against paths relative to path (default: the workspace root), so *.go matches only at the top "+
			"and **/*.go at any depth. Directories end with /. .git and .gitignored paths are skipped. A search goes %d "+
			"levels deep, visits at most %d entries and runs at most %s; the answer says when one of these cut it short.",
			maxGlobResults, defaultLimits.depth, defaultLimits.entries, defaultLimits.time),
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
	srch, cancel := g.w.newSearch(ctx)
	defer cancel()
	m := newWalkMatcher(p)
	var hits []string
	err = g.w.walk(srch, base, func(name string, d fs.DirEntry, depth int) error {
		match, dead, err := m.at(srch.ctx, depth, d.Name())
		if err != nil {
			return err
		}
		if match {
			if d.IsDir() {
				name += "/"
			}
			hits = append(hits, name)
		}
		if dead && d.IsDir() {
			return fs.SkipDir // nothing below can match
		}
		return nil
	})
	if err != nil && !srch.stopped() && !srch.timedOut() {
		return g.w.fail(a.Path, err)
	}
	sort.Strings(hits)
	var b strings.Builder
	shown := 0
	for _, h := range hits {
		if shown == maxGlobResults || b.Len()+len(h) > maxGlobBytes {
			break
		}
		b.WriteString(h)
		b.WriteByte('\n')
		shown++
	}
	where := "the workspace"
	if base != "." {
		where = base
	}
	if srch.stopped() {
		b.WriteString("[interrupted: the search was cut short when the session was stopped]")
		return tool.Result{Content: b.String(), IsError: true, Outcome: record.Interrupted}
	}
	notes := srch.notes(where, "path or the pattern")
	if len(hits) == 0 {
		s := fmt.Sprintf("no paths under %s match %s", where, a.Pattern)
		if len(notes) > 0 {
			s += "\n[" + strings.Join(notes, "]\n[") + "]"
		}
		return tool.Success(s)
	}
	if len(hits) > shown {
		notes = append([]string{fmt.Sprintf("%d more paths match; narrow the pattern or the path", len(hits)-shown)}, notes...)
	}
	if len(notes) > 0 {
		b.WriteString("[" + strings.Join(notes, "]\n[") + "]")
	}
	return tool.Success(b.String())
}
