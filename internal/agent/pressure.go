package agent

import (
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// Context pressure (DESIGN §7.3), sized for windows from 4k to 1M tokens.
//
// The reply's output limit is the configured one but never more than a quarter of the window, so
// a small local model's server (which counts the output limit against its context) is not asked
// for more than it holds. The reserve is that output limit plus a twentieth of the window for
// what an estimate from bytes misjudges. The measure counts the system prompt and the tool
// definitions, which every request carries. A forced eviction keeps about half of what is left
// for turns once the system prompt and the tools are paid for, so a steady session meets the hard
// line rarely. A provider's prompt-too-long refusal teaches the session the real limit (recorded
// on the pressure event, folded into Meta.Limit), which it keeps to from then on.

// minOutput is the least output limit a request asks for, however small the window.
const minOutput = 256

// window is the context window the session keeps to: the configured one, or the smaller limit a
// provider's refusal taught it.
func (a *Agent) window() int64 {
	lim := a.sess.Snapshot().Meta().Limit
	if w := a.cfg.Window; lim <= 0 || w > 0 && w < lim {
		return w
	}
	return lim
}

// OutputLimit is a request's max_tokens under window w: the configured limit, at most a quarter
// of the window (and never under minOutput).
func OutputLimit(maxTokens int, w int64) int {
	if w > 0 && int64(maxTokens) > w/4 {
		return max(int(w/4), minOutput)
	}
	return maxTokens
}

// reserve is the room kept under window w for the reply (the output limit w allows) and for the
// estimate's error.
func reserve(maxTokens int, w int64) int64 { return int64(OutputLimit(maxTokens, w)) + w/20 }

// MinThinking is the least extended-thinking budget Anthropic accepts, in tokens.
const MinThinking = 1024

// thinkingBudget is the thinking budget a request with output limit limit can carry: the
// configured one, kept below the limit as Anthropic requires. When a provider's refusal has
// taught the session a window too small for the budget asked (cmd refuses one that does not fit
// from the start), the budget shrinks with the limit, and thinking is left off for a limit too
// small for even the least budget.
func thinkingBudget(thinking, limit int) int {
	if thinking <= 0 {
		return 0
	}
	if thinking >= limit {
		thinking = limit - 1
	}
	if thinking < MinThinking {
		return 0
	}
	return thinking
}

// toolTokens estimates what the tool definitions cost every request, in tokens.
func (a *Agent) toolTokens() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.toolBytes == 0 {
		b, _ := json.Marshal(a.specs())
		a.toolBytes = int64(len(b))
	}
	return (a.toolBytes + 3) / 4
}

// used measures the context in tokens: the provider's count for the last request while no edit
// has landed since, else an estimate from bytes of the system prompt, the context and the tools.
func (a *Agent) used() int64 {
	st := a.sess.Snapshot()
	u := st.Estimate() + a.toolTokens()
	m := st.Meta()
	if n := m.LastUsage.Input + m.LastUsage.CacheRead + m.LastUsage.CacheWrite; !m.UsageStale && n > u {
		u = n
	}
	return u
}

// weigh applies context pressure at a turn boundary (DESIGN §7.3): past the hard line the harness
// evicts on its own; past the soft line the model is reminded once per excursion.
func (a *Agent) weigh() error {
	w := a.window()
	if w <= 0 {
		return nil
	}
	st := a.sess.Snapshot()
	if st.Phase() == fold.AwaitingToolResults {
		return nil
	}
	u, r := a.used(), reserve(a.cfg.MaxTokens, w)
	switch {
	case u+r > w:
		if _, err := a.evictForPressure(u, "hard", a.keepBytes(u, w), 0); err != nil {
			return err
		}
	case u+2*r > w:
		if a.reminded {
			return nil
		}
		from, to, ok := st.PlanForcedEviction(a.keepBytes(u, w))
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

// keepBytes is what a forced eviction keeps of the context under window w, in bytes: about half
// of the budget left for turns once the reply's reserve, the system prompt and the tools are paid
// for. When the provider's count of the context (u) runs above the estimate from bytes — a
// tokenizer that makes more tokens of the same bytes — the bytes kept shrink in proportion.
func (a *Agent) keepBytes(u, w int64) int64 {
	st := a.sess.Snapshot()
	system, estimate := (st.Survey().SystemBytes+3)/4, st.Estimate()
	tools := a.toolTokens()
	keep := (w - reserve(a.cfg.MaxTokens, w) - system - tools) / 2
	if keep <= 0 {
		return 0
	}
	bytes := keep * 4
	if est := estimate + tools; u > est && est > 0 {
		bytes = bytes * est / u
	}
	return bytes
}

// evictForPressure makes the harness's eviction, keeping about keep bytes of the context; limit,
// when positive, is the real context limit a provider's refusal stated, recorded with it. It
// reports whether it evicted anything.
func (a *Agent) evictForPressure(u int64, line string, keep, limit int64) (bool, error) {
	st := a.sess.Snapshot()
	from, to, ok := st.PlanForcedEviction(keep)
	if !ok {
		if limit > 0 {
			return false, a.sess.Append(&record.Pressure{Line: line, Used: u, Window: a.window(), Limit: limit})
		}
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
	err := a.sess.Append(&record.Pressure{Line: line, Used: u, Window: a.window(), Limit: limit}, &record.Evicted{From: from, To: to, Note: note, By: record.ByHarness})
	return err == nil, err
}

// forceEvict is the harness's eviction after a provider's prompt-too-long refusal. The provider
// has just said the context does not fit, whatever the configured window says: rein learns the
// limit the refusal states (or, stating none, takes nine tenths of what it sent as the limit),
// keeps to it from then on, and evicts to about half of the budget under it — and to at most half
// of what was sent.
func (a *Agent) forceEvict(pe *provider.Error) (bool, error) {
	u, w := a.used(), a.window()
	limit := provider.StatedLimit(pe.Message)
	if limit <= 0 {
		limit = u * 9 / 10
	}
	if w > 0 && limit >= w {
		limit = 0 // it teaches nothing the session did not keep to already
	} else {
		w = limit
	}
	keep := u * 4 / 2
	if w > 0 {
		keep = min(keep, a.keepBytes(u, w))
	}
	return a.evictForPressure(u, "context_length", keep, limit)
}

// PromptTooLarge is why a prompt is refused that cannot fit the window on its own: Tokens is its
// estimate, Room what Window leaves for it once the system prompt, the tools and the reply's
// reserve are paid for.
type PromptTooLarge struct{ Tokens, Room, Window int64 }

func (e *PromptTooLarge) Error() string {
	return fmt.Sprintf("the prompt is about %d tokens, and the model's window of %d tokens leaves room for %d once "+
		"the system prompt, the tools and the reply are paid for: nothing was sent. Send a part of it (the end of a log: "+
		"tail -n 200 log | rein ...), or a model with a larger window (--context-window, if rein's is wrong for this one)",
		e.Tokens, e.Window, max(e.Room, 0))
}

// room is the most a prompt may take of window w (tooLarge): a prompt that cannot fit the window
// even with every earlier turn evicted would be refused after the round trip, or, by a local
// server, truncated without a word (the system prompt and the task first). The prompt is
// estimated at a quarter of a token a byte, fewer tokens than tokenizers make of nearly any text
// (long runs of spaces aside), so a prompt that fits is not refused; a window rein does not know
// refuses nothing.
//
// It is what window w leaves once the system prompt, the tools and the reply's reserve are paid
// for.
func (a *Agent) room(w int64) int64 {
	return w - reserve(a.cfg.MaxTokens, w) - int64(len(a.cfg.System)+3)/4 - a.toolTokens()
}

// tooLarge is a *PromptTooLarge if text does not fit room under window w (none if w is unknown).
func tooLarge(text string, room, w int64) error {
	if w <= 0 {
		return nil
	}
	if tokens := int64(len(text)+3) / 4; tokens > room {
		return &PromptTooLarge{Tokens: tokens, Room: room, Window: w}
	}
	return nil
}
