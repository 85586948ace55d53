package fold

import (
	"fmt"
	"sort"
	"strings"

	"github.com/reinhq/rein/internal/record"
)

// NoteMax is the longest eviction note, in bytes.
const NoteMax = 240

// Item is one item of the frontier: a resident turn, or an outermost residue.
type Item struct {
	From, To int64
	// Residue is the index in State.Residues of a residue item, or -1 for a turn.
	Residue int
	// Turn is the position in State.Turns of a turn item.
	Turn int
}

// EditError is a refusal of a context edit in words for whoever asked for it (the model through
// the context tool, or a person). The fold wraps it with the record number on replay.
type EditError struct{ Reason string }

func (e *EditError) Error() string { return e.Reason }

func editErr(format string, args ...any) error {
	return &EditError{Reason: fmt.Sprintf(format, args...)}
}

// Frontier returns the context as items: the turns no residue covers and the outermost residues,
// in id order. Withdrawn turns are not in it.
//
// The frontier is kept as records land (a new turn appends an item, an eviction replaces its run
// with one residue item, a withdrawal cuts the tail), so reading it costs nothing and an edit
// costs what it touches, not the length of the session. The slice is the state's own: read it,
// do not modify or keep it past the next record.
func (s *State) Frontier() []Item { return s.front.view() }

// rebuildFront derives the frontier from the turn table (after an inheritance).
func (s *State) rebuildFront() {
	s.front.cut(0)
	last := -1
	outer := make([]int, s.residues.len()) // the outermost residue over each residue, once found
	for i, t := range s.Turns() {
		if t.Withdrawn {
			continue
		}
		if t.Under < 0 {
			s.front.push(Item{From: t.ID, To: t.ID, Residue: -1, Turn: i})
			continue
		}
		if outer[t.Under] == 0 {
			outer[t.Under] = s.outermost(t.Under) + 1
		}
		if outer[t.Under]-1 == last {
			continue
		}
		last = outer[t.Under] - 1
		r := s.residues.at(last)
		s.front.push(Item{From: r.From, To: r.To, Residue: last, Turn: -1})
	}
}

// outermost returns the outermost residue over residue r: r itself, or the top of its parents.
func (s *State) outermost(r int) int {
	for {
		p := s.residues.at(r).Parent
		if p < 0 {
			return r
		}
		r = p
	}
}

// CheckEviction judges an eviction of the frontier run [from, to] with a note, as the model's
// context tool, a person's `rein evict` and the harness's pressure all ask for it. It returns the
// frontier items the run covers, or an *EditError saying why not.
func (s *State) CheckEviction(from, to int64, note string) ([]Item, error) {
	if s.phase == AwaitingToolResults {
		return nil, editErr("tool results are owed for turn %d: the context can be edited once the batch is answered", s.newest())
	}
	switch {
	case strings.TrimSpace(note) == "":
		return nil, editErr("the note is empty: an eviction leaves a note saying what the span held and what still matters")
	case strings.ContainsAny(note, "\n\r"):
		return nil, editErr("the note has more than one line: a note is one line")
	case len(note) > NoteMax:
		return nil, editErr("the note is %d bytes: a note is at most %d bytes", len(note), NoteMax)
	case from > to:
		return nil, editErr("the span %d–%d runs backwards: from must not be after to", from, to)
	}
	for _, id := range []int64{from, to} {
		i, ok := s.position(id)
		if !ok {
			return nil, editErr("turn %d is not recorded: the latest is %d", id, s.newest())
		}
		if s.turns.at(i).Withdrawn {
			return nil, editErr("turn %d has already left your context (it was withdrawn)", id)
		}
	}
	if u := s.Unclosed(); u != 0 && from <= u && u <= to {
		return nil, editErr("turn %d is being written now: an eviction keeps the work in hand", u)
	}
	items := s.Frontier()
	first, last := -1, -1
	for k, it := range items {
		if it.To < from || it.From > to {
			continue
		}
		if it.From < from || it.To > to {
			if it.From <= from && to <= it.To {
				return nil, editErr("turns %d–%d have already left your context: they lie under the residue over %d–%d", from, to, it.From, it.To)
			}
			return nil, editErr("turns %d–%d reach into the residue over %d–%d: evict it whole or stop before it", from, to, it.From, it.To)
		}
		if first < 0 {
			first = k
		}
		last = k
	}
	if first < 0 {
		return nil, editErr("turns %d–%d hold nothing still in your context", from, to)
	}
	return items[first : last+1], nil
}

func (s *State) resolveEviction(seq int64, b *record.Evicted) ([]Item, error) {
	switch b.By {
	case record.ByModel, record.ByHarness, record.ByUser:
	default:
		return nil, refuse(seq, "evicts under authority %q, which is not model, harness or user", b.By)
	}
	items, err := s.CheckEviction(b.From, b.To, b.Note)
	if err != nil {
		return nil, refuse(seq, "cannot evict turns %d–%d: %v", b.From, b.To, err)
	}
	return items, nil
}

func (s *State) applyEviction(seq int64, b *record.Evicted) {
	items, _ := s.CheckEviction(b.From, b.To, b.Note)
	k := s.residues.len()
	r := Residue{From: b.From, To: b.To, Note: b.Note, By: b.By, Parent: -1, Seq: seq}
	s.residues.push(r)
	// The frontier items the span covers are its outermost residues, which the new one now
	// holds, and its uncovered turns, which now lie directly under it. The turns under those
	// residues are not touched: the outermost residue over a turn is found through the parents
	// (outermost), so an eviction costs the items it covers, not the turns beneath them.
	for _, it := range items {
		if it.Residue >= 0 {
			s.residues.ptr(it.Residue).Parent = k
			continue
		}
		t := s.turns.ptr(it.Turn)
		t.Under = k
		t.Messages = nil
	}
	front := s.front.mut()
	first := sort.Search(len(front), func(i int) bool { return front[i].From >= b.From })
	last := sort.Search(len(front), func(i int) bool { return front[i].To > b.To })
	front[first] = Item{From: b.From, To: b.To, Residue: k, Turn: -1}
	s.front.replace(append(front[:first+1], front[last:]...))
	s.meta.UsageStale = true
	s.invalidate()
}

// span returns the positions [lo, hi) of the turns with ids in [from, to].
func (s *State) span(from, to int64) (int, int) {
	return s.search(from), s.search(to + 1)
}

// search returns the first position of the turn table whose id is >= id.
func (s *State) search(id int64) int { return s.turns.search(id) }

// CheckRewind judges withdrawing every turn from anchor on.
func (s *State) CheckRewind(anchor int64) error {
	if s.phase == AwaitingToolResults {
		return editErr("tool results are owed for turn %d: a rewind waits for the tool batch to be answered", s.newest())
	}
	t, ok := s.Turn(anchor)
	if !ok {
		return editErr("turn %d is not recorded: the latest is %d", anchor, s.newest())
	}
	if t.Withdrawn {
		return editErr("turn %d has already been withdrawn", anchor)
	}
	if t.Under >= 0 {
		o := s.residues.at(s.outermost(t.Under))
		if o.From < anchor {
			return editErr("turn %d lies under the residue over %d–%d: rewind to %d, or to a turn after %d", anchor, o.From, o.To, o.From, o.To)
		}
	}
	return nil
}

func (s *State) judgeRewound(seq int64, b *record.Rewound) error {
	if err := s.CheckRewind(b.Anchor); err != nil {
		return refuse(seq, "cannot rewind to turn %d: %v", b.Anchor, err)
	}
	return nil
}

// withdrawFrom withdraws every turn with an id >= anchor, and every residue starting there.
// Withdrawn turns keep their ids; the next turn still takes high+1. Nothing is owed afterwards
// (a withdrawal is refused while results are owed), so the session is ready for a prompt.
func (s *State) withdrawFrom(anchor int64) {
	for i := s.search(anchor); i < s.turns.len(); i++ {
		t := s.turns.ptr(i)
		t.Withdrawn = true
		t.Messages = nil
	}
	for i := range s.residues.len() {
		if r := s.residues.at(i); r.From >= anchor && !r.Withdrawn {
			s.residues.ptr(i).Withdrawn = true
		}
	}
	s.front.cut(sort.Search(s.front.len(), func(i int) bool { return s.front.at(i).From >= anchor }))
	s.phase = ReadyForUser
	s.meta.UsageStale = true
	s.invalidate()
}

// PreviewEviction judges an eviction the model asks for from inside a tool batch, and returns the
// state as it will be once the batch is answered and the eviction recorded. The batch's results
// change neither the frontier nor the unclosed turn, so the judgement is the one the fold will
// make then; only the owed-results guard is skipped.
func (s *State) PreviewEviction(from, to int64, note string) (*State, error) {
	c := s.Clone()
	if c.phase == AwaitingToolResults {
		c.phase = AwaitingAssistantAfterToolResults
	}
	if _, err := c.CheckEviction(from, to, note); err != nil {
		return nil, err
	}
	c.applyEviction(0, &record.Evicted{From: from, To: to, Note: note})
	return c, nil
}
