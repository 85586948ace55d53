package agent_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// TestHostAppendsWhileTheLoopRuns: the loop runs an exchange of tool turns in a small window (so
// it weighs the context and evicts at its boundaries, reads the state to admit each reply, and
// builds each request from it) while two goroutines append what a host appends to the same
// session — renames, submissions, Stop presses of nothing, model switches — and two read it as a
// host's views do, each once for every request the loop sends (woken by the request, so they
// land while the loop works). This is the race the loop once had (it weighed the context on the live state
// while a rename landed): the loop, the host and the readers read only snapshots now, and CI runs
// this package under the race detector. The record must still replay to the live state.
func TestHostAppendsWhileTheLoopRuns(t *testing.T) {
	const window = 12_000
	turns := 60
	if testing.Short() {
		turns = 20
	}
	h := newHarness(t, formats[0], setup{
		script: steps(append(emitSteps(turns), textStep("All emitted."))...),
		noBash: true,
		tools:  []tool.Tool{emit},
		sim:    func(o *sim.Options) { o.ContextLimit = window },
		cfg: func(c *agent.Config) {
			c.Window = window
			c.MaxTurns = 1000
		},
	})
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	wake := make([]chan struct{}, 4)
	for i := range wake {
		wake[i] = make(chan struct{}, 1)
	}
	h.onRequest(func([]byte) {
		for _, w := range wake {
			select {
			case w <- struct{}{}:
			default:
			}
		}
	})
	for k := range 2 {
		wg.Add(2)
		go func() { // a host
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				case <-wake[k]:
				}
				op := fmt.Sprintf("host%d-%d", k, i)
				var p record.Payload
				switch i % 4 {
				case 0:
					p = &record.Renamed{Title: "conversation " + op, Op: op}
				case 1:
					p = &record.Submission{ID: "m-" + op, Op: op, State: "accepted", Text: "later", Queue: true}
				case 2:
					p = &record.Stop{Op: op}
				case 3:
					p = &record.ModelChanged{Provider: formats[0].name, Model: sim.DefaultModel, ContextWindow: window, Op: op}
				}
				if err := h.sess.Commit(p); err != nil {
					errs <- fmt.Errorf("host %d: %v", k, err)
					return
				}
			}
		}()
		go func() { // a reader
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				case <-wake[2+k]:
				}
				st := h.sess.Snapshot()
				_, _ = st.Meta(), st.Survey()
				for _, t := range st.Turns() {
					if t.Under >= 0 {
						if _, err := h.sess.ReadTurn(t.ID); err != nil {
							errs <- fmt.Errorf("reader %d: turn %d does not read back: %v", k, t.ID, err)
							return
						}
						break
					}
				}
			}
		}()
	}
	out := h.run(context.Background(), "emit until you are told to stop")
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	expect(t, out, fold.Replied, false)
	st := h.sess.Snapshot()
	if len(st.Submissions()) == 0 || st.Meta().Title == "" {
		t.Fatalf("the host's events did not land: %d submissions, title %q", len(st.Submissions()), st.Meta().Title)
	}
	if evicted := len(all[*record.Evicted](h.records())); evicted == 0 {
		t.Fatalf("the loop never evicted in a %d-token window: the test does not exercise its weighing", window)
	}
}
