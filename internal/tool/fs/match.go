package fstool

import (
	"context"
	"fmt"
	"path"
	"strings"
)

// pattern is a compiled path glob: alternatives from brace expansion, each a list of segments
// where "**" matches any number of directories and other segments match as path.Match does.
//
// Matching runs the segments as a small automaton over a path's segments (positions in an
// alternative reached so far, as bits), so its cost is the alternatives' segments times the path's
// depth, whatever the pattern: a backtracking matcher is exponential in the number of "**".
type pattern [][]string

// The bounds of one pattern, so that matching one path stays cheap whatever a call asks for.
const (
	maxAlternatives = 256  // brace expansion, so {a,b}{c,d}… cannot explode
	maxPatternBytes = 1024 // the pattern as given
	maxExpanded     = 8192 // all the alternatives together, in bytes
	maxSegments     = 32   // segments in one alternative (a state is a 64-bit set)
	maxDoubleStars  = 8    // ** segments in one alternative, consecutive ones counted once
)

// PatternError refuses a glob that is malformed or beyond the bounds above, saying which.
type PatternError struct {
	Pattern string
	Reason  string
}

func (e *PatternError) Error() string { return fmt.Sprintf("bad pattern %q: %s", e.Pattern, e.Reason) }

func compilePattern(p string) (pattern, error) {
	if len(p) > maxPatternBytes {
		return nil, &PatternError{clip([]byte(p), 60), fmt.Sprintf("it is %d bytes long, more than %d", len(p), maxPatternBytes)}
	}
	alts, err := expandBraces(p)
	if err != nil {
		return nil, &PatternError{p, err.Error()}
	}
	pat := make(pattern, 0, len(alts))
	size := 0
	for _, a := range alts {
		size += len(a)
		if size > maxExpanded {
			return nil, &PatternError{p, fmt.Sprintf("its {…} alternatives together are more than %d bytes; split it into several globs", maxExpanded)}
		}
		var segs []string
		stars := 0
		for _, s := range strings.Split(strings.Trim(a, "/"), "/") {
			if _, err := path.Match(s, ""); err != nil {
				return nil, &PatternError{p, err.Error()}
			}
			if s == "**" {
				if len(segs) > 0 && segs[len(segs)-1] == "**" {
					continue // **/** matches what ** matches
				}
				stars++
			}
			segs = append(segs, s)
		}
		switch {
		case len(segs) > maxSegments:
			return nil, &PatternError{p, fmt.Sprintf("it has %d path segments, more than %d", len(segs), maxSegments)}
		case stars > maxDoubleStars:
			return nil, &PatternError{p, fmt.Sprintf("it has %d ** segments, more than %d; one ** already matches any number of directories", stars, maxDoubleStars)}
		}
		pat = append(pat, segs)
	}
	return pat, nil
}

// match reports whether the slash-separated path name matches any alternative.
func (p pattern) match(name string) bool {
	segs := strings.Split(name, "/")
	for _, alt := range p {
		if matchSegs(alt, segs) {
			return true
		}
	}
	return false
}

// start is the state of every alternative before any segment: the positions reached having
// matched nothing.
func (p pattern) start(st []uint64) []uint64 {
	st = st[:0]
	for _, alt := range p {
		st = append(st, closure(alt, 1))
	}
	return st
}

// step returns into next the state after one more segment, given the state before it. Matching a
// segment against a long name costs their lengths' product, so step looks at ctx between
// alternatives and returns its error, with next incomplete, once it is cancelled.
func (p pattern) step(ctx context.Context, next, prev []uint64, seg string) ([]uint64, error) {
	next = next[:0]
	for i, alt := range p {
		if err := ctx.Err(); err != nil {
			return next, err
		}
		next = append(next, stepSegs(alt, prev[i], seg))
	}
	return next, nil
}

// accepts reports whether some alternative has matched the whole path in state st.
func (p pattern) accepts(st []uint64) bool {
	for i, alt := range p {
		if st[i]&(1<<len(alt)) != 0 {
			return true
		}
	}
	return false
}

// deadState reports whether no alternative can match any longer path: nothing below can match.
func deadState(st []uint64) bool {
	for _, s := range st {
		if s != 0 {
			return false
		}
	}
	return true
}

// closure adds to the set of positions reached the ones a ** can also reach by matching nothing.
func closure(pat []string, st uint64) uint64 {
	for i, s := range pat {
		if s == "**" && st&(1<<i) != 0 {
			st |= 1 << (i + 1)
		}
	}
	return st
}

// stepSegs moves the set of positions reached in pat over one more path segment.
func stepSegs(pat []string, st uint64, seg string) uint64 {
	var next uint64
	for i, s := range pat {
		if st&(1<<i) == 0 {
			continue
		}
		if s == "**" {
			next |= 1 << i
		} else if ok, _ := path.Match(s, seg); ok {
			next |= 1 << (i + 1)
		}
	}
	return closure(pat, next)
}

// matchSegs reports whether the segments pat match the path segments name, in time proportional
// to their product.
func matchSegs(pat, name []string) bool {
	if len(pat) >= 64 {
		return false // compilePattern and parseIgnore keep patterns shorter than this
	}
	st := closure(pat, 1)
	for _, seg := range name {
		if st = stepSegs(pat, st, seg); st == 0 {
			return false
		}
	}
	return st&(1<<len(pat)) != 0
}

// expandBraces expands {a,b} alternatives, nested or not.
func expandBraces(p string) ([]string, error) {
	open := -1
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			var out []string
			for _, alt := range splitTop(p[open+1 : i]) {
				more, err := expandBraces(p[:open] + alt + p[i+1:])
				if err != nil {
					return nil, err
				}
				out = append(out, more...)
				if len(out) > maxAlternatives {
					return nil, fmt.Errorf("it expands to more than %d alternatives", maxAlternatives)
				}
			}
			return out, nil
		}
	}
	return []string{p}, nil
}

// splitTop splits s at commas outside nested braces.
func splitTop(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// ignoreRule is one line of a .gitignore.
type ignoreRule struct {
	pat      []string
	negate   bool
	dirOnly  bool
	anchored bool // matched from the root, not at any depth
}

// ignorer is the root .gitignore, read once per call.
type ignorer []ignoreRule

func parseIgnore(data string) ignorer {
	var rules ignorer
	for _, line := range strings.Split(data, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var r ignoreRule
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		}
		line = strings.TrimPrefix(line, "\\")
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimRight(line, "/")
		}
		if strings.Contains(line, "/") {
			r.anchored, line = true, strings.TrimPrefix(line, "/")
		}
		if line == "" {
			continue
		}
		if !r.anchored {
			line = "**/" + line
		}
		for _, s := range strings.Split(line, "/") {
			if s != "**" || len(r.pat) == 0 || r.pat[len(r.pat)-1] != "**" {
				r.pat = append(r.pat, s)
			}
		}
		if len(r.pat) >= 64 {
			continue // matchSegs holds a state in 64 bits; no real rule is this long
		}
		rules = append(rules, r)
	}
	return rules
}

// ignored reports whether the workspace-relative path name is ignored: the last rule matching it
// decides. It looks at ctx between rules (a .gitignore can be long) and returns its error once it
// is cancelled.
func (ig ignorer) ignored(ctx context.Context, name string, isDir bool) (bool, error) {
	segs := strings.Split(name, "/")
	out := false
	for _, r := range ig {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if r.dirOnly && !isDir {
			continue
		}
		if matchSegs(r.pat, segs) {
			out = !r.negate
		}
	}
	return out, nil
}
