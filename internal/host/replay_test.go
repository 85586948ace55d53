package host_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/record"
	"pgregory.net/rapid"
)

// The live host replays equal: random sends (some queued, some asking for a tool), Stops (some
// repeated under their op id) and waits on a real host, and after every step the state the host
// publishes — as of its record N — is the state the first N records of the file fold to. The
// host decides nothing the record does not say. About 8 s for rapid's 100 conversations.
func TestHostLiveEqualsReplay(t *testing.T) {
	r := newRig(t, rigOptions{bash: true, simDelay: 2 * time.Millisecond})
	checks := 0
	rapid.Check(t, func(rt *rapid.T) {
		if testing.Short() && checks == 20 {
			return // -short: 20 conversations rather than rapid's 100
		}
		checks++
		id := r.create(fmt.Sprintf("replay %d", checks))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var stops []string
		for i, n := 0, rapid.IntRange(1, 12).Draw(rt, "steps"); i < n; i++ {
			switch rapid.IntRange(0, 4).Draw(rt, "step") {
			case 0, 1:
				text := fmt.Sprintf("message %d", i)
				if rapid.IntRange(0, 3).Draw(rt, "tool") == 0 {
					text += ": run `true`"
				}
				m := api.Message{Op: client.NewOp(), Text: text, Queue: rapid.IntRange(0, 3).Draw(rt, "queue") == 0}
				if _, err := r.c.Send(ctx, id, m); err != nil {
					rt.Fatalf("send: %v", err)
				}
			case 2:
				op := client.NewOp()
				if len(stops) > 0 && rapid.Bool().Draw(rt, "repeat") {
					op = rapid.SampledFrom(stops).Draw(rt, "press")
				}
				stops = append(stops, op)
				if _, err := r.c.StopOp(ctx, id, op, 0); err != nil {
					rt.Fatalf("stop: %v", err)
				}
			case 3:
				c, _ := r.h.Get(id)
				if err := c.Wait(ctx); err != nil {
					rt.Fatalf("wait: %v", err)
				}
			case 4:
			}
			checkReplayEqual(rt, r, id)
		}
		if _, err := r.c.StopOp(ctx, id, client.NewOp(), 0); err != nil {
			rt.Fatalf("stop: %v", err)
		}
		c, _ := r.h.Get(id)
		if err := c.Wait(ctx); err != nil {
			rt.Fatalf("wait: %v", err)
		}
		if v := checkReplayEqual(rt, r, id); v.Working || len(v.Submissions) != 0 {
			rt.Fatalf("after the last Stop: %+v", v)
		}
	})
	t.Logf("%d conversations", checks)
}

// checkReplayEqual compares the published state of conversation id with the state its record,
// up to the same record, folds to.
func checkReplayEqual(t *rapid.T, r *rig, id string) api.State {
	live := r.get(id).State
	data, err := os.ReadFile(r.path(id))
	if err != nil {
		t.Fatal(err)
	}
	st := fold.New()
	for i, line := range bytes.SplitAfter(data, []byte("\n")) {
		if int64(i) == live.Seq {
			break
		}
		rec, err := record.Decode(bytes.TrimSuffix(line, []byte("\n")), int64(i+1))
		if err != nil {
			t.Fatalf("record %d: %v", i+1, err)
		}
		if err := st.Step(rec); err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff(host.StateOf(st), live); d != "" {
		t.Fatalf("the published state as of record %d differs from its replay:\n%s", live.Seq, d)
	}
	return live
}
