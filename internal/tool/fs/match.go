package fstool

import (
	"fmt"
	"path"
	"strings"
)

// pattern is a compiled path glob: alternatives from brace expansion, each a list of segments
// where "**" matches any number of directories and other segments match as path.Match does.
type pattern [][]string

// maxAlternatives bounds brace expansion, so {a,b}{c,d}… cannot explode.
const maxAlternatives = 256

func compilePattern(p string) (pattern, error) {
	alts, err := expandBraces(p)
	if err != nil {
		return nil, err
	}
	pat := make(pattern, 0, len(alts))
	for _, a := range alts {
		segs := strings.Split(strings.Trim(a, "/"), "/")
		for _, s := range segs {
			if _, err := path.Match(s, ""); err != nil {
				return nil, fmt.Errorf("bad pattern %q: %w", p, err)
			}
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

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := range len(name) + 1 {
				if matchSegs(pat, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
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
					return nil, fmt.Errorf("pattern %q expands to more than %d alternatives", p, maxAlternatives)
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
		r.pat = strings.Split(line, "/")
		if !r.anchored {
			r.pat = append([]string{"**"}, r.pat...)
		}
		rules = append(rules, r)
	}
	return rules
}

// ignored reports whether the workspace-relative path name is ignored: the last rule matching it
// decides.
func (ig ignorer) ignored(name string, isDir bool) bool {
	segs := strings.Split(name, "/")
	out := false
	for _, r := range ig {
		if r.dirOnly && !isDir {
			continue
		}
		if matchSegs(r.pat, segs) {
			out = !r.negate
		}
	}
	return out
}
