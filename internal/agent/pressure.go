package agent

import (
	"fmt"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
)

// reserve is the room kept for the reply and the tools: 15% of the window, at least 16,384 tokens.
func reserve(window int64) int64 { return max(window*15/100, 16384) }

// used measures the context in tokens: the provider's count for the last request while no edit
// has landed since, else an estimate from bytes.
//
// It reads the state under the session's read lock: the host appends events (a rename, a
// submission) from other goroutines while the loop runs.
func (a *Agent) used() int64 {
	var u int64
	a.sess.Read(func(st *fold.State) { u = used(st) })
	return u
}

func used(st *fold.State) int64 {
	m := st.Meta()
	if !m.UsageStale && m.LastUsage.Input+m.LastUsage.CacheRead+m.LastUsage.CacheWrite > 0 {
		return max(m.LastUsage.Input+m.LastUsage.CacheRead+m.LastUsage.CacheWrite, st.Estimate())
	}
	return st.Estimate()
}

// weigh applies context pressure at a turn boundary (DESIGN §7.3): past the hard line the harness
// evicts a prefix span on its own; past the soft line the model is reminded once per excursion.
func (a *Agent) weigh() error {
	w := a.cfg.Window
	if w <= 0 {
		return nil
	}
	st := a.sess.State()
	if st.Phase() == fold.AwaitingToolResults {
		return nil
	}
	u, r := a.used(), reserve(w)
	switch {
	case u+r > w:
		if _, err := a.evictForPressure(u, "hard", a.keepBytes()); err != nil {
			return err
		}
	case u+2*r > w:
		if a.reminded {
			return nil
		}
		from, to, ok := st.PlanForcedEviction(a.keepBytes())
		if !ok {
			return nil
		}
		a.reminded = true
		text := fmt.Sprintf(`[rein: your context is at about %d%% of the window (%d of %d tokens). If it reaches %d tokens, rein will evict turns %d–%d on its own. To choose what leaves and leave yourself a note, evict first, e.g. context {"op":"evict","from":%d,"to":%d,"note":"<what those turns held and what still matters>"}]`,
			u*100/w, u, w, w-r, from, to, from, to)
		return a.sess.Append(&record.Pressure{Line: "soft", Used: u, Window: w}, &record.Steering{Text: text, Source: "pressure"})
	default:
		a.reminded = false
	}
	return nil
}

// keepBytes is what a forced eviction keeps: about half the budget, in bytes.
func (a *Agent) keepBytes() int64 { return (a.cfg.Window - reserve(a.cfg.Window)) / 2 * 4 }

// evictForPressure makes the harness's eviction, keeping about keep bytes of the newest items.
// It reports whether it evicted anything.
func (a *Agent) evictForPressure(u int64, line string, keep int64) (bool, error) {
	st := a.sess.State()
	from, to, ok := st.PlanForcedEviction(keep)
	if !ok {
		return false, nil
	}
	first, _ := st.Turn(from)
	note := "evicted by rein to stay within the context window"
	if first.Label != "" {
		note = fmt.Sprintf("evicted by rein to stay within the context window; the span opened with %q", first.Label)
	}
	if len(note) > fold.NoteMax {
		note = "evicted by rein to stay within the context window"
	}
	err := a.sess.Append(&record.Pressure{Line: line, Used: u, Window: a.cfg.Window}, &record.Evicted{From: from, To: to, Note: note, By: record.ByHarness})
	return err == nil, err
}

// forceEvict is the harness's eviction after a provider's prompt-too-long error. The provider has
// just said the context does not fit, whatever the configured window says, so it keeps at most
// half of what was sent (and, with a known window, at most half the budget).
func (a *Agent) forceEvict() (bool, error) {
	u := a.used()
	keep := u * 4 / 2
	if a.cfg.Window > 0 {
		keep = min(keep, a.keepBytes())
	}
	return a.evictForPressure(u, "context_length", keep)
}
