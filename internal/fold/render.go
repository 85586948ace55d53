package fold

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/record"
)

// Context renders the frontier as the neutral messages of the next request, in id order: each
// resident turn's messages exactly as recorded, each outermost residue as one user-voice message.
// The system prompt is not among them (it travels in the request's system field, see System).
//
// Rendering is incremental: a turn's messages are built once, when its records land, and shared
// by every later request, so the cost of a request is one slice append per frontier message.
// The returned slice and its messages are shared with the state: they must not be modified. On a
// snapshot they never change; on a state that goes on they are valid until the next record is
// applied.
func (s *State) Context() []record.Message { return s.rendered.view() }

// refresh brings s.rendered up to date after a record was applied: the closed part of the
// frontier (every turn but the newest, which may still grow) is extended as turns close and never
// rewritten until an edit; the newest turn is rendered afresh after it.
func (s *State) refresh() {
	n := s.front.len()
	newest := n > 0 && s.front.at(n-1).Residue < 0 && s.front.at(n-1).Turn == s.turns.len()-1
	closed := n
	if newest {
		closed--
	}
	at := s.tailStart
	for ; s.renderedItems < closed; s.renderedItems++ {
		at = s.renderAt(at, s.front.at(s.renderedItems))
	}
	s.tailStart = at
	if newest {
		at = s.renderAt(at, s.front.at(n-1))
	}
	s.rendered.cut(at)
}

// renderAt puts what a frontier item is sent as (a turn's messages, or a residue's message) at
// position at of the rendered messages, and returns the position after it. A message already
// there is left as it is when it is the same one: a turn's messages only grow, so re-rendering
// the newest turn writes only what it gained, and a snapshot that holds the rest keeps it.
func (s *State) renderAt(at int, it Item) int {
	if it.Residue >= 0 {
		s.putRendered(at, s.ResidueMessage(it.Residue))
		return at + 1
	}
	for _, m := range s.turns.at(it.Turn).Messages {
		s.putRendered(at, m)
		at++
	}
	return at
}

func (s *State) putRendered(at int, m record.Message) {
	if at < s.rendered.len() && sameMessage(s.rendered.at(at), m) {
		return
	}
	s.rendered.put(at, m)
}

// sameMessage reports whether a and b are one message: the same role and the same parts, in the
// same array. Messages are never edited in place (a steering line makes a new last message), so
// this is equality without comparing the text.
func sameMessage(a, b record.Message) bool {
	if a.Role != b.Role || len(a.Parts) != len(b.Parts) {
		return false
	}
	return len(a.Parts) == 0 || &a.Parts[0] == &b.Parts[0]
}

// invalidate renders the frontier anew after an edit, in a new array so that slices handed out
// before the edit keep what they held.
func (s *State) invalidate() {
	s.rendered = flat[record.Message]{}
	s.renderedItems, s.tailStart = 0, 0
	s.refresh()
}

// ResidueMessage renders residue i as the one user-voice message that stands for its span. Its
// size does not depend on what it covers. It is built when asked, not kept: a session keeps every
// residue it ever had, nested ones included, and only the frontier's are ever sent.
func (s *State) ResidueMessage(i int) record.Message {
	r := s.residues.at(i)
	return record.Message{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: ResidueText(r.From, r.To, r.Note)}}}
}

// ResidueText is the sentence a residue over [from, to] says.
func ResidueText(from, to int64, note string) string {
	var b strings.Builder
	b.WriteString("[rein: ")
	if from == to {
		b.WriteString("turn " + strconv.FormatInt(from, 10) + " has left your context. Note: \"")
	} else {
		b.WriteString("turns " + strconv.FormatInt(from, 10) + "–" + strconv.FormatInt(to, 10) + " have left your context. Note: \"")
	}
	b.WriteString(note)
	b.WriteString("\". Read them back with the transcript tool: {\"op\":\"read\",\"turns\":[")
	switch {
	case from == to:
		b.WriteString(strconv.FormatInt(from, 10))
	case to-from <= 2:
		for id := from; id <= to; id++ {
			if id > from {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(id, 10))
		}
	default:
		b.WriteString(strconv.FormatInt(from, 10) + "," + strconv.FormatInt(from+1, 10) + ",...," + strconv.FormatInt(to, 10))
	}
	b.WriteString("]}]")
	return b.String()
}

// Trailer is the line every tool result ends with: the id of the turn it closes.
func Trailer(turn int64) string { return "TURN: " + strconv.FormatInt(turn, 10) }

// WithTrailer ends content with the turn trailer on a line of its own.
func WithTrailer(content string, turn int64) string {
	if content == "" || strings.HasSuffix(content, "\n") {
		return content + Trailer(turn)
	}
	return content + "\n" + Trailer(turn)
}

// ---- sizes --------------------------------------------------------------------------------------

// MessageSize is the serialised size in bytes of a neutral message: the length of its JSON
// encoding as the record writes it (compact, HTML characters unescaped). It is computed without
// encoding; a test holds it equal to the encoder's length.
func MessageSize(m record.Message) int64 {
	n := int64(len(`{"role":,"parts":[]}`)) + strLen(string(m.Role))
	for i, p := range m.Parts {
		if i > 0 {
			n++
		}
		n += partSize(p)
	}
	return n
}

func messagesSize(ms []record.Message) int64 {
	var n int64
	for _, m := range ms {
		n += MessageSize(m)
	}
	return n
}

func partSize(p record.Part) int64 {
	n := int64(len(`{"type":}`)) + strLen(string(p.Type))
	field := func(name string, v int64) { n += int64(len(name)) + 4 + v } // ,"name":v
	if p.Text != "" {
		field("text", strLen(p.Text))
	}
	if p.Signature != "" {
		field("signature", strLen(p.Signature))
	}
	if p.Data != "" {
		field("data", strLen(p.Data))
	}
	if p.MediaType != "" {
		field("media_type", strLen(p.MediaType))
	}
	if p.CallID != "" {
		field("call_id", strLen(p.CallID))
	}
	if p.Name != "" {
		field("name", strLen(p.Name))
	}
	if len(p.Args) > 0 {
		field("args", compactLen(p.Args))
	}
	if p.IsError {
		field("is_error", 4)
	}
	if p.Outcome != "" {
		field("outcome", strLen(string(p.Outcome)))
	}
	if len(p.Images) > 0 {
		size := int64(1 + len(p.Images)) // [ ] and the commas between
		for _, q := range p.Images {
			size += partSize(q)
		}
		field("images", size)
	}
	if p.Wire != "" {
		field("wire", strLen(p.Wire))
	}
	return n
}

// strLen is the length of s as a JSON string, quotes included, escaped as encoding/json does with
// HTML escaping off.
func strLen(s string) int64 {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	n := int64(2)
	for i := 0; i < len(s); {
		// Eight plain ASCII bytes at a time (no control byte, quote, backslash or high bit): the
		// common case of tool output. Any flag sends the next byte to the exact path below.
		for i+8 <= len(s) {
			w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			q, b := w^(ones*'"'), w^(ones*'\\')
			if ((w-ones*0x20)&^w|(q-ones)&^q|(b-ones)&^b|w)&highs != 0 {
				break
			}
			n += 8
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6 // \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += int64(size)
		}
		i += size
	}
	return n
}

// compactLen is the length of a JSON value with insignificant whitespace removed.
func compactLen(raw []byte) int64 {
	var n int64
	in := false
	esc := false
	for _, c := range raw {
		if in {
			n++
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			in = true
		}
		n++
	}
	return n
}
