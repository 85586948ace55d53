package fold

import (
	"fmt"
	"iter"

	"github.com/reinhq/rein/internal/record"
)

// Row is one row of the survey or the transcript index: a span of the context (a turn has
// From == To) with its role, kind, label, size and where it is held.
type Row struct {
	From  int64       `json:"from"`
	To    int64       `json:"to"`
	Role  record.Role `json:"role"`
	Kind  TurnKind    `json:"kind"`
	Label string      `json:"label"`
	Bytes int64       `json:"bytes"`
	Held  string      `json:"held"` // "resident", "under [a, b]" or "withdrawn"
}

// Survey is what the context tool's survey answers: the frontier rows and the bytes sent.
type Survey struct {
	Rows        []Row `json:"rows"`
	Bytes       int64 `json:"bytes"`        // the messages' bytes
	SystemBytes int64 `json:"system_bytes"` // the system prompt's bytes
}

// Survey returns the frontier as rows, and the total bytes a request carries.
func (s *State) Survey() Survey {
	items := s.Frontier()
	sv := Survey{Rows: make([]Row, 0, len(items)), SystemBytes: strLen(s.system) - 2}
	for _, it := range items {
		var r Row
		if it.Residue >= 0 {
			res := s.residues.at(it.Residue)
			r = Row{From: res.From, To: res.To, Role: record.User, Kind: Residual, Label: label(res.Note), Bytes: MessageSize(s.ResidueMessage(it.Residue)), Held: "resident"}
		} else {
			t := s.turns.at(it.Turn)
			r = Row{From: t.ID, To: t.ID, Role: t.Role, Kind: t.Kind, Label: t.Label, Bytes: t.Bytes, Held: "resident"}
		}
		sv.Bytes += r.Bytes
		sv.Rows = append(sv.Rows, r)
	}
	return sv
}

// Index returns every recorded turn with where it is held: the transcript tool's index.
func (s *State) Index() []Row {
	rows := make([]Row, 0, s.turns.len())
	for r := range s.IndexFrom(0) {
		rows = append(rows, r)
	}
	return rows
}

// IndexFrom yields the index's rows from turn from on, in id order, without building the rest: a
// long session's index is read a page at a time.
func (s *State) IndexFrom(from int64) iter.Seq[Row] {
	return func(yield func(Row) bool) {
		s.turns.each(s.search(from), func(_ int, t Turn) bool {
			return yield(Row{From: t.ID, To: t.ID, Role: t.Role, Kind: t.Kind, Label: t.Label, Bytes: t.Bytes, Held: s.held(t)})
		})
	}
}

// IndexPage is a page of s's index from turn from on: each row as item makes it, as many as fit
// in max bytes by the sizes item gives (one row at least), and the turn the next page starts at,
// 0 when the page reaches the last turn.
func IndexPage[T any](s *State, from int64, max int, item func(Row) (T, int)) (page []T, next int64) {
	page, size := []T{}, 0
	for r := range s.IndexFrom(from) {
		x, n := item(r)
		if size += n; size > max && len(page) > 0 {
			return page, r.From
		}
		page = append(page, x)
	}
	return page, 0
}

func (s *State) held(t Turn) string {
	switch {
	case t.Withdrawn:
		return "withdrawn"
	case t.Under >= 0:
		r := s.residues.at(t.Under)
		return fmt.Sprintf("under [%d, %d]", r.From, r.To)
	}
	return "resident"
}

// Held says where turn id is held: "resident", "under [a, b]", "withdrawn", or "" when it is not
// recorded.
func (s *State) Held(id int64) string {
	t, ok := s.Turn(id)
	if !ok {
		return ""
	}
	return s.held(t)
}

// Stats are the figures `rein doctor` reports.
type Stats struct {
	Records  int64
	Turns    int
	Resident int
	Residues int
	Phase    Phase
	Bytes    int64
}

// Stats summarises the state.
func (s *State) Stats() Stats {
	st := Stats{Records: s.seq, Turns: s.turns.len(), Phase: s.phase}
	for _, t := range s.Turns() {
		if !t.Withdrawn && t.Under < 0 {
			st.Resident++
		}
	}
	for _, r := range s.residues.view() {
		if !r.Withdrawn {
			st.Residues++
		}
	}
	st.Bytes = s.Survey().Bytes
	return st
}
