package sim

import (
	"bytes"
	"sort"

	"github.com/reinhq/rein/internal/provider"
)

// cut is a request body cut into its top-level fields and the elements of its conversation's
// array (messages, or a Responses request's input), as offsets into the body. A conversation's
// next request repeats this one's bytes up to its last few messages (the new turn, and the cache
// breakpoints that moved), so it is cut from where the two part (splitFrom) instead of being
// scanned whole again: the scan of a long conversation was most of what the simulator spent on
// a request.
type cut struct {
	body   []byte
	fields []span // the top-level fields, in order; names folded to lower case
	arr    int    // which of fields is the array els splits (the last so named), or -1
	els    []span // the array's elements
}

// span is one field's name and the offsets of its value, or one element's offsets.
type span struct {
	name       string
	start, end int
}

// splitBody cuts body whole; false if it is not one JSON object, one of its field names is escaped
// or not ASCII (encoding/json matches names case-insensitively, so names are folded to lower case
// and the last of two so named wins), or its field items is not an array.
func splitBody(body []byte, items string) (cut, bool) {
	n := len(body)
	i := provider.SkipSpace(body, 0)
	if i == n || body[i] != '{' {
		return cut{}, false
	}
	s := cut{body: body, arr: -1}
	i = provider.SkipSpace(body, i+1)
	if i < n && body[i] == '}' {
		return s, false // no array to split
	}
	return s.fieldsFrom(i, items)
}

// splitFrom cuts body as splitBody does, resuming from prev, the split of an earlier body, where
// the two bodies part; the result is splitBody's (TestSplitFromIsWhole).
func splitFrom(body []byte, prev *cut, items string) (cut, bool) {
	if prev == nil || prev.arr < 0 || len(prev.els) == 0 {
		return splitBody(body, items)
	}
	p := provider.CommonPrefix(body, prev.body)
	// The elements wholly inside the common prefix, and all that precedes them, read the same.
	k := sort.Search(len(prev.els), func(i int) bool { return prev.els[i].end > p })
	if k == 0 {
		return splitBody(body, items)
	}
	s := cut{body: body, arr: prev.arr,
		fields: append(make([]span, 0, len(prev.fields)), prev.fields[:prev.arr]...),
		els:    append(make([]span, 0, len(prev.els)+4), prev.els[:k]...)}
	end, ok := s.elementsFrom(prev.els[k-1].end)
	if !ok {
		return cut{}, false
	}
	s.fields = append(s.fields, span{prev.fields[prev.arr].name, prev.fields[prev.arr].start, end})
	n := len(body)
	i := provider.SkipSpace(body, end)
	switch {
	case i == n:
		return cut{}, false
	case body[i] == '}':
		return s, provider.SkipSpace(body, i+1) == n
	case body[i] != ',':
		return cut{}, false
	}
	return s.fieldsFrom(provider.SkipSpace(body, i+1), items)
}

// fieldsFrom reads the fields from i, where a field's name begins, to the end of the body, and
// splits the array of the last field named items (a later field of that name
// than the one s split already replaces it).
func (s cut) fieldsFrom(i int, items string) (cut, bool) {
	body, n := s.body, len(s.body)
	arr := s.arr
	for {
		if i == n || body[i] != '"' {
			return cut{}, false
		}
		k := i + 1
		for k < n && body[k] != '"' {
			if body[k] == '\\' || body[k] >= 0x80 {
				return cut{}, false
			}
			k++
		}
		if k == n {
			return cut{}, false
		}
		name := string(bytes.ToLower(body[i+1 : k]))
		i = provider.SkipSpace(body, k+1)
		if i == n || body[i] != ':' {
			return cut{}, false
		}
		i = provider.SkipSpace(body, i+1)
		j, ok := provider.ValueEnd(body, i)
		if !ok {
			return cut{}, false
		}
		if name == items {
			s.arr = len(s.fields)
		}
		s.fields = append(s.fields, span{name, i, j})
		i = provider.SkipSpace(body, j)
		if i == n {
			return cut{}, false
		}
		if body[i] == '}' {
			if provider.SkipSpace(body, i+1) != n || s.arr < 0 {
				return cut{}, false
			}
			if s.arr != arr {
				f := s.fields[s.arr]
				if body[f.start] != '[' {
					return cut{}, false
				}
				s.els = s.els[:0]
				if _, ok := s.elementsFrom(f.start); !ok {
					return cut{}, false
				}
			}
			return s, true
		}
		if body[i] != ',' {
			return cut{}, false
		}
		i = provider.SkipSpace(body, i+1)
	}
}

// elementsFrom appends to s.els the elements of an array from i: its opening bracket, or the end
// of an element already in s.els. It returns the offset just past the closing bracket.
func (s *cut) elementsFrom(i int) (int, bool) {
	body, n := s.body, len(s.body)
	value := body[i] == '[' // an element comes next, not what follows one
	if value {
		i = provider.SkipSpace(body, i+1)
		if i < n && body[i] == ']' {
			return i + 1, true
		}
	}
	for {
		if value {
			j, ok := provider.ValueEnd(body, i)
			if !ok {
				return 0, false
			}
			s.els = append(s.els, span{start: i, end: j})
			i = j
		}
		value = true
		i = provider.SkipSpace(body, i)
		switch {
		case i == n:
			return 0, false
		case body[i] == ']':
			return i + 1, true
		case body[i] != ',':
			return 0, false
		}
		i = provider.SkipSpace(body, i+1)
	}
}

// parts returns the cut as the simulator reads it: the fields' raw values by name (the last of
// two so named wins) and the array's elements.
func (s *cut) parts() (map[string][]byte, [][]byte) {
	f := make(map[string][]byte, len(s.fields))
	for _, sp := range s.fields {
		f[sp.name] = s.body[sp.start:sp.end]
	}
	var els [][]byte
	for _, e := range s.els {
		els = append(els, s.body[e.start:e.end])
	}
	return f, els
}
