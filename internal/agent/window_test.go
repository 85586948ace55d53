package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// windowRun is what a long session in a small window measured.
type windowRun struct {
	requests, overLimit, forced int
	share                       float64 // mean share of the window the requests used once evictions began
}

// runSmallWindow plays steps exchanges (a prompt, a ~2 KB tool result, a reply) against a server
// that enforces limit tokens, with rein told the window is window tokens (0: not told).
func runSmallWindow(t *testing.T, f format, steps, limit int, window int64) windowRun {
	var script []string
	for i := 0; i < steps; i++ {
		script = append(script, fmt.Sprintf(`{"text":"Step %d: emitting.","tool_calls":[{"name":"emit","arguments":{"n":%d}}]}`, i, i), textStep(fmt.Sprintf("Step %d is done; the lines are emitted.", i)))
	}
	h := newHarness(t, f, setup{
		script: stepsOf(script),
		noBash: true,
		tools:  []tool.Tool{emit},
		sim:    func(o *sim.Options) { o.ContextLimit = limit },
		cfg: func(c *agent.Config) {
			c.Window = window
			c.MaxTokens = 8192
		},
	})
	for i := 0; i < steps; i++ {
		out := h.run(context.Background(), fmt.Sprintf("step %d: emit the lines for part %d of the report", i, i))
		expect(t, out, fold.Replied, false)
	}
	var m windowRun
	rs := h.records()
	for _, e := range all[*record.Evicted](rs) {
		if e.By == record.ByHarness {
			m.forced++
		}
	}
	// Requests after the first forced eviction: the steady state.
	firstForced := -1
	for i, r := range rs {
		if e, ok := r.Body.(*record.Evicted); ok && e.By == record.ByHarness {
			firstForced = i
			break
		}
	}
	turnsBefore := 0
	for _, r := range rs[:max(firstForced, 0)] {
		if _, ok := r.Body.(*record.TurnStarted); ok {
			turnsBefore++
		}
	}
	var sum float64
	var n int
	for i, r := range h.sim.Requests() {
		m.requests++
		if r.Outcome == sim.OverLimit {
			m.overLimit++
		}
		if firstForced >= 0 && i >= turnsBefore {
			sum += float64(r.Estimate) / float64(limit)
			n++
		}
	}
	if n > 0 {
		m.share = sum / float64(n)
	}
	return m
}

func stepsOf(s []string) string { return steps(s...) }

// TestSmallWindows: 150 steps in a 12k and a 32k window, as local models have. Requests stay
// under the server's limit, the harness evicts rarely (it keeps about half the budget each
// time), and the model is sent a good share of its window once evictions begin.
func TestSmallWindows(t *testing.T) {
	const steps = 150
	for _, limit := range []int{12_288, 32_768} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			t.Parallel()
			m := runSmallWindow(t, formats[0], steps, limit, int64(limit))
			t.Logf("window %d, %d steps: %d requests, %d over the limit, %d forced evictions, mean share of the window %.0f%% once evictions began",
				limit, steps, m.requests, m.overLimit, m.forced, m.share*100)
			if m.overLimit > 1 {
				t.Errorf("%d requests over the limit, want at most 1", m.overLimit)
			}
			if m.forced > 30 || m.forced == 0 {
				t.Errorf("%d forced evictions, want 1 to 30", m.forced)
			}
			if m.share < 0.35 {
				t.Errorf("the requests used %.0f%% of the window on average, want at least 35%%", m.share*100)
			}
		})
	}
}

// TestTinyWindow: a 4k window (the smallest local models) still works: every exchange replies
// and no request goes over the server's limit.
func TestTinyWindow(t *testing.T) {
	m := runSmallWindow(t, formats[2], 40, 4096, 4096)
	t.Logf("window 4096, 40 steps: %d requests, %d over the limit, %d forced evictions, mean share %.0f%%", m.requests, m.overLimit, m.forced, m.share*100)
	if m.overLimit > 1 {
		t.Errorf("%d requests over the limit, want at most 1", m.overLimit)
	}
}

// TestLearnsTheLimit: rein is told a window larger than the server's real limit (a local model
// served with a smaller context than its card says). The first refusal teaches rein the limit
// the server states, recorded, and the session keeps to it from then on.
func TestLearnsTheLimit(t *testing.T) {
	const steps, limit = 60, 12_288
	m := runSmallWindow(t, formats[1], steps, limit, 128_000)
	t.Logf("told 128k, served %d: %d requests, %d over the limit, %d forced evictions, mean share %.0f%%", limit, m.requests, m.overLimit, m.forced, m.share*100)
	if m.overLimit != 1 {
		t.Errorf("%d requests over the limit, want exactly the one that taught the limit", m.overLimit)
	}
}

// TestBatchOfLargeReads: eight ~250 KB results in one reply, in a 128k window. The batch's
// results are cut as a whole to what the context can take, saying so; the exchange replies and no
// request goes over the server's limit.
func TestBatchOfLargeReads(t *testing.T) {
	const limit = 128_000
	big := probe{"dump", func(_ context.Context, c tool.Call) tool.Result {
		return tool.Result{Content: strings.Repeat("0123456789abcdef\n", 250_000/17), Outcome: record.OK}
	}}
	var calls []string
	for i := 0; i < 8; i++ {
		calls = append(calls, fmt.Sprintf(`{"name":"dump","arguments":{"n":%d}}`, i))
	}
	h := newHarness(t, formats[0], setup{
		script: steps(`{"tool_calls":[`+strings.Join(calls, ",")+`]}`, textStep("Read them all.")),
		noBash: true,
		tools:  []tool.Tool{big},
		sim:    func(o *sim.Options) { o.ContextLimit = limit },
		cfg:    func(c *agent.Config) { c.Window = limit },
	})
	out := h.run(context.Background(), "dump the eight logs")
	expect(t, out, fold.Replied, false)
	for i, r := range h.sim.Requests() {
		if r.Outcome == sim.OverLimit {
			t.Fatalf("request %d went over the limit (%d tokens)", i, r.Estimate)
		}
	}
	res := all[*record.ToolResults](h.records())[0]
	total, cut := 0, 0
	for _, r := range res.Results {
		total += len(r.Content)
		if strings.Contains(r.Content, "[rein: cut:") {
			cut++
		}
	}
	if cut != 8 || total > limit*4/2+8*300 {
		t.Fatalf("the batch's results carry %d bytes (%d cut) in a %d-token window", total, cut, limit)
	}
	t.Logf("8 results of 250 KB in a %d-token window: %d bytes sent, %d results cut", limit, total, cut)
}

// TestLargeResultInSmallWindow: one result of 40 KB — a build log, the bash tool's own cap of
// 32 KB and more — in the windows local models have. A window of 8k tokens holds about 32 KB in
// all, the system prompt and the tools' definitions included, so the result is cut to what the
// window leaves; the exchange replies and no request goes over the server's limit. (A floor under
// the cut that ignored the window once let the result alone overflow it: the provider refused,
// and the newest turn, which no eviction may take, could not be made to fit.)
func TestLargeResultInSmallWindow(t *testing.T) {
	log := probe{"log", func(_ context.Context, c tool.Call) tool.Result {
		return tool.Result{Content: strings.Repeat("building target 0123456789\n", 40_000/27), Outcome: record.OK}
	}}
	for _, window := range []int{4096, 8192, 16_384} {
		t.Run(fmt.Sprint(window), func(t *testing.T) {
			h := newHarness(t, formats[1], setup{
				script: steps(`{"text":"Reading the log.","tool_calls":[{"name":"log","arguments":{}}]}`, textStep("The build passed.")),
				tools:  []tool.Tool{log},
				sim:    func(o *sim.Options) { o.ContextLimit = window },
				cfg:    func(c *agent.Config) { c.Window = int64(window) },
			})
			out := h.run(context.Background(), "read the build log and say whether it passed")
			expect(t, out, fold.Replied, false)
			for i, r := range h.sim.Requests() {
				if r.Outcome == sim.OverLimit {
					t.Fatalf("request %d went over the %d-token limit (%d tokens)", i, window, r.Estimate)
				}
			}
			res := all[*record.ToolResults](h.records())[0].Results[0]
			if !strings.Contains(res.Content, "[rein: cut:") {
				t.Fatalf("a 40 KB result was sent whole in a %d-token window", window)
			}
			t.Logf("window %d: the result kept %d bytes", window, len(res.Content))
		})
	}
}
