package fold

import (
	"fmt"
	"slices"

	"github.com/reinhq/rein/internal/record"
)

// Parking is a held tool window (DESIGN §7, Hold): the call that was held, why, and by whom. The
// window's calls stay owed, not answered: the calls before the held one keep the results their
// tool_finished events kept, and the held call and those after it never ran. Only a release
// (which enters the window again) or a quiesce (which answers every owed call) moves it on, and
// the next request is admissible only once the window is answered, as for any tool window.
type Parking struct {
	CallID string
	Reason string
	By     string
	Seq    int64 // the hold record
}

// Parking returns the held window, if the session is parked.
func (s *State) Parking() (Parking, bool) { return s.parking, s.parked }

// judgeHold admits a hold only inside an open tool window, on a call the window owes that has not
// finished, and not while a hold already stands: a hold says nothing at or after the call ran.
func (s *State) judgeHold(seq int64, b *record.Hold) error {
	if s.phase != AwaitingToolResults {
		return refuse(seq, "holds a tool call while no tool window is open (the session is %s): only an owed call can be held", s.phase)
	}
	if s.parked {
		return refuse(seq, "holds call %s while the session is already held at call %s: a release comes first", b.CallID, s.parking.CallID)
	}
	if !slices.Contains(s.owed, b.CallID) {
		return refuse(seq, "holds call %q, which turn %d does not owe", b.CallID, s.newest())
	}
	if _, ok := s.finished.get(b.CallID); ok {
		return refuse(seq, "holds call %s, which has already finished: a hold says the call did not run", b.CallID)
	}
	return nil
}

// judgeReleased admits a release only of a held session.
func (s *State) judgeReleased(seq int64) error {
	if !s.parked {
		return refuse(seq, "releases a hold, but the session is not held")
	}
	return nil
}

// judgeWhileParked refuses what only a running tool window writes (a call starting or finishing)
// while the window is held: nothing at or after the held call runs before a release.
func (s *State) judgeWhileParked(seq int64, callID string) error {
	if s.parked {
		return refuse(seq, "starts or finishes call %s while the session is held at call %s: a release comes first", callID, s.parking.CallID)
	}
	return nil
}

// applyHold parks the session. The held call did not run: its tool_started (written with its
// assistant message, or before the hooks were asked) no longer counts, so a quiesce answers it
// not_executed.
func (s *State) applyHold(seq int64, b *record.Hold) {
	s.parked = true
	s.parking = Parking{CallID: b.CallID, Reason: b.Reason, By: b.By, Seq: seq}
	s.started.del(b.CallID)
	// An approval the hold ends is no longer asked: a release asks the person again.
	s.asked = slices.DeleteFunc(slices.Clone(s.asked), func(a Approval) bool { return a.CallID == b.CallID })
}

// unpark ends a hold: by a release, or by the window being answered.
func (s *State) unpark() {
	s.parked = false
	s.parking = Parking{}
}

// heldContent is the answer a quiesce gives a call the hold kept from running.
func heldContent(name, why string, p Parking) string {
	if p.Reason == "" {
		return fmt.Sprintf("%s was not executed: it was held, and %s before it was released.", name, why)
	}
	return fmt.Sprintf("%s was not executed: it was held (%s), and %s before it was released.", name, p.Reason, why)
}
