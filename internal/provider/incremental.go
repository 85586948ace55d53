package provider

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
)

// Validator judges request bodies as Model.Validate does. A Model's Validate is one; so is an
// Incremental, which judges the successive requests of one conversation by what changed.
type Validator interface {
	Validate(body []byte) *Violation
}

// ConversationValidator is the optional interface of a Model whose validation can be incremental:
// NewValidator returns a Validator for the successive requests of one conversation, whose every
// verdict is exactly the Model's Validate on the same bytes.
type ConversationValidator interface {
	NewValidator() Validator
}

// ValidatorFor returns the validator one conversation's requests to m are judged by: m's
// incremental one where it has one, else m itself.
func ValidatorFor(m Model) Validator {
	if cv, ok := m.(ConversationValidator); ok {
		return cv.NewValidator()
	}
	return m
}

// Sequence is a wire's judgement of the array a request body carries its conversation in (its
// messages, or its input items), one element at a time. It is built by the wire's begin function
// from the body without the array's elements, having judged every rule outside the array there.
//
// A Sequence judges validity only: which rule is broken, and where, is the whole validator's to
// say. It may refuse what the whole validator accepts (the verdict is then the whole validator's,
// only slower), but must never accept what the whole validator refuses.
type Sequence interface {
	// Push judges the next element, the raw bytes of one JSON value, after those pushed before
	// it, and reports whether every rule that can be judged so far still holds. After a false,
	// the Sequence is discarded.
	Push(elem []byte) bool
	// Pop undoes the last successful Push.
	Pop()
	// End reports whether the elements pushed so far make a whole request: the rules about how
	// a request ends (and that it has any element) hold.
	End() bool
}

// maxElementDepth bounds the nesting of one array element the incremental path will judge, well
// inside encoding/json's own limit for the whole body; deeper elements go to the whole validator.
const maxElementDepth = 1000

// Incremental judges the successive request bodies of one conversation and returns for each
// exactly what the whole-body validator returns, while parsing only what changed since the last
// body it accepted. It relies on how requests grow: everything outside the conversation's array
// (model, system prompt, tools, settings) is byte-for-byte the same from one request to the next,
// and the array's first elements are too, the change being at its end.
//
// Why the verdict is exact. encoding/json decodes an object's fields independently, so a body
// made of the accepted body's bytes outside the array and a new array decodes to the same
// settings and to the new elements, each decoded as it would be alone. The incremental path
// accepts a body only when: the bytes outside the array are the accepted body's (or, the first
// time, judged valid as the body with an empty array); the array's key is the only top-level key
// encoding/json would match to it; the array's elements are separated by commas and each is one
// valid JSON value no deeper than maxElementDepth; and the wire's Sequence, which judges every
// rule over the elements, accepts them. Anything else — any refusal, any doubt — is decided by
// the whole validator, so a refused body is described exactly as the whole validator describes
// it. The wire packages' property tests and fuzz targets check the equality.
//
// An Incremental keeps the last body it accepted and compares the next against it: the caller
// must not change a body after passing it. It is not safe for concurrent use; it belongs to one
// conversation's loop.
type Incremental struct {
	whole func([]byte) *Violation
	key   string
	begin func(skeleton []byte) (Sequence, bool)

	prev []byte   // the last body accepted, or nil
	head int      // prev[:head] ends with the array's '['
	tail int      // prev[tail:] starts with the array's ']'
	ends []int    // the offset in prev just past each element
	seq  Sequence // the elements of prev, judged
}

// NewIncremental returns an Incremental for a wire whose whole-body validator is whole and whose
// conversation is the array under the top-level key key. begin judges a body whose array is
// empty (every rule outside the array, as whole would) and returns the Sequence to push the
// elements into, or false when whole might refuse it.
func NewIncremental(whole func([]byte) *Violation, key string, begin func(skeleton []byte) (Sequence, bool)) *Incremental {
	return &Incremental{whole: whole, key: key, begin: begin}
}

// Validate returns exactly what the whole validator returns for body.
func (v *Incremental) Validate(body []byte) *Violation {
	if v.seq != nil && v.warm(body) {
		return nil
	}
	v.reset()
	if v.cold(body) {
		return nil
	}
	v.reset()
	return v.whole(body)
}

func (v *Incremental) reset() {
	v.prev, v.seq, v.ends = nil, nil, v.ends[:0]
}

// warm judges body against the last body accepted: the same bytes outside the array, the
// elements both share kept, the rest pushed.
func (v *Incremental) warm(body []byte) bool {
	tail := v.prev[v.tail:]
	end := len(body) - len(tail)
	if end < v.head || !bytes.Equal(body[end:], tail) {
		return false
	}
	same := CommonPrefix(body[:end], v.prev[:v.tail])
	if same < v.head {
		return false
	}
	// The elements wholly inside the common prefix stand; those after are undone.
	k := sort.SearchInts(v.ends, same+1)
	for len(v.ends) > k {
		v.seq.Pop()
		v.ends = v.ends[:len(v.ends)-1]
	}
	from := v.head
	if k > 0 {
		from = v.ends[k-1]
	}
	if !v.extend(body, from, end, k > 0) || !v.seq.End() {
		return false
	}
	v.prev, v.tail = body, end
	return true
}

// cold judges body with nothing kept: it finds the array, judges the rest of the body with the
// array emptied, and pushes every element.
func (v *Incremental) cold(body []byte) bool {
	head, tail, ok := findArray(body, v.key)
	if !ok {
		return false
	}
	skeleton := make([]byte, 0, head+len(body)-tail)
	skeleton = append(append(skeleton, body[:head]...), body[tail:]...)
	seq, ok := v.begin(skeleton)
	if !ok {
		return false
	}
	v.seq = seq
	if !v.extend(body, head, tail, false) || !v.seq.End() {
		return false
	}
	v.prev, v.head, v.tail = body, head, tail
	return true
}

// extend pushes the elements of body[from:end], a run of array elements after the first k (after
// says k > 0: a comma comes before the next), recording where each ends.
func (v *Incremental) extend(body []byte, from, end int, after bool) bool {
	i := from
	for {
		i = skipSpace(body, i, end)
		if i == end {
			return true
		}
		if after {
			if body[i] != ',' {
				return false
			}
			i = skipSpace(body, i+1, end)
		}
		j, ok := skipValue(body, i, end, maxElementDepth)
		if !ok || !json.Valid(body[i:j]) || !v.seq.Push(body[i:j]) {
			return false
		}
		v.ends = append(v.ends, j)
		i, after = j, true
	}
}

// CommonPrefix is the length of the longest common prefix of a and b.
func CommonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	// Compare in long runs first: bytes.Equal is far faster than a byte loop.
	i := 0
	for step := 4096; i+step <= n; i += step {
		if !bytes.Equal(a[i:i+step], b[i:i+step]) {
			break
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// findArray finds, in a body that is one JSON object, the array under key: head just past its
// '[' and tail at its ']'. It refuses (false) a body it cannot read plainly: not an object, a
// top-level key that is escaped or not ASCII, another key encoding/json would match to key
// (it matches case-insensitively), or key's value not an array.
func findArray(body []byte, key string) (head, tail int, ok bool) {
	n := len(body)
	i := skipSpace(body, 0, n)
	if i == n || body[i] != '{' {
		return 0, 0, false
	}
	found := false
	i = skipSpace(body, i+1, n)
	if i < n && body[i] == '}' {
		return 0, 0, false
	}
	for {
		if i == n || body[i] != '"' {
			return 0, 0, false
		}
		k := i + 1
		for k < n && body[k] != '"' {
			if body[k] == '\\' || body[k] >= 0x80 {
				return 0, 0, false
			}
			k++
		}
		if k == n {
			return 0, 0, false
		}
		name := body[i+1 : k]
		i = skipSpace(body, k+1, n)
		if i == n || body[i] != ':' {
			return 0, 0, false
		}
		i = skipSpace(body, i+1, n)
		j, ok := skipValue(body, i, n, maxElementDepth+1)
		if !ok {
			return 0, 0, false
		}
		if bytes.EqualFold(name, []byte(key)) {
			if found || string(name) != key || body[i] != '[' || body[j-1] != ']' {
				return 0, 0, false
			}
			found, head, tail = true, i+1, j-1
		}
		i = skipSpace(body, j, n)
		if i == n {
			return 0, 0, false
		}
		if body[i] == '}' {
			break
		}
		if body[i] != ',' {
			return 0, 0, false
		}
		i = skipSpace(body, i+1, n)
	}
	if skipSpace(body, i+1, n) != n {
		return 0, 0, false
	}
	return head, tail, found
}

func skipSpace(b []byte, i, end int) int {
	for i < end && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i], reading no further than end:
// strings by their quotes, objects and arrays by their brackets (no deeper than depth), other
// values up to the next delimiter. It finds where a value ends, not whether it is valid.
func skipValue(b []byte, i, end, depth int) (int, bool) {
	if i >= end {
		return 0, false
	}
	switch b[i] {
	case '"':
		j := skipString(b, i, end)
		return j, j > 0
	case '{', '[':
	default:
		j := i
		for j < end {
			switch b[j] {
			case ',', ']', '}', ' ', '\n', '\r', '\t', '"', '{', '[':
				return j, j > i
			}
			j++
		}
		return j, j > i
	}
	level := 0
	for i < end {
		switch b[i] {
		case '"':
			if i = skipString(b, i, end); i < 0 {
				return 0, false
			}
			continue
		case '{', '[':
			if level++; level > depth {
				return 0, false
			}
		case '}', ']':
			if level--; level == 0 {
				return i + 1, true
			}
		}
		i++
	}
	return 0, false
}

// skipString returns the offset just past the string starting at b[i], or -1 if it does not end
// before end. It jumps from quote to quote (bytes.IndexByte is vectorised); a quote after an odd
// run of backslashes is escaped.
func skipString(b []byte, i, end int) int {
	for i++; i < end; {
		q := bytes.IndexByte(b[i:end], '"')
		if q < 0 {
			return -1
		}
		q += i
		k := q
		for k > i && b[k-1] == '\\' {
			k--
		}
		if (q-k)%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
	return -1
}

// SkipSpace returns the offset of the first byte at or after b[i] that is not JSON white space.
func SkipSpace(b []byte, i int) int { return skipSpace(b, i, len(b)) }

// ValueEnd returns the end of the JSON value starting at b[i]: strings by their quotes, objects
// and arrays by their brackets, other values up to the next delimiter. It finds where a value
// ends, not whether it is valid (a validator judges that).
func ValueEnd(b []byte, i int) (int, bool) { return skipValue(b, i, len(b), math.MaxInt) }
