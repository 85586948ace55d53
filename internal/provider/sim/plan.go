package sim

import (
	"strings"
	"time"
	"unicode/utf8"
)

// plan is one streamed reply before it is put in a wire format: its parts in order, how it stops,
// its usage, and the faults the stream plays.
type plan struct {
	n         int // the server's reply number, which ids are made from
	id, model string
	created   int64 // Unix seconds
	parts     []piece
	stop      stop
	input     int
	output    int

	// Chat: send a usage chunk before [DONE].
	includeUsage bool
	// Responses: reasoning items carry their encrypted content.
	encrypted bool

	delay      time.Duration // before each content delta
	errorEvent *ErrorEvent
	cut        *Cut
}

type stop int

const (
	stopEnd stop = iota
	stopTool
	stopMax
)

type pieceKind int

const (
	pieceText pieceKind = iota
	pieceThinking
	pieceCall
	pieceSearch // a server-side web search and its results (websearch.go)
)

// piece is one part of a reply with its content already split into the deltas that stream it.
type piece struct {
	kind      pieceKind
	deltas    []string
	signature string // thinking
	id, name  string // call
	cutOff    bool   // call: arguments cut off by the token limit
	// input: a free-form call whose deltas are its input text (Responses); the other wires
	// send freeform, the arguments {"input": text}, instead.
	input    bool
	freeform []string
	search   *WebSearch
}

func (p piece) text() string { return strings.Join(p.deltas, "") }

// fromStep builds the plan a step plays. newID mints a tool call id.
func fromStep(st Step, newID func() string) *plan {
	p := &plan{delay: time.Duration(st.DelayMs) * time.Millisecond, errorEvent: st.ErrorEvent, cut: st.Cut}
	if st.Empty {
		return p
	}
	if st.Thinking != nil {
		p.parts = append(p.parts, piece{kind: pieceThinking, deltas: split(st.Thinking.Text, st.Chunks, words), signature: st.Thinking.Signature})
	}
	if st.WebSearch != nil {
		p.parts = append(p.parts, piece{kind: pieceSearch, id: newID(), search: st.WebSearch})
	}
	if st.Text != "" {
		p.parts = append(p.parts, piece{kind: pieceText, deltas: split(st.Text, st.Chunks, words)})
	}
	for i, c := range st.ToolCalls {
		args := c.args()
		cut := st.MaxTokens && i == len(st.ToolCalls)-1
		if cut {
			args = args[:runeFloor(args, len(args)/2)]
		}
		id := newID()
		if c.ID != nil {
			id = *c.ID
		}
		pc := piece{kind: pieceCall, id: id, name: c.Name, deltas: split(args, 0, bytes8), cutOff: cut}
		if c.Input != nil {
			in := *c.Input
			if cut {
				in = in[:runeFloor(in, len(in)/2)]
			}
			pc.input, pc.freeform = true, split(in, 0, bytes8)
		}
		p.parts = append(p.parts, pc)
	}
	switch {
	case st.MaxTokens:
		p.stop = stopMax
	case len(st.ToolCalls) > 0:
		p.stop = stopTool
	}
	return p
}

// measure sets the plan's usage: the request's estimate in, the output's bytes / 4 out.
func (p *plan) measure(v view) {
	p.input = v.estimate
	n := 0
	for _, pc := range p.parts {
		n += len(pc.name) + len(pc.signature)
		for _, d := range pc.deltas {
			n += len(d)
		}
	}
	p.output = (n + 3) / 4
}

func (p *plan) deltas() int {
	n := 0
	for _, pc := range p.parts {
		n += len(pc.deltas)
	}
	return n
}

type splitMode int

const (
	words  splitMode = iota // after each run of spaces
	bytes8                  // runs of about 8 bytes
)

// split cuts s into the deltas that stream it: n near-equal pieces when n > 0, else by mode.
// Pieces never split a UTF-8 sequence, and an empty s has no deltas.
func split(s string, n int, mode splitMode) []string {
	if s == "" {
		return nil
	}
	var out []string
	if n > 0 {
		size := (len(s) + n - 1) / n
		for len(s) > 0 {
			k := runeCeil(s, min(size, len(s)))
			out = append(out, s[:k])
			s = s[k:]
		}
		return out
	}
	for len(s) > 0 {
		k := len(s)
		switch mode {
		case words:
			if i := strings.IndexByte(s, ' '); i >= 0 {
				k = i + 1
				for k < len(s) && s[k] == ' ' {
					k++
				}
			}
		case bytes8:
			k = runeCeil(s, min(8, len(s)))
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

// runeCeil moves i forward to the next rune boundary of s.
func runeCeil(s string, i int) int {
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return i
}

// runeFloor moves i back to the previous rune boundary of s.
func runeFloor(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}
