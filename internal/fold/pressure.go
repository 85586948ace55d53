package fold

import "github.com/reinhq/rein/internal/record"

// PlanForcedEviction plans the harness's own eviction under context pressure (DESIGN §7.3): one
// span of the frontier that leaves about keep bytes of it. The exchange in hand — the newest
// prompt and every item after it — stays: the span is a prefix of what came before that prompt,
// keeping as many of its newest items as fit beside the exchange. Only when nothing before the
// prompt is left to cut (a single exchange outgrew the window) does the span fall inside the
// exchange, after its prompt, keeping the newest items there. It never names the newest item, so
// the work in hand stays; ok is false when there is nothing to cut.
func (s *State) PlanForcedEviction(keep int64) (from, to int64, ok bool) {
	items := s.Frontier()
	n := len(items)
	if n < 2 {
		return 0, 0, false
	}
	size := func(it Item) int64 {
		if it.Residue >= 0 {
			return MessageSize(s.ResidueMessage(it.Residue))
		}
		t := s.turns.at(it.Turn)
		return t.Bytes - t.Discount
	}
	// hand is the item of the prompt that opened the exchange in hand.
	hand := n - 1
	for i := n - 1; i >= 0; i-- {
		if it := items[i]; it.Residue < 0 && s.turns.at(it.Turn).Role == record.User && s.turns.at(it.Turn).Kind == Own {
			hand = i
			break
		}
	}
	var kept int64
	for _, it := range items[hand:] {
		kept += size(it)
	}
	if from, to, ok := s.prefixSpan(items[:hand], size, kept, keep); ok {
		return from, to, true
	}
	// Nothing before the exchange is worth cutting: cut inside it, after its prompt.
	inner := items[hand+1:]
	if len(inner) < 2 {
		return 0, 0, false
	}
	kept = size(items[hand]) + size(inner[len(inner)-1])
	cut := len(inner) - 2
	for cut >= 0 && kept+size(inner[cut]) <= keep {
		kept += size(inner[cut])
		cut--
	}
	if cut < 0 || (cut == 0 && inner[0].Residue >= 0) {
		return 0, 0, false
	}
	return s.checkUnclosed(inner[0].From, inner[cut].To)
}

// prefixSpan plans a prefix of items to cut, keeping the newest of them that fit in keep beside
// kept bytes already kept.
func (s *State) prefixSpan(items []Item, size func(Item) int64, kept, keep int64) (from, to int64, ok bool) {
	cut := len(items) - 1 // the newest item that would be evicted
	for cut >= 0 && kept+size(items[cut]) <= keep {
		kept += size(items[cut])
		cut--
	}
	// A residue left alone at the head is not worth re-wrapping.
	if cut < 0 || (cut == 0 && items[0].Residue >= 0) {
		return 0, 0, false
	}
	return s.checkUnclosed(items[0].From, items[cut].To)
}

func (s *State) checkUnclosed(from, to int64) (int64, int64, bool) {
	if u := s.Unclosed(); u != 0 && from <= u && u <= to {
		return 0, 0, false
	}
	return from, to, true
}

// Estimate is the context's size in tokens estimated from bytes (about four bytes a token), for
// when the provider's last count no longer measures it.
func (s *State) Estimate() int64 {
	sv := s.Survey()
	var discount int64
	for _, it := range s.Frontier() {
		if it.Residue < 0 {
			discount += s.turns.at(it.Turn).Discount
		}
	}
	return (sv.Bytes - discount + sv.SystemBytes + 3) / 4
}
