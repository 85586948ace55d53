package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// The loop's performance figures (DESIGN §15), against the simulator in-process at zero latency,
// through the real clients, with a real session on disk (fsync included):
//
//	go test -run '^$' -bench . -benchtime 50x ./internal/agent
//
// Timings are reported, never asserted.

// timedTool wraps a tool and notes how long each of its calls took.
type timedTool struct {
	tool.Tool
	mu    sync.Mutex
	spent []time.Duration
}

func (t *timedTool) Run(ctx context.Context, c tool.Call) tool.Result {
	start := time.Now()
	r := t.Tool.Run(ctx, c)
	t.mu.Lock()
	t.spent = append(t.spent, time.Since(start))
	t.mu.Unlock()
	return r
}

func (t *timedTool) Access(json.RawMessage) tool.Access { return tool.Access{Effect: tool.EffectRead} }

// BenchmarkToolTurn measures the harness's own time per tool turn: from the moment a reply's
// stream has ended (the client's Send returned) to the moment the next request's Send begins,
// less the time inside the tool's Run. It covers admission, the synced commit of the assistant
// message, the synced tool_started event, the results' synced commit, steering and pressure at
// the boundary, rendering, encoding and validating the next request. Each iteration is an
// exchange of 100 tool turns with ~2 KB results in a fresh session.
//
// The "memory" variants keep the record on /dev/shm, where fsync costs nothing, to separate the
// harness's computing from the disk's latency.
func BenchmarkToolTurn(b *testing.B) {
	for _, f := range formats {
		b.Run(f.name+"/disk", func(b *testing.B) { benchToolTurn(b, f, "") })
		b.Run(f.name+"/memory", func(b *testing.B) {
			if _, err := os.Stat("/dev/shm"); err != nil {
				b.Skip("no /dev/shm")
			}
			dir, err := os.MkdirTemp("/dev/shm", "rein-bench-")
			if err != nil {
				b.Skip(err)
			}
			b.Cleanup(func() { os.RemoveAll(dir) })
			benchToolTurn(b, f, dir)
		})
	}
}

func benchToolTurn(b *testing.B, f format, base string) {
	const turns = 100
	var harnessTimes, turnTimes, validateTimes []time.Duration
	var sizes []int
	for b.Loop() {
		b.StopTimer()
		root := ""
		if base != "" {
			var err error
			if root, err = os.MkdirTemp(base, "s-"); err != nil {
				b.Fatal(err)
			}
		}
		tt := &timedTool{Tool: emit}
		h := newHarness(b, f, setup{
			script: steps(append(emitSteps(turns), textStep("Done."))...),
			noBash: true, noCheck: true,
			tools: []tool.Tool{tt},
			sim:   func(o *sim.Options) { o.MaxLogged = 1 },
			root:  root,
		})
		var sends [][2]time.Time
		h.wire.onSend = func(start, end time.Time) { sends = append(sends, [2]time.Time{start, end}) }
		var validated []time.Duration
		h.wire.onValidate = func(size int, took time.Duration) {
			validated = append(validated, took)
			sizes = append(sizes, size)
		}
		b.StartTimer()
		out := h.run(context.Background(), "emit")
		b.StopTimer()
		if out.Reason != fold.Replied {
			b.Fatalf("outcome %+v", out)
		}
		for i := 0; i+1 < len(sends); i++ {
			gap := sends[i+1][0].Sub(sends[i][1])
			harnessTimes = append(harnessTimes, gap-tt.spent[i])
			turnTimes = append(turnTimes, sends[i+1][0].Sub(sends[i][0]))
			validateTimes = append(validateTimes, validated[i+1])
		}
		b.StartTimer()
	}
	report(b, harnessTimes, "harness")
	report(b, validateTimes, "validate")
	report(b, turnTimes, "turn")
	b.Logf("requests of %d to %d bytes", slices.Min(sizes), slices.Max(sizes))
}

// BenchmarkStop measures Stop to quiesced — from the Stop to TakeUp's return, the owed calls
// answered and the quiesced event synced — in every phase and wait, and, while a tool runs,
// how long its process group outlives the exchange.
func BenchmarkStop(b *testing.B) {
	for _, c := range stopCases() {
		b.Run(c.name, func(b *testing.B) {
			f := formats[0]
			var lat []time.Duration
			for b.Loop() {
				b.StopTimer()
				s := setup{script: c.script, noCheck: true}
				if c.setup != nil {
					c.setup(&s)
				}
				h := newHarness(b, f, s)
				ctx := c.arm(h, h.ws)
				b.StartTimer()
				out := h.run(ctx, "go")
				b.StopTimer()
				lat = append(lat, h.sinceStop())
				if out.Reason != fold.Cancelled {
					b.Fatalf("outcome %+v", out)
				}
				b.StartTimer()
			}
			report(b, lat, "stop")
		})
	}
}

// BenchmarkSession500 measures the memory of a 500-turn session (tool results of ~2 KB, a
// 200,000-token window, so the harness evicts as it goes): the peak of HeapInuse sampled at
// every tool call, and Sys at the end. The simulator runs in the same process and is counted.
func BenchmarkSession500(b *testing.B) {
	const turns = 500
	for _, f := range formats {
		b.Run(f.name, func(b *testing.B) {
			var peakHeap, sys uint64
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				var ms runtime.MemStats
				sample := probe{"emit", func(ctx context.Context, c tool.Call) tool.Result {
					runtime.ReadMemStats(&ms)
					peakHeap = max(peakHeap, ms.HeapInuse)
					return emit.Run(ctx, c)
				}}
				h := newHarness(b, f, setup{
					script: steps(append(emitSteps(turns), textStep("Done."))...),
					noBash: true, noCheck: true,
					tools: []tool.Tool{sample},
					sim:   func(o *sim.Options) { o.MaxLogged = 1 },
					cfg: func(c *agent.Config) {
						c.Window = 200_000
						c.MaxTurns = 1000
					},
				})
				b.StartTimer()
				out := h.run(context.Background(), "emit")
				b.StopTimer()
				if out.Reason != fold.Replied {
					b.Fatalf("outcome %+v", out)
				}
				runtime.ReadMemStats(&ms)
				sys = max(sys, ms.Sys)
				evicted := len(all[*record.Evicted](h.records()))
				b.ReportMetric(float64(evicted), "evictions")
				b.StartTimer()
			}
			b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(sys)/(1<<20), "sys-MiB")
		})
	}
}

// report adds the median and the 99th percentile of ds to the benchmark's figures.
func report(b *testing.B, ds []time.Duration, what string) {
	if len(ds) == 0 {
		return
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	p := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	b.ReportMetric(float64(p(0.50).Microseconds())/1000, what+"-p50-ms")
	b.ReportMetric(float64(p(0.99).Microseconds())/1000, what+"-p99-ms")
	b.Logf("%s over %d: p50 %v p99 %v max %v", what, len(s), p(0.5), p(0.99), s[len(s)-1])
}
