package record

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is the payload reader: a strict JSON reader that decodes straight into the payload
// types through their members (decode.go), reading each byte once (a string with escapes is first
// measured by a quick search for its closing quote, so that it is allocated once). It accepts
// exactly the JSON that encoding/json's Decoder (unknown fields disallowed, trailing data refused)
// accepts for the same type and yields the same values, with two deliberate refusals more: a field
// named twice in one object, and a field named in another case ("Text" for "text"), which
// encoding/json matches by folding case. differential_test.go holds it to that.

// maxDepth is the deepest nesting of objects and arrays encoding/json's scanner allows.
const maxDepth = 10000

// errDuplicateField and errFieldCase mark the two refusals encoding/json would not make.
var (
	errDuplicateField = errors.New("duplicate field")
	errFieldCase      = errors.New("field name in a different case")
)

// payloadError is a refusal of a payload, with the byte offset where reading stopped.
type payloadError struct {
	msg  string
	off  int
	kind error // errDuplicateField, errFieldCase or nil
}

func (e *payloadError) Error() string {
	return fmt.Sprintf("%s (at byte %d of the payload)", e.msg, e.off)
}
func (e *payloadError) Unwrap() error { return e.kind }

// reader holds one payload being decoded. Its error is sticky: the first refusal is kept, later
// ones are dropped, and every loop stops once r.err is set.
type reader struct {
	data  []byte
	pos   int
	depth int
	max   int // the deepest nesting allowed, the payload object being level 1
	err   error
}

func (r *reader) fail(format string, a ...any) { r.failAs(nil, format, a...) }

func (r *reader) failAs(kind error, format string, a ...any) {
	if r.err == nil {
		r.err = &payloadError{msg: fmt.Sprintf(format, a...), off: r.pos, kind: kind}
	}
}

// peek returns the byte at the read position, or 0 at the end of the data.
func (r *reader) peek() byte {
	if r.pos < len(r.data) {
		return r.data[r.pos]
	}
	return 0
}

func (r *reader) ws() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

// enter opens an object or array at the read position.
func (r *reader) enter() bool {
	r.depth++
	if r.depth > r.max {
		r.fail("objects and arrays nest more than %d deep", r.max)
		return false
	}
	r.pos++
	r.ws()
	return true
}

// more is called after a member or element: it consumes "," (true) or the closing byte (false).
func (r *reader) more(closing byte) bool {
	r.ws()
	switch r.peek() {
	case ',':
		r.pos++
		r.ws()
		return true
	case closing:
		r.pos++
		r.depth--
		return false
	}
	r.fail("expected ',' or '%c', found %s", closing, r.found())
	return false
}

// found describes the byte at the read position for a refusal.
func (r *reader) found() string {
	switch c := r.peek(); {
	case r.pos >= len(r.data):
		return "the end of the payload"
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	case c == 't' || c == 'f':
		return "a boolean"
	default:
		return fmt.Sprintf("%q", c)
	}
}

// literal consumes word (true, false or null) or refuses.
func (r *reader) literal(word string) bool {
	if len(r.data)-r.pos >= len(word) && string(r.data[r.pos:r.pos+len(word)]) == word {
		r.pos += len(word)
		return true
	}
	r.fail("invalid literal, expected %s", word)
	return false
}

// mismatch refuses a value of the wrong type.
func (r *reader) mismatch(want string) { r.fail("expected %s, found %s", want, r.found()) }

// ---- strings ------------------------------------------------------------------------------------

// plain returns the index of the first byte at or after i that ends a run of plain string bytes —
// a '"', a '\\' or a control byte — or len(b), and whether the run is all ASCII. It looks at eight
// bytes at a time: the lowest flagged byte of a word is always a true stop (a borrow only moves
// upward), so the run ends there.
func plain(b []byte, i int) (int, bool) {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	var hi uint64
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q := w ^ (ones * '"')
		s := w ^ (ones * '\\')
		if m := ((w-ones*0x20)&^w | (q-ones)&^q | (s-ones)&^s) & highs; m != 0 {
			n := bits.TrailingZeros64(m) / 8
			hi |= w & (1<<(8*n) - 1)
			return i + n, hi&highs == 0
		}
		hi |= w
	}
	for ; i < len(b); i++ {
		c := b[i]
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		hi |= uint64(c)
	}
	return i, hi&highs == 0
}

// str decodes a string value, or leaves *d alone for null.
func (r *reader) str(d *string) {
	switch r.peek() {
	case '"':
		start := r.pos + 1
		end, ascii := plain(r.data, start)
		if end < len(r.data) && r.data[end] == '"' && (ascii || utf8.Valid(r.data[start:end])) {
			r.pos = end + 1
			*d = string(r.data[start:end])
			return
		}
		*d = r.unquote(start, end, ascii)
	case 'n':
		r.literal("null")
	default:
		r.mismatch("a string")
	}
}

// key reads a field name (the read position is at its '"') and the ':' after it.
func (r *reader) key() []byte {
	start := r.pos + 1
	end, ascii := plain(r.data, start)
	var k []byte
	if end < len(r.data) && r.data[end] == '"' && (ascii || utf8.Valid(r.data[start:end])) {
		r.pos = end + 1
		k = r.data[start:end]
	} else {
		k = []byte(r.unquote(start, end, ascii))
	}
	r.ws()
	if r.err == nil && r.peek() != ':' {
		r.fail("expected ':' after field name %q, found %s", k, r.found())
	}
	r.pos++
	r.ws()
	return k
}

// unquote decodes a string whose content starts at start, where plain stopped at end (ascii says
// whether data[start:end] is all ASCII), and moves past it. It matches encoding/json byte for byte:
// escapes decoded, a \u escape of a lone or mismatched surrogate and every byte of invalid UTF-8
// becoming U+FFFD. The result is allocated once, sized by the string's raw length (escapes only
// shrink it), and never copied.
func (r *reader) unquote(start, end int, ascii bool) string {
	data := r.data
	var b strings.Builder
	b.Grow(closingQuote(data, start, end) - start)
	for {
		if ascii {
			b.Write(data[start:end])
		} else {
			writeUTF8(&b, data[start:end])
		}
		if end >= len(data) {
			r.pos = end
			r.fail("unterminated string")
			return ""
		}
		switch c := data[end]; {
		case c == '"':
			r.pos = end + 1
			return b.String()
		case c < 0x20:
			r.pos = end
			r.fail("control character %q in a string (it must be escaped)", c)
			return ""
		case end+1 >= len(data):
			r.pos = end
			r.fail("unterminated string")
			return ""
		}
		// A backslash.
		next := end + 2
		switch e := data[end+1]; e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			rr := hex4(data, end+2)
			if rr < 0 {
				r.pos = end
				r.fail(`invalid \u escape in a string`)
				return ""
			}
			next = end + 6
			if utf16.IsSurrogate(rr) {
				lo := rune(-1)
				if next+1 < len(data) && data[next] == '\\' && data[next+1] == 'u' {
					lo = hex4(data, next+2)
				}
				if pair := utf16.DecodeRune(rr, lo); pair != unicode.ReplacementChar {
					b.WriteRune(pair)
					next += 6
					break
				}
				rr = unicode.ReplacementChar
			}
			b.WriteRune(rr)
		default:
			r.pos = end
			r.fail("invalid escape %q in a string", data[end:end+2])
			return ""
		}
		start = next
		end, ascii = plain(data, start)
	}
}

// closingQuote returns the index of the quote that closes the string whose content starts at start,
// searching from i, or len(data): the first '"' after an even run of backslashes.
func closingQuote(data []byte, start, i int) int {
	for {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return len(data)
		}
		j += i
		k := j
		for k > start && data[k-1] == '\\' {
			k--
		}
		if (j-k)%2 == 0 {
			return j
		}
		i = j + 1
	}
}

// writeUTF8 writes s with every byte of invalid UTF-8 replaced by U+FFFD, as encoding/json does.
func writeUTF8(b *strings.Builder, s []byte) {
	if utf8.Valid(s) {
		b.Write(s)
		return
	}
	for len(s) > 0 {
		rr, n := utf8.DecodeRune(s)
		if rr == utf8.RuneError && n == 1 {
			b.WriteRune(rr)
		} else {
			b.Write(s[:n])
		}
		s = s[n:]
	}
}

// hex4 reads four hex digits at b[i:], or returns -1.
func hex4(b []byte, i int) rune {
	if i+4 > len(b) {
		return -1
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// ---- numbers and booleans -----------------------------------------------------------------------

// integer scans a JSON number at b[i:] that must be an integer: it returns the sign, the magnitude
// and where the number ends, or ok false for a malformed number, a fraction, an exponent or a
// magnitude beyond uint64.
func integer(b []byte, i int) (neg bool, mag uint64, end int, ok bool) {
	if i < len(b) && b[i] == '-' {
		neg = true
		i++
	}
	start := i
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if mag > (math.MaxUint64-d)/10 {
			return neg, 0, i, false
		}
		mag = mag*10 + d
	}
	switch {
	case i == start, b[start] == '0' && i > start+1:
		return neg, 0, i, false
	case i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E'):
		return neg, 0, i, false
	}
	return neg, mag, i, true
}

// int64 decodes an integer that fits in an int64, or leaves *d alone for null.
func (r *reader) int64(d *int64) {
	switch c := r.peek(); {
	case c == '-' || c >= '0' && c <= '9':
		neg, mag, end, ok := integer(r.data, r.pos)
		switch {
		case !ok:
		case neg && mag <= 1<<63:
			r.pos = end
			*d = -int64(mag)
			return
		case !neg && mag <= math.MaxInt64:
			r.pos = end
			*d = int64(mag)
			return
		}
		r.fail("expected an integer that fits in 64 bits")
	case c == 'n':
		r.literal("null")
	default:
		r.mismatch("an integer")
	}
}

// int decodes an integer that fits in an int, or leaves *d alone for null.
func (r *reader) int(d *int) {
	v := int64(*d)
	r.int64(&v)
	if r.err == nil {
		if int64(int(v)) != v {
			r.fail("expected an integer that fits in an int")
			return
		}
		*d = int(v)
	}
}

// uint32 decodes an unsigned integer that fits in 32 bits, or leaves *d alone for null.
func (r *reader) uint32(d *uint32) {
	switch c := r.peek(); {
	case c == '-' || c >= '0' && c <= '9':
		neg, mag, end, ok := integer(r.data, r.pos)
		if ok && !neg && mag <= math.MaxUint32 {
			r.pos = end
			*d = uint32(mag)
			return
		}
		r.fail("expected an unsigned integer that fits in 32 bits")
	case c == 'n':
		r.literal("null")
	default:
		r.mismatch("an unsigned integer")
	}
}

// bool decodes true or false, or leaves *d alone for null.
func (r *reader) bool(d *bool) {
	switch r.peek() {
	case 't':
		if r.literal("true") {
			*d = true
		}
	case 'f':
		if r.literal("false") {
			*d = false
		}
	case 'n':
		r.literal("null")
	default:
		r.mismatch("a boolean")
	}
}

// optInt decodes an integer into a fresh *int, or sets *d to nil for null.
func (r *reader) optInt(d **int) {
	if r.peek() == 'n' {
		if r.literal("null") {
			*d = nil
		}
		return
	}
	v := new(int)
	r.int(v)
	*d = v
}

// ---- raw values ---------------------------------------------------------------------------------

// raw checks one JSON value of any shape and keeps a copy of its bytes as written, as
// json.RawMessage does (null included, as the four bytes "null").
func (r *reader) raw(d *json.RawMessage) {
	start := r.pos
	r.skip()
	if r.err == nil {
		*d = append(json.RawMessage(nil), r.data[start:r.pos]...)
	}
}

// skip checks one JSON value with encoding/json's grammar and moves past it.
func (r *reader) skip() {
	switch c := r.peek(); {
	case c == '{':
		if !r.enter() {
			return
		}
		if r.peek() == '}' {
			r.pos++
			r.depth--
			return
		}
		for r.err == nil {
			if r.peek() != '"' {
				r.fail("expected a field name, found %s", r.found())
				return
			}
			r.skipString()
			r.ws()
			if r.err == nil && r.peek() != ':' {
				r.fail("expected ':' after a field name, found %s", r.found())
				return
			}
			r.pos++
			r.ws()
			r.skip()
			if r.err != nil || !r.more('}') {
				return
			}
		}
	case c == '[':
		if !r.enter() {
			return
		}
		if r.peek() == ']' {
			r.pos++
			r.depth--
			return
		}
		for r.err == nil {
			r.skip()
			if r.err != nil || !r.more(']') {
				return
			}
		}
	case c == '"':
		r.skipString()
	case c == '-' || c >= '0' && c <= '9':
		r.skipNumber()
	case c == 't':
		r.literal("true")
	case c == 'f':
		r.literal("false")
	case c == 'n':
		r.literal("null")
	default:
		r.fail("expected a JSON value, found %s", r.found())
	}
}

// skipString checks a string's escapes and control bytes (not its UTF-8, which a raw value keeps
// as written) and moves past it.
func (r *reader) skipString() {
	data := r.data
	i := r.pos + 1
	for {
		i, _ = plain(data, i)
		switch {
		case i >= len(data):
			r.pos = i
			r.fail("unterminated string")
			return
		case data[i] == '"':
			r.pos = i + 1
			return
		case data[i] < 0x20:
			r.pos = i
			r.fail("control character %q in a string (it must be escaped)", data[i])
			return
		}
		if i+1 >= len(data) {
			r.pos = i
			r.fail("unterminated string")
			return
		}
		switch data[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if hex4(data, i+2) < 0 {
				r.pos = i
				r.fail(`invalid \u escape in a string`)
				return
			}
			i += 6
		default:
			r.pos = i
			r.fail("invalid escape %q in a string", data[i:i+2])
			return
		}
	}
}

// skipNumber checks a number against JSON's grammar and moves past it.
func (r *reader) skipNumber() {
	data, i := r.data, r.pos
	digits := func() bool {
		start := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		return i > start
	}
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case !digits():
		r.pos = i
		r.fail("invalid number")
		return
	}
	if i < len(data) && data[i] == '.' {
		i++
		if !digits() {
			r.pos = i
			r.fail("invalid number")
			return
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if !digits() {
			r.pos = i
			r.fail("invalid number")
			return
		}
	}
	r.pos = i
}
