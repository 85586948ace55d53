package fold

// PlanForcedEviction plans the harness's own eviction under context pressure (DESIGN §7.3): one
// prefix span of the frontier, found by walking back from the newest-but-one item and keeping as
// many recent items as fit in keep bytes. It never names the newest item, so the work in hand
// stays; ok is false when there is nothing older to cut.
func (s *State) PlanForcedEviction(keep int64) (from, to int64, ok bool) {
	items := s.Frontier()
	if len(items) < 2 {
		return 0, 0, false
	}
	size := func(it Item) int64 {
		if it.Residue >= 0 {
			return MessageSize(s.resMsgs[it.Residue])
		}
		return s.turns[it.Turn].Bytes
	}
	kept := size(items[len(items)-1])
	cut := len(items) - 2 // the newest item that would be evicted
	for cut >= 0 && kept+size(items[cut]) <= keep {
		kept += size(items[cut])
		cut--
	}
	// A residue left alone at the head is not worth re-wrapping.
	if cut < 0 || (cut == 0 && items[0].Residue >= 0) {
		return 0, 0, false
	}
	from, to = items[0].From, items[cut].To
	if u := s.Unclosed(); u != 0 && from <= u && u <= to {
		return 0, 0, false
	}
	return from, to, true
}

// Estimate is the context's size in tokens estimated from bytes (about four bytes a token), for
// when the provider's last count no longer measures it.
func (s *State) Estimate() int64 {
	sv := s.Survey()
	return (sv.Bytes + sv.SystemBytes + 3) / 4
}
