package host_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
)

// TestRaceSendStop races sends and Stops from separate goroutines, thousands of times, through
// the API: each round sends one to three messages (some queued, some asking for a tool) and
// presses Stop once or twice, all released together, then waits for the conversation to settle.
// Every record is then checked (checkRecord): no withdrawn message is ever delivered, nothing is
// delivered twice, no press lets a message accepted before it be taken up after it, and every
// record replays admissibly and ends settled. A round that does not settle fails the test.
//
// REIN_RACE_ROUNDS sets the rounds per conversation (eight conversations race at once);
// REIN_RACE_SEED replays a run's choices.
func TestRaceSendStop(t *testing.T) {
	rounds := 250 // 2,000 rounds in all, about 10 s
	if raceDetector {
		rounds = 80 // 640 rounds, about 30 s under the race detector
	}
	if testing.Short() {
		rounds = 25
	}
	if v, err := strconv.Atoi(os.Getenv("REIN_RACE_ROUNDS")); err == nil {
		rounds = v
	}
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("REIN_RACE_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (REIN_RACE_SEED=%d replays the choices; goroutine timing still varies)", seed, seed)
	r := newRig(t, rigOptions{bash: true})
	const convs = 8
	var wg sync.WaitGroup
	stats := make([]raceStats, convs)
	for k := range convs {
		id := r.create(fmt.Sprintf("race %d", k))
		rng := rand.New(rand.NewPCG(seed, uint64(k)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				if !raceRound(t, r, id, rng, i, &stats[k]) {
					return
				}
			}
		}()
	}
	wg.Wait()
	var total raceStats
	for _, s := range stats {
		total.add(s)
	}
	t.Logf("%d rounds: %d sends, %d presses (%d stopped something, %d interrupted, %d quiet), %d withdrawn",
		convs*rounds, total.sends, total.presses, total.stopped, total.interrupted, total.quiet, total.withdrawn)
	if total.withdrawn == 0 || total.interrupted == 0 || total.quiet == 0 {
		t.Errorf("the race did not reach every state: %+v", total)
	}
}

type raceStats struct{ sends, presses, stopped, interrupted, quiet, withdrawn int }

func (s *raceStats) add(o raceStats) {
	s.sends += o.sends
	s.presses += o.presses
	s.stopped += o.stopped
	s.interrupted += o.interrupted
	s.quiet += o.quiet
	s.withdrawn += o.withdrawn
}

// raceRound plays one round; it reports false after a failure.
func raceRound(t *testing.T, r *rig, id string, rng *rand.Rand, round int, st *raceStats) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	type act struct {
		stop bool
		msg  api.Message
		spin int
	}
	var acts []act
	for i := range 1 + rng.IntN(3) {
		text := fmt.Sprintf("round %d message %d", round, i)
		if rng.IntN(8) == 0 {
			text += ": run `true`"
		}
		acts = append(acts, act{msg: api.Message{Op: client.NewOp(), Text: text, Queue: rng.IntN(4) == 0}, spin: rng.IntN(200)})
	}
	for range 1 + rng.IntN(2) {
		acts = append(acts, act{stop: true, spin: rng.IntN(200)})
	}
	release := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for _, a := range acts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			for range a.spin {
				runtime.Gosched()
			}
			if a.stop {
				res, err := r.c.Stop(ctx, id, 0)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					failed = fmt.Errorf("stop: %w", err)
					return
				}
				st.presses++
				switch {
				case res.Interrupted:
					st.interrupted++
					st.stopped++
				case res.Stopped:
					st.stopped++
				default:
					st.quiet++
				}
				st.withdrawn += len(res.Withdrawn)
				return
			}
			res, err := r.c.Send(ctx, id, a.msg)
			mu.Lock()
			defer mu.Unlock()
			if err != nil || res.State != api.Accepted {
				failed = fmt.Errorf("send: %+v, %v", res, err)
				return
			}
			st.sends++
		}()
	}
	close(release)
	wg.Wait()
	if failed != nil {
		t.Errorf("conversation %s round %d: %v", id, round, failed)
		return false
	}
	c, err := r.h.Get(id)
	if err != nil {
		t.Error(err)
		return false
	}
	start := time.Now()
	defer func() {
		if d := time.Since(start); d > 2*time.Second {
			t.Logf("conversation %s round %d took %v to settle", id, round, d)
			if os.Getenv("REIN_RACE_DUMP") != "" {
				recs := r.records(id)
				for _, rec := range recs[max(0, len(recs)-25):] {
					t.Logf("  %d %d %s %s", rec.Seq, rec.Time%100000, rec.Kind(), mustJSON(rec.Body))
				}
			}
		}
	}()
	if err := c.Wait(ctx); err != nil {
		t.Errorf("conversation %s round %d did not settle: %v", id, round, err)
		return false
	}
	if v, err := r.c.Get(ctx, id); err != nil || v.State.Working {
		t.Errorf("conversation %s round %d: settled but %+v, %v", id, round, v.State, err)
		return false
	}
	return true
}
