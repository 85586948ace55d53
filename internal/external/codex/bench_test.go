package codex

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/external"
	"github.com/reinhq/rein/internal/provider/sim"
)

// BenchmarkStop measures, per state, the time from a Stop to the Turn's return (the turn over and
// the app-server's tree gone), and reports its p50 and p99 over the iterations:
//
//	REIN_CODEX=/tmp/peers/node_modules/.bin/codex go test ./internal/external/codex -run X -bench Stop -benchtime 20x
func BenchmarkStop(b *testing.B) {
	for _, c := range stopCases {
		b.Run(c.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				took = append(took, stopOnce(b, c, false))
			}
			report(b, took, "stop")
		})
	}
}

// BenchmarkTurnStart measures what a turn in a new app-server costs before the turn itself can
// start — starting the program, initialize, thread/resume: the part an app-server kept between
// turns would save — and the whole resumed turn, for scale.
func BenchmarkTurnStart(b *testing.B) {
	for _, perTurn := range []bool{false, true} {
		b.Run(map[bool]string{false: "kept", true: "per-turn"}[perTurn], func(b *testing.B) { turnStart(b, perTurn) })
	}
}

func turnStart(b *testing.B, perTurn bool) {
	r := newRig(b, `{"steps":[{"conversation":"none","text":"never"}]}`, sim.Options{})
	r.b.opts.PerTurn = perTurn
	ctx := context.Background()
	first := r.turn(ctx, "hello", "", "workspace", newSink())
	if first.Status != external.StatusCompleted {
		b.Fatalf("first turn: %+v", first)
	}
	var ready, whole []time.Duration
	for b.Loop() {
		s := newSink()
		start := time.Now()
		var at time.Time
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.await(b, turnWithin, "Started", func(s *sink) bool { return s.started > 0 })
			at = time.Now()
		}()
		res := r.turn(ctx, "again", first.Session, "workspace", s)
		<-done
		if res.Status != external.StatusCompleted {
			b.Fatalf("resumed turn: %+v", res)
		}
		ready = append(ready, at.Sub(start))
		whole = append(whole, time.Since(start))
	}
	report(b, ready, "resumed")
	report(b, whole, "turn")
}

// report adds the p50 and p99 of took, in milliseconds, as the benchmark's metrics.
func report(b *testing.B, took []time.Duration, name string) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	at := func(q float64) float64 {
		return float64(took[int(q*float64(len(took)-1)+0.5)]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.50), name+"-p50-ms")
	b.ReportMetric(at(0.99), name+"-p99-ms")
	b.ReportMetric(0, "ns/op")
}
