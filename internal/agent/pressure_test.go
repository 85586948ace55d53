package agent_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// emit is a tool that answers about 2 KB, quickly: the pressure tests run hundreds of turns.
var emit = probe{"emit", func(_ context.Context, c tool.Call) tool.Result {
	var b strings.Builder
	for i := 0; b.Len() < 2000; i++ {
		fmt.Fprintf(&b, "call %s line %d: the quick brown fox jumps over the lazy dog\n", c.ID, i)
	}
	return tool.Result{Content: b.String(), Outcome: record.OK}
}}

func emitSteps(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(`{"tool_calls":[{"name":"emit","arguments":{"n":%d}}]}`, i)
	}
	return out
}

var reminderSpan = regexp.MustCompile(`rein will evict turns (\d+)(?:–|\\u2013)(\d+) on its own`)

// TestContextPressure: a long session in a small window stays under the provider's limit by the
// harness's own evictions; the soft-line reminder comes once per excursion; and a model that
// takes the reminder's span first pre-empts the harness.
func TestContextPressure(t *testing.T) {
	const window, turns = 40_000, 300
	reserve := int64(1024 + window/20) // the harness's output limit, and a twentieth for the estimate
	eachFormat(t, func(t *testing.T, f format) {
		orig := append(emitSteps(turns), textStep("All emitted."))
		h := newHarness(t, f, setup{
			script: steps(orig...),
			noBash: true,
			tools:  []tool.Tool{emit},
			sim:    func(o *sim.Options) { o.ContextLimit = window },
			cfg: func(c *agent.Config) {
				c.Window = window
				c.MaxTurns = 1000
			},
		})
		// The scripted model answers the first reminder by evicting the span it names, with a
		// note: the script is rewritten before the simulator reads the request that carries it.
		var from, to atomic.Int64
		h.onRequest(func(body []byte) {
			if from.Load() != 0 {
				return
			}
			m := reminderSpan.FindSubmatch(body)
			if m == nil {
				return
			}
			f, _ := strconv.ParseInt(string(m[1]), 10, 64)
			tt, _ := strconv.ParseInt(string(m[2]), 10, 64)
			from.Store(f)
			to.Store(tt)
			rest := orig[len(orig)-h.sim.Pending():]
			evict := fmt.Sprintf(`{"tool_calls":[{"name":"context","arguments":{"op":"evict","from":%d,"to":%d,"note":"emitted lines, nothing to keep"}}]}`, f, tt)
			sc, err := sim.ParseScript([]byte(`{"strict":true,"steps":` + steps(append([]string{evict}, rest...)...) + `}`))
			if err != nil {
				panic(err)
			}
			h.sim.SetScript(sc)
		})
		out := h.run(context.Background(), "emit until you are told to stop")
		expect(t, out, fold.Replied, false)

		for i, r := range h.sim.Requests() {
			if r.Outcome == sim.OverLimit {
				t.Fatalf("request %d went over the provider's limit (%d tokens)", i, r.Estimate)
			}
		}
		rs := h.records()
		if from.Load() == 0 {
			t.Fatalf("no soft-line reminder named a span")
		}
		ev := all[*record.Evicted](rs)
		if len(ev) < 2 || ev[0].By != record.ByModel || ev[0].From != from.Load() || ev[0].To != to.Load() {
			t.Fatalf("evictions %+v, want the model's of %d–%d first, then the harness's", ev, from.Load(), to.Load())
		}
		harness := 0
		for _, e := range ev[1:] {
			if e.By != record.ByHarness {
				t.Errorf("eviction %+v, want by the harness", e)
			}
			harness++
		}
		// Every hard-line eviction is announced by a pressure event just before it.
		hard, soft := 0, 0
		inExcursion := false
		for i, r := range rs {
			switch b := r.Body.(type) {
			case *record.Pressure:
				switch b.Line {
				case "hard":
					hard++
					if e, ok := rs[i+1].Body.(*record.Evicted); !ok || e.By != record.ByHarness {
						t.Errorf("a hard-line pressure event is not followed by the harness's eviction")
					}
				case "soft":
					soft++
					if inExcursion {
						t.Errorf("record %d: a second reminder in one excursion past the soft line", r.Seq)
					}
					inExcursion = true
				}
			case *record.AssistantMessage:
				if b.Usage.Input+2*reserve <= window {
					inExcursion = false // back under the soft line
				}
			}
		}
		if hard != harness || soft == 0 {
			t.Errorf("%d hard-line events for %d harness evictions; %d reminders", hard, harness, soft)
		}
		t.Logf("%d turns: %d reminders, the model's eviction of %d–%d, then %d by the harness", turns, soft, from.Load(), to.Load(), harness)
	})
}

// TestPromptLargerThanTheWindow: a prompt that cannot fit the window on its own (estimated from
// its bytes, which no tokenizer makes fewer tokens of than a quarter) is refused before anything
// is recorded or sent, saying how large it is, what the window leaves and what to do — a local
// server would otherwise truncate it silently, the system prompt first, or refuse it after the
// round trip. A prompt that fits is taken up after it; a window rein does not know refuses
// nothing.
func TestPromptLargerThanTheWindow(t *testing.T) {
	const window = 8_000
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{
			script: steps(textStep("Read it.")),
			sim:    func(o *sim.Options) { o.ContextLimit = window },
			cfg:    func(c *agent.Config) { c.Window = window },
		})
		requests := 0
		h.onRequest(func([]byte) { requests++ })
		huge := strings.Repeat("0123456789abcdef", 8_000/16*4*2) // twice the window at four bytes a token
		out := h.run(context.Background(), "summarize this:\n"+huge)
		var tl *agent.PromptTooLarge
		if !errors.As(out.Err, &tl) || tl.Window != window || tl.Tokens < window || tl.Room <= 0 || tl.Room >= window {
			t.Fatalf("outcome %+v, want the prompt refused as too large for the window", out)
		}
		if msg := out.Err.Error(); !strings.Contains(msg, "8000") || !strings.Contains(msg, "tail") {
			t.Errorf("the refusal says %q: it should give the window and a way out", msg)
		}
		var pr *agent.PromptRefused
		if !errors.As(out.Err, &pr) {
			t.Errorf("a prompt too large is not a refusal a host can reject a message for: %T", out.Err)
		}
		if n := len(ofKind(h.records(), record.KindUserPrompt)); n != 0 || requests != 0 {
			t.Fatalf("the refused prompt was recorded (%d) or sent (%d requests)", n, requests)
		}
		if out := h.run(context.Background(), "summarize this:\n"+huge[:4_000]); out.Reason != fold.Replied || out.Err != nil {
			t.Fatalf("a prompt that fits, after: %+v", out)
		}
	})
	h := newHarness(t, formats[0], setup{script: steps(textStep("Read it.")), cfg: func(c *agent.Config) { c.Window = 0 }})
	if out := h.run(context.Background(), strings.Repeat("x", 200_000)); out.Reason != fold.Replied {
		t.Errorf("with no window known, a large prompt: %+v", out)
	}
}
