package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// MinSecret is the shortest value Secrets takes. A shorter value (a local server's placeholder key
// such as "ollama") would turn up by chance in ordinary text, and replacing it there would mangle
// that text; Add refuses it.
const MinSecret = 8

// maxSkip is the most separators (line breaks, and for hex blanks and colons) a match steps over
// between two bytes of an encoded form; a JSON escape such as \n counts as one.
const maxSkip = 4

// maxHold bounds what Safe holds back from a stream: past it, text is released even if a secret
// could still be forming (no secret form comes near it).
const maxHold = 64 << 10

// Secrets is a set of exact secret values, the keys a process holds, that its Redact takes out of
// text in every form a program is likely to print them in:
//
//   - the value itself, and as it reads inside a JSON string or a URL;
//   - its base64, standard and URL alphabets, padded or not, whole and as the core it leaves in a
//     larger blob at each of the three byte alignments it can sit at (the characters that depend
//     only on the value's own bits, as GitHub Actions masks them);
//   - its hex, lower and upper case.
//
// A form is found whole across line breaks (base64 and xxd -p wrap their output) and JSON escapes
// of them, hex also across blanks and colons (od -An -tx1, xxd -p -c 4); and in pieces, wherever
// sixteen bytes or more of one stand together (minFrag): a form cut off by a truncation, split by
// cut or fold, shown a line at a time in a dump's ASCII column. Each becomes [REDACTED:<name>];
// then the well-known key shapes are redacted as Redact does.
//
// It does not catch a value transformed any other way: reversed, spelt out a character at a time
// (od -c), hex grouped with offsets (xxd, hexdump -C: only the ASCII column's pieces of sixteen
// are caught), compressed, base32, or cut into pieces shorter than sixteen bytes. The redactor is
// a net for echoes (a provider repeating the key in an error, a tool printing its environment);
// the non-dumpable process (cmd/rein) is what keeps a tool from reading the keys at all.
//
// The zero value holds none and is ready to use. It is safe for concurrent use; Add may be called
// while others redact.
type Secrets struct {
	mu sync.Mutex // serialises Add
	m  atomic.Pointer[matcher]
}

// Add adds value to the set under name, which the placeholder shows. A value shorter than
// MinSecret is not added (see MinSecret); Add reports whether value is in the set.
func (s *Secrets) Add(name, value string) bool {
	if len(value) < MinSecret {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.m.Load()
	if old != nil && old.values[value] {
		return true
	}
	m := &matcher{values: map[string]bool{value: true}}
	if old != nil {
		for v := range old.values {
			m.values[v] = true
		}
		m.pats = append(m.pats, old.pats...)
	}
	for _, f := range forms(value) {
		m.pats = append(m.pats, pattern{text: f.text, name: name, hex: f.hex})
	}
	m.index()
	s.m.Store(m)
	return true
}

// Len returns how many values the set holds.
func (s *Secrets) Len() int {
	if m := s.m.Load(); m != nil {
		return len(m.values)
	}
	return 0
}

// Redact returns text with every form of every value in the set replaced by [REDACTED:<name>],
// and then every well-known key shape by [REDACTED:<kind>]. Like the package's Redact, it is
// idempotent and returns clean text as it is, without a copy. A nil *Secrets holds nothing.
func (s *Secrets) Redact(text string) string {
	if s == nil {
		return Redact(text)
	}
	m := s.m.Load()
	if m == nil {
		return Redact(text)
	}
	for range 8 {
		out := m.replace(text)
		if out == text {
			break
		}
		text = out
	}
	return Redact(text)
}

// Safe says how much of streamed text can be released now: the length of its longest prefix that
// no secret crosses — neither one found in full, nor one the text could still be beginning (a
// value's form cut off at the end, a key shape still growing, "Bearer " waiting for its token, a
// private key block not yet ended). A stream releases Redact(text[:n]) and holds text[n:] back
// until more comes, or until it ends, when all of it is released redacted. A secret that arrives
// split across pieces is so redacted whole.
func (s *Secrets) Safe(text string) int {
	var m *matcher
	if s != nil {
		m = s.m.Load()
	}
	p := heldTail(text)
	var spans []span
	if m != nil {
		var open int
		spans, open = m.find(text)
		p = min(p, open, m.openRun(text))
	}
	// Key shapes found in full hold the cut back too when it would fall inside them; one that
	// reaches the end could still grow.
	for i := 0; i < len(text); i++ {
		if !starts[text[i]] {
			continue
		}
		end, _, keep := match(text, i)
		if end < 0 {
			continue
		}
		spans = append(spans, span{start: i + keep, end: end})
		if end == len(text) {
			p = min(p, i)
		}
		i = end - 1
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].start > spans[b].start })
	for moved := true; moved; {
		moved = false
		for _, sp := range spans {
			if sp.start < p && p < sp.end {
				p, moved = sp.start, true
			}
		}
	}
	if len(text)-p > maxHold {
		p = len(text) - maxHold
	}
	return p
}

// heldTail returns where the text's trailing candidate for a key shape begins: its last run of
// token bytes (a key is one), with a "Bearer" before it, or a private key block's header not yet
// ended by its line break; len(text) when there is none.
func heldTail(s string) int {
	p := len(s)
	for p > 0 && isBearerByte(s[p-1]) && len(s)-p < 512 {
		p--
	}
	q := p
	for q > 0 && (s[q-1] == ' ' || s[q-1] == '\t') {
		q--
	}
	const word = "bearer"
	if q >= len(word) && strings.EqualFold(s[q-len(word):q], word) {
		p = q - len(word)
	}
	// A private key block's header is judged when its line is complete.
	const begin = "-----BEGIN "
	if i := strings.LastIndex(s, begin); i >= 0 && !strings.ContainsAny(s[i:], "\r\n") {
		p = min(p, i)
	}
	for k := min(len(s), len(begin)); k > 0; k-- {
		if strings.HasSuffix(s, begin[:k]) {
			p = min(p, len(s)-k)
			break
		}
	}
	return p
}

// ---- the forms of a value -----------------------------------------------------------------------

type form struct {
	text string
	hex  bool
}

// forms lists every form of v that Redact looks for, without repeats.
func forms(v string) []form {
	seen := map[string]bool{}
	var out []form
	add := func(s string, hex bool) {
		if len(s) >= MinSecret && !seen[s] {
			seen[s] = true
			out = append(out, form{s, hex})
		}
	}
	add(v, false)
	if b, err := json.Marshal(v); err == nil {
		add(string(b[1:len(b)-1]), false)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil {
		s := strings.TrimSpace(b.String())
		add(s[1:len(s)-1], false)
	}
	add(url.QueryEscape(v), false)
	add(url.PathEscape(v), false)
	for _, s := range base64Forms([]byte(v)) {
		add(s, false)
		add(strings.NewReplacer("+", "-", "/", "_").Replace(s), false)
	}
	h := hex.EncodeToString([]byte(v))
	add(h, true)
	add(strings.ToUpper(h), true)
	return out
}

// base64Forms returns v's standard base64, padded and not, and the core v leaves in a larger blob
// at each alignment: with a bytes before it (a = 0, 1, 2 modulo 3), the characters whose six bits
// all come from v.
func base64Forms(v []byte) []string {
	out := []string{base64.StdEncoding.EncodeToString(v), base64.RawStdEncoding.EncodeToString(v)}
	for a := range 3 {
		buf := make([]byte, a+len(v))
		copy(buf[a:], v)
		enc := base64.RawStdEncoding.EncodeToString(buf)
		from := (8*a + 5) / 6      // the first character with no bit of the a bytes before
		to := 8 * (a + len(v)) / 6 // past the last character with no bit of what comes after
		if to > from {
			out = append(out, enc[from:to])
		}
	}
	return out
}

// ---- matching -----------------------------------------------------------------------------------

type pattern struct {
	text string
	name string
	hex  bool // blanks and colons may separate its bytes, as well as line breaks
}

type span struct {
	start, end int
	name       string
}

// minFrag is the shortest run of a form found on its own: a key cut by a truncation (head -c, a
// tool's elided middle, a provider's clipped message), split into pieces (cut, fold) or shown a
// line at a time (the ASCII column of xxd) is redacted wherever sixteen or more bytes of one of
// its forms stand together. Sixteen bytes of base64 or of a key's random part are never found by
// chance; a key's public prefix is shorter (sk-ant-api03- is 13).
const minFrag = 16

// gram is the length of the pieces runs are found by. A run of minFrag = 2*gram bytes holds a
// whole gram at a position that is a multiple of gram, so only those positions are looked up.
const gram = minFrag / 2

// gramRef is where a gram lies in a pattern.
type gramRef struct{ pat, off int32 }

// matcher is one immutable generation of a Secrets: its values and their patterns, indexed by
// first byte and by every gram.
type matcher struct {
	values map[string]bool
	pats   []pattern
	first  [256][]int32
	pairs  [256 * 256 / 64]uint64 // the first two bytes of every pattern, as a bit set
	grams  map[uint64][]gramRef
	bloom  []uint64 // a bit per hash of a gram: most positions are passed without a map lookup
}

const bloomBits = 20

func bloomBit(g uint64) uint64 { return g * 0x9E3779B97F4A7C15 >> (64 - bloomBits) }

func (m *matcher) index() {
	m.grams = map[uint64][]gramRef{}
	m.bloom = make([]uint64, 1<<bloomBits/64)
	for i, p := range m.pats {
		c := p.text[0]
		m.first[c] = append(m.first[c], int32(i))
		pair := int(c)<<8 | int(p.text[1])
		m.pairs[pair/64] |= 1 << (pair % 64)
		for o := 0; o+gram <= len(p.text); o++ {
			g := load8(p.text, o)
			m.grams[g] = append(m.grams[g], gramRef{int32(i), int32(o)})
			h := bloomBit(g)
			m.bloom[h/64] |= 1 << (h % 64)
		}
	}
}

func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// replace returns s with every span find reports replaced by its placeholder.
func (m *matcher) replace(s string) string {
	spans, _ := m.find(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString("[REDACTED:")
		b.WriteString(sp.name)
		b.WriteByte(']')
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// find returns the spans of s that hold a form of a value (whole, across separators; or a run of
// at least minFrag bytes of one; or at least minFrag bytes of one cut off by the end of s),
// merged where they overlap, in order; and where the earliest form or run that more text could
// still extend begins (len(s) when none could).
func (m *matcher) find(s string) ([]span, int) {
	var spans []span
	open := len(s)
	gramFrom := 0 // grams starting before this lie in a run already found
	for i := 0; i < len(s); i++ {
		cands := m.first[s[i]]
		if len(cands) > 0 && i+1 < len(s) && !separator[s[i+1]] {
			if pair := int(s[i])<<8 | int(s[i+1]); m.pairs[pair/64]&(1<<(pair%64)) == 0 {
				cands = nil
			}
		}
		for _, pi := range cands {
			p := &m.pats[pi]
			end, k := matchAt(s, i, p)
			switch {
			case end >= 0:
				spans = append(spans, span{i, end, p.name})
			case k > 0: // cut off by the end of s
				open = min(open, i)
				if k >= minFrag {
					spans = append(spans, span{i, len(s), p.name})
				}
			}
		}
		if i%gram != 0 || i < gramFrom || i+gram > len(s) {
			continue
		}
		g := load8(s, i)
		if h := bloomBit(g); m.bloom[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, ref := range m.grams[g] {
			p := m.pats[ref.pat].text
			a, b := i, i+gram
			for o := int(ref.off); a > 0 && o > 0 && s[a-1] == p[o-1]; o-- {
				a--
			}
			for o := int(ref.off) + gram; b < len(s) && o < len(p) && s[b] == p[o]; o++ {
				b++
			}
			if b == len(s) {
				open = min(open, a) // more text could make it a run, or a longer one
			}
			if b-a >= minFrag {
				spans = append(spans, span{a, b, m.pats[ref.pat].name})
				gramFrom = max(gramFrom, b-gram+1)
			}
		}
	}
	if len(spans) == 0 {
		return nil, open
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].start < spans[b].start })
	out := spans[:1]
	for _, sp := range spans[1:] {
		if last := &out[len(out)-1]; sp.start <= last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		out = append(out, sp)
	}
	// A span never starts right after a backslash: in JSON the two would be an escape, and the
	// placeholder after a lone backslash is not JSON. The first byte of the form stays.
	for i := range out {
		if a := out[i].start; a > 0 && s[a-1] == '\\' && a+1 < out[i].end {
			out[i].start++
		}
	}
	return out, open
}

// openRun returns where the longest tail of s shorter than minFrag that is found inside some
// pattern begins (len(s) if none): more text could make it a run find redacts.
func (m *matcher) openRun(s string) int {
	for k := min(minFrag-1, len(s)); k > 0; k-- {
		tail := s[len(s)-k:]
		for i := range m.pats {
			if strings.Contains(m.pats[i].text, tail) {
				return len(s) - k
			}
		}
	}
	return len(s)
}

// matchAt matches p at s[i]. It returns the end of the match, or -1 and how many bytes of p
// matched before s ended (0 when the match failed).
func matchAt(s string, i int, p *pattern) (end, cut int) {
	if s[i] != p.text[0] {
		return -1, 0
	}
	j, k, run := i+1, 1, 0
	for k < len(p.text) {
		if j == len(s) {
			return -1, k
		}
		if s[j] == p.text[k] {
			j, k, run = j+1, k+1, 0
			continue
		}
		w := skip(s, j, p.hex)
		if w < 0 {
			return -1, k // a JSON escape cut in half by the end
		}
		if w == 0 || run == maxSkip {
			return -1, 0
		}
		j, run = j+w, run+1
	}
	return j, 0
}

// separator marks the bytes that can begin what skip steps over.
var separator = func() (t [256]bool) {
	for _, c := range "\r\n\\ \t:" {
		t[c] = true
	}
	return t
}()

// skip returns the width of the separator at s[j] that may sit between two bytes of an encoded
// form (0 if there is none, -1 if s ends in the middle of one).
func skip(s string, j int, hex bool) int {
	switch s[j] {
	case '\n', '\r':
		return 1
	case ' ', '\t', ':':
		if hex {
			return 1
		}
	case '\\':
		if j+1 == len(s) {
			return -1
		}
		switch s[j+1] {
		case 'n', 'r':
			return 2
		case 't':
			if hex {
				return 2
			}
		}
	}
	return 0
}
