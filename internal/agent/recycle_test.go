package agent_test

import (
	"context"
	"testing"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/tool"
)

// TestBodiesRecycled: over a run of tool turns the agent builds later requests in the bodies of
// earlier ones (provider.Memo's Recycle), and the simulator, which judges every request strictly,
// takes each one: no body was written over while it was still read.
func TestBodiesRecycled(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{
			script: steps(append(emitSteps(12), textStep("Done."))...),
			noBash: true,
			tools:  []tool.Tool{emit},
		})
		if out := h.run(context.Background(), "emit"); out.Reason != fold.Replied || out.Err != nil {
			t.Fatalf("outcome %+v", out)
		}
		h.wire.mu.Lock()
		arrays := h.wire.arrays
		h.wire.mu.Unlock()
		seen, reused := map[*byte]bool{}, 0
		for _, a := range arrays {
			if seen[a] {
				reused++
			}
			seen[a] = true
		}
		if reused == 0 {
			t.Errorf("none of %d requests was built in an earlier one's body", len(arrays))
		}
		h.check()
	})
}
