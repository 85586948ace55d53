package fstool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

// limits bound one glob or grep call, so that no search runs without end whatever the tree or the
// pattern; a search that reaches one says which in its answer, and how to narrow it.
type limits struct {
	entries int           // entries visited
	depth   int           // directory levels below the search's path
	time    time.Duration // one call's wall-clock time
}

var defaultLimits = limits{entries: 200_000, depth: 64, time: 20 * time.Second}

// errTimeBound is the cause of a search's ctx ending at limits.time.
var errTimeBound = errors.New("the search reached its time limit")

// errEntryBound ends a walk at limits.entries.
var errEntryBound = errors.New("the search reached its limit of entries")

// maxIgnoreBytes bounds the .gitignore read; rules past it are not read.
const maxIgnoreBytes = 1 << 20

// search is one glob or grep call's context: its ctx bounded by limits.time, and what cut it short.
type search struct {
	parent context.Context // the call's own: cancelled by a Stop
	ctx    context.Context // parent, ending also at limits.time
	lim    limits
	seen   int  // entries visited
	full   bool // stopped at limits.entries
	deep   int  // directories at limits.depth not searched
}

func (w *Workspace) newSearch(ctx context.Context) (*search, context.CancelFunc) {
	sctx, cancel := context.WithTimeoutCause(ctx, w.limits.time, errTimeBound)
	return &search{parent: ctx, ctx: sctx, lim: w.limits}, cancel
}

// stopped reports whether a Stop (the call's ctx, not the time limit) ended the search.
func (s *search) stopped() bool { return s.parent.Err() != nil }

// timedOut reports whether the time limit ended the search.
func (s *search) timedOut() bool {
	return s.parent.Err() == nil && errors.Is(context.Cause(s.ctx), errTimeBound)
}

// notes says truthfully which limits cut the search short, what the answer therefore covers, and
// how to narrow it; where names the search's path and narrow what a call can narrow.
func (s *search) notes(where, narrow string) []string {
	var out []string
	if s.timedOut() {
		out = append(out, fmt.Sprintf("stopped after %s, the longest one search runs, having visited %d entries: what is above comes from that part only; narrow the %s", s.lim.time, s.seen, narrow))
	}
	if s.full {
		out = append(out, fmt.Sprintf("stopped after visiting %d entries, the most one search visits: what is above comes from that part only; narrow the %s", s.lim.entries, narrow))
	}
	switch {
	case s.deep == 1:
		out = append(out, fmt.Sprintf("1 directory %d levels below %s was not searched, the deepest a search goes; search under it with path", s.lim.depth, where))
	case s.deep > 1:
		out = append(out, fmt.Sprintf("%d directories %d levels below %s were not searched, the deepest a search goes; search under one of them with path", s.deep, s.lim.depth, where))
	}
	return out
}

// walk visits the entries under base (a workspace-relative directory) in lexical order, depth
// first, skipping .git and what the root .gitignore ignores. It calls visit with each path
// relative to the workspace root and its depth (1 directly under base); visit returning
// fs.SkipDir for a directory keeps the walk out of it. The walk looks at s.ctx before every entry
// and every batch of a directory's entries, and keeps to s.lim: it goes no deeper than
// lim.depth (counting in s.deep the directories it leaves unread) and stops after lim.entries
// (setting s.full). It returns s.ctx's error when that ends it, and the error of opening base;
// an unreadable directory below base is skipped.
func (w *Workspace) walk(s *search, base string, visit func(name string, d fs.DirEntry, depth int) error) error {
	ig := w.readIgnore()
	var dir func(name string, depth int) error
	dir = func(name string, depth int) error {
		ents, err := w.readDir(s, name)
		if err != nil {
			if name == base || s.ctx.Err() != nil {
				return err
			}
			return nil
		}
		for _, d := range ents {
			if err := s.ctx.Err(); err != nil {
				return err
			}
			if s.seen >= s.lim.entries {
				s.full = true
				return errEntryBound
			}
			s.seen++
			child := d.Name()
			if name != "." {
				child = name + "/" + child
			}
			isDir := d.IsDir()
			if isDir && d.Name() == ".git" {
				continue
			}
			if skip, err := ig.ignored(s.ctx, child, isDir); err != nil {
				return err
			} else if skip {
				continue
			}
			err := visit(child, d, depth)
			switch {
			case errors.Is(err, fs.SkipDir):
				continue
			case err != nil:
				return err
			case !isDir:
				continue
			case depth >= s.lim.depth:
				s.deep++
				continue
			}
			if err := dir(child, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	err := dir(base, 1)
	if errors.Is(err, errEntryBound) {
		return nil
	}
	return err
}

// readDir reads the directory name's entries, sorted by name, looking at s.ctx between batches
// and reading no more than the entries s may still visit (and one more, to know it stopped).
// O_DIRECTORY refuses a path swapped for anything else, a named pipe included, without waiting.
func (w *Workspace) readDir(s *search, name string) ([]fs.DirEntry, error) {
	f, err := w.root.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY|openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ents []fs.DirEntry
	for len(ents) <= s.lim.entries-s.seen {
		if err := s.ctx.Err(); err != nil {
			return nil, err
		}
		batch, err := f.ReadDir(256)
		ents = append(ents, batch...)
		if errors.Is(err, io.EOF) || len(batch) == 0 {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, nil
}

// readIgnore reads the workspace root's .gitignore, if it is a regular file, up to
// maxIgnoreBytes (to its last whole line).
func (w *Workspace) readIgnore() ignorer {
	f, fi, err := w.openRegular(".gitignore", os.O_RDONLY, 0, ".gitignore", "a search reads")
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := readAll(context.Background(), f, fi.Size(), maxIgnoreBytes)
	if errors.Is(err, errTooLarge) {
		data = data[:maxIgnoreBytes]
		if i := strings.LastIndexByte(string(data), '\n'); i >= 0 {
			data = data[:i]
		}
	} else if err != nil {
		return nil
	}
	return parseIgnore(string(data))
}

// walkMatcher runs a pattern along a walk: the state after each directory on the way down is
// kept by depth, so each entry costs one step of the pattern, not a match of its whole path.
type walkMatcher struct {
	p     pattern
	stack [][]uint64 // stack[d]: the state after the entry at depth d on the way down; stack[0] before any
}

func newWalkMatcher(p pattern) *walkMatcher {
	return &walkMatcher{p: p, stack: [][]uint64{p.start(nil)}}
}

// at steps to the entry named seg at depth (1 directly under the search's path): match reports
// whether its path matches, dead whether no path below it can. It returns ctx's error once ctx is
// cancelled.
func (m *walkMatcher) at(ctx context.Context, depth int, seg string) (match, dead bool, err error) {
	for len(m.stack) <= depth {
		m.stack = append(m.stack, nil)
	}
	st, err := m.p.step(ctx, m.stack[depth], m.stack[depth-1], seg)
	m.stack[depth] = st
	if err != nil {
		return false, false, err
	}
	return m.p.accepts(st), deadState(st), nil
}
