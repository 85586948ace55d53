package fold

import (
	"sort"

	"github.com/reinhq/rein/internal/record"
)

// AdmissiblePrefix returns the longest prefix of msgs that owes no tool result: every tool call
// in it is answered within it. It is what a child inherits of a parent's turn, so no dangling call
// of the parent's spawning batch reaches the child's wire.
func AdmissiblePrefix(msgs []record.Message) []record.Message {
	pending := map[string]bool{}
	end := 0
	for i, m := range msgs {
		for _, p := range m.Parts {
			switch p.Type {
			case record.PartToolCall:
				pending[p.CallID] = true
			case record.PartToolResult:
				delete(pending, p.CallID)
			}
		}
		if len(pending) == 0 {
			end = i + 1
		}
	}
	return msgs[:end]
}

// Inheritance builds the first record of a child forked from this state at turn at (0: the whole
// table). pointer says where each row was first recorded. It refuses a fork point inside a residue
// or an unrecorded turn.
func (s *State) Inheritance(parent string, at int64, pointer func(Turn) record.Pointer) (*record.Inherited, error) {
	if at == 0 {
		at = s.newest()
	}
	if s.turns.len() > 0 {
		if _, ok := s.position(at); !ok {
			return nil, editErr("turn %d is not recorded: the latest is %d", at, s.newest())
		}
	}
	inh := &record.Inherited{Parent: parent, At: at, High: s.high}
	for _, t := range s.Turns() {
		if t.ID > at {
			break
		}
		row := record.InheritedRow{Turn: t.ID, Role: t.Role, Label: t.Label, Bytes: t.Bytes, Withdrawn: t.Withdrawn, Pointer: pointer(t)}
		if !t.Withdrawn && t.Under < 0 {
			row.Messages = AdmissiblePrefix(t.Messages)
		}
		inh.Rows = append(inh.Rows, row)
	}
	for _, r := range s.residues.view() {
		if r.Withdrawn || r.From > at {
			continue
		}
		if r.To > at {
			return nil, editErr("turn %d lies under the residue over %d–%d: fork at %d or at a turn before %d", at, r.From, r.To, r.To, r.From)
		}
		inh.Residues = append(inh.Residues, record.Span{From: r.From, To: r.To, Note: r.Note, By: r.By})
	}
	return inh, nil
}

func (s *State) judgeInherited(seq int64, b *record.Inherited) error {
	if s.protocol != 0 {
		return refuse(seq, "links this session to a parent's transcript, which only a fork's first record may do")
	}
	if b.Parent == "" {
		return refuse(seq, "links this session to a parent without naming it")
	}
	ids := map[int64]record.InheritedRow{}
	var prev int64
	for _, row := range b.Rows {
		if row.Turn <= prev {
			return refuse(seq, "lists inherited turn %d after turn %d: rows must be in increasing id order", row.Turn, prev)
		}
		prev = row.Turn
		if row.Role != record.User && row.Role != record.Assistant {
			return refuse(seq, "inherits turn %d with role %q", row.Turn, row.Role)
		}
		if row.Withdrawn && len(row.Messages) > 0 {
			return refuse(seq, "inherits withdrawn turn %d with messages: a withdrawn turn is read back through its pointer", row.Turn)
		}
		for _, m := range row.Messages {
			if why := checkMessage(m); why != "" {
				return refuse(seq, "inherits turn %d with a message that %s", row.Turn, why)
			}
		}
		if len(AdmissiblePrefix(row.Messages)) != len(row.Messages) {
			return refuse(seq, "inherits turn %d with a tool call it never answers: a child inherits only admissible prefixes", row.Turn)
		}
		ids[row.Turn] = row
	}
	if b.High < prev {
		return refuse(seq, "inherits turns up to %d but says the parent's highest turn is %d", prev, b.High)
	}
	spans := append([]record.Span(nil), b.Residues...)
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].From != spans[j].From {
			return spans[i].From < spans[j].From
		}
		return spans[i].To > spans[j].To
	})
	var stack []record.Span
	for _, r := range spans {
		for _, id := range []int64{r.From, r.To} {
			row, ok := ids[id]
			if !ok {
				return refuse(seq, "inherits a residue over %d–%d, but turn %d is not among the inherited rows", r.From, r.To, id)
			}
			if row.Withdrawn {
				return refuse(seq, "inherits a residue over %d–%d, but turn %d was withdrawn", r.From, r.To, id)
			}
		}
		if r.From > r.To || r.Note == "" {
			return refuse(seq, "inherits a malformed residue over %d–%d", r.From, r.To)
		}
		for len(stack) > 0 && stack[len(stack)-1].To < r.From {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			if top.From == r.From && top.To == r.To {
				return refuse(seq, "inherits two residues over %d–%d", r.From, r.To)
			}
			if top.To < r.To {
				return refuse(seq, "inherits residues over %d–%d and %d–%d, which overlap without nesting: residues must be laminar", top.From, top.To, r.From, r.To)
			}
		}
		stack = append(stack, r)
	}
	for _, r := range spans {
		for id, row := range ids {
			if id >= r.From && id <= r.To && len(row.Messages) > 0 {
				return refuse(seq, "inherits turn %d with messages though it lies under the residue over %d–%d", id, r.From, r.To)
			}
		}
	}
	return nil
}

func (s *State) applyInherited(b *record.Inherited) {
	s.parent = b.Parent
	for _, row := range b.Rows {
		p := row.Pointer
		t := Turn{ID: row.Turn, Role: row.Role, Kind: Inherited, Label: row.Label, Pointer: &p, Withdrawn: row.Withdrawn, Messages: row.Messages}
		s.addTurn(t)
		if len(row.Messages) == 0 {
			s.turns.ptr(s.turns.len() - 1).Bytes = row.Bytes
		}
	}
	spans := append([]record.Span(nil), b.Residues...)
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].From != spans[j].From {
			return spans[i].From < spans[j].From
		}
		return spans[i].To > spans[j].To
	})
	var stack []int
	for _, r := range spans {
		for len(stack) > 0 && s.residues.at(stack[len(stack)-1]).To < r.From {
			stack = stack[:len(stack)-1]
		}
		parent := -1
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		k := s.residues.len()
		res := Residue{From: r.From, To: r.To, Note: r.Note, By: r.By, Parent: parent}
		s.residues.push(res)
		stack = append(stack, k)
		// Outer residues come first, so the last one to claim a turn is its innermost.
		lo, hi := s.span(r.From, r.To)
		for i := lo; i < hi; i++ {
			if !s.turns.at(i).Withdrawn {
				s.turns.ptr(i).Under = k
			}
		}
	}
	if b.High > s.high {
		s.high = b.High
	}
	s.rebuildFront()
	s.invalidate()
}
