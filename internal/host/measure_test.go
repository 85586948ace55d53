package host_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
)

// The measurements of DESIGN §15 for the host. They log figures and never assert a timing; the
// idle-memory test asserts the budget for a resting conversation, which is not a timing.
//
//	go test -run TestIdleMemory -v ./internal/host
//	go test -run '^$' -bench . -benchtime 2000x ./internal/host

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestIdleMemory measures what an idle conversation costs the host: 256 conversations with one
// exchange each (and 64 with twenty exchanges and the bash tool), first with their sessions open,
// then resting.
func TestIdleMemory(t *testing.T) {
	for _, c := range []struct {
		name      string
		n, rounds int
		bash      bool
	}{{"one exchange", 256, 1, false}, {"twenty exchanges and bash", 64, 20, true}} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, rigOptions{idleAfter: -1, simLog: 1, quiet: true, noCheck: true, bash: c.bash})
			ctx := context.Background()
			converse := func(i int) {
				v, _, err := r.c.Create(ctx, client.NewOp(), fmt.Sprintf("idle %d", i))
				if err != nil {
					t.Fatal(err)
				}
				conv, err := r.h.Get(v.ID)
				if err != nil {
					t.Fatal(err)
				}
				for k := range c.rounds {
					if _, err := r.c.Send(ctx, v.ID, api.Message{Op: client.NewOp(), Text: fmt.Sprintf("hello %d.%d", i, k)}); err != nil {
						t.Fatal(err)
					}
					if err := conv.Wait(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			// Warm up what every conversation shares: connections, the simulator, the index.
			converse(-1)
			if err := r.h.Rest(); err != nil {
				t.Fatal(err)
			}
			base := heap()
			for i := range c.n {
				converse(i)
			}
			open := heap()
			if err := r.h.Rest(); err != nil {
				t.Fatal(err)
			}
			if st := r.h.Stats(); st.Open != 0 {
				t.Fatalf("after Rest: %+v", st)
			}
			resting := heap()
			perOpen := (int64(open) - int64(base)) / int64(c.n)
			perRest := (int64(resting) - int64(base)) / int64(c.n)
			t.Logf("an idle conversation (%s): %d bytes with its session open, %d bytes resting (budget 65536)", c.name, perOpen, perRest)
			if perRest > 64<<10 {
				t.Errorf("a resting conversation costs %d bytes, over the 64 KiB budget", perRest)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// percentiles returns the 50th and 99th percentiles.
func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(ds)
	return ds[len(ds)/2], ds[min(len(ds)-1, len(ds)*99/100)]
}

// BenchmarkSendAck measures how long a send takes to be acknowledged (durable on the host)
// through the API while 256 conversations each have an exchange streaming slowly, from 8 clients
// at once. Each benchmark iteration is one send.
func BenchmarkSendAck(b *testing.B) {
	benchSendAck(b, 256, rigOptions{simDelay: 500 * time.Millisecond, simLog: 1, quiet: true, noCheck: true})
}

// BenchmarkSendAck1000 is BenchmarkSendAck with 1,000 conversations streaming at once (DESIGN
// §15: send-acknowledge p99 ≤ 50 ms), the host's cap on open conversations raised to hold them.
// Its replies stream slower, so that the first conversations are still streaming when the last
// has been created.
func BenchmarkSendAck1000(b *testing.B) {
	benchSendAck(b, 1000, rigOptions{simDelay: 4 * time.Second, simLog: 1, quiet: true, noCheck: true,
		caps: caps{maxOpen: 1100, createRate: 1e6, createBurst: 2000}})
}

func benchSendAck(b *testing.B, n int, opts rigOptions) {
	r := newRig(b, opts)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = r.create(fmt.Sprintf("active %d", i))
		r.send(ids[i], fmt.Sprintf("talk slowly %d", i))
	}
	// Polled, with a deadline: the host has no event for "n exchanges are running".
	for deadline := time.Now().Add(time.Minute); r.h.Stats().Running < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d exchanges running after a minute", r.h.Stats().Running, n)
		}
	}
	p50, p99 := sendAcks(b, func(ctx context.Context, k int) error {
		_, err := r.c.Send(ctx, ids[k%n], api.Message{Op: client.NewOp(), Text: fmt.Sprintf("more %d", k), Queue: true})
		return err
	})
	b.Logf("send acknowledged with %d conversations streaming (%d sends): p50 %v, p99 %v; %+v", n, b.N, p50, p99, r.h.Stats())
}

// BenchmarkStopToQuiesced measures a Stop through the API, from the press to the client reading
// the event that says the conversation is no longer working, while a reply streams. Each
// iteration is one send and one Stop.
func BenchmarkStopToQuiesced(b *testing.B) {
	r := newRig(b, rigOptions{simDelay: 20 * time.Millisecond, simLog: 1, quiet: true, noCheck: true})
	id := r.create("stops")
	w := r.events(id, 0)
	lat := make([]time.Duration, 0, b.N)
	ack := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		r.send(id, fmt.Sprintf("talk %d", i))
		w.live("text")
		b.StartTimer()
		start := time.Now()
		r.stop(id)
		ack = append(ack, time.Since(start))
		w.idle()
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	p50, p99 := percentiles(lat)
	a50, a99 := percentiles(ack)
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.Logf("stop to quiesced, streaming (%d stops): p50 %v, p99 %v; the Stop answered in p50 %v, p99 %v", b.N, p50, p99, a50, a99)
}

// sendAcks sends b.N queued messages from 8 senders, message k through send(k), and returns
// each one's time to acknowledgement, reporting the p50 and p99 as metrics.
func sendAcks(b *testing.B, send func(ctx context.Context, k int) error) (p50, p99 time.Duration) {
	lat := make([]time.Duration, b.N)
	var next sync.Mutex
	i := 0
	ctx := context.Background()
	b.ResetTimer()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= b.N {
					return
				}
				start := time.Now()
				err := send(ctx, k)
				lat[k] = time.Since(start)
				if err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	p50, p99 = percentiles(lat)
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	return p50, p99
}
