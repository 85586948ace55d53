package session

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

// The shape of a running conversation: the agent's loop appends exchanges and reads the state
// between its appends (the next turn id, the context to send, the meta to weigh), while host
// goroutines append events (a rename, submissions, a model switch, Stop presses) and readers
// (the host's views, an events stream) read the state and read departed turns back. Everyone
// reads through Snapshot, and nothing a reader holds may change under it.
//
// This is the race the session had when the loop read the live state while the host appended (a
// rename racing the loop's weighing of the context): under the race detector (CI runs this
// package with -race) a reader that could see the live state is reported. Without it, each
// reader still checks that a snapshot's figures do not move while it holds it and that
// snapshots only go forward.
func TestSnapshotsWhileOthersAppend(t *testing.T) {
	exchanges := 120
	if testing.Short() {
		exchanges = 30
	}
	s, err := Create(filepath.Join(t.TempDir(), "s"), Options{FS: fsys.NewMem(), Now: clock()}, started("s"))
	must(t, err)
	defer s.Close()

	done := make(chan struct{})
	errs := make(chan error, 16)
	report := func(format string, args ...any) {
		select {
		case errs <- fmt.Errorf(format, args...):
		default:
		}
	}
	var wg sync.WaitGroup
	// The host: events from two goroutines, each durable before it returns.
	for h := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				op := fmt.Sprintf("h%d-%d", h, i)
				var p record.Payload
				switch i % 4 {
				case 0:
					p = &record.Renamed{Title: "title " + op, Op: op}
				case 1:
					p = &record.Submission{ID: "m-" + op, Op: op, State: "accepted", Text: "queued " + op, Queue: true}
				case 2:
					p = &record.Stop{Op: op}
				case 3:
					p = &record.ModelChanged{Provider: "sim", Model: "sim-" + op, ContextWindow: 1000, Op: op}
				}
				if err := s.Commit(p); err != nil {
					report("host %d: %v", h, err)
					return
				}
				// What a host does next: read its own operation back.
				st := s.Snapshot()
				if _, ok := st.StopByOp(op); i%4 == 2 && !ok {
					report("host %d: the Stop %s it committed is not in the snapshot after it", h, op)
				}
			}
		}()
	}
	// Readers: views, stream states, departed turns read back.
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var prev int64
			for {
				select {
				case <-done:
					return
				default:
				}
				st := s.Snapshot()
				if st.Seq() < prev {
					report("reader %d: a snapshot at record %d after one at %d", r, st.Seq(), prev)
					return
				}
				prev = st.Seq()
				meta, ctx, survey := st.Meta(), len(st.Context()), st.Survey()
				subs := len(st.Submissions())
				for _, t := range st.Turns() {
					if t.Under >= 0 {
						if _, err := s.ReadTurn(t.ID); err != nil {
							report("reader %d: turn %d does not read back: %v", r, t.ID, err)
							return
						}
						break
					}
				}
				if st.Meta() != meta || len(st.Context()) != ctx || st.Survey().Bytes != survey.Bytes || len(st.Submissions()) != subs {
					report("reader %d: the snapshot at record %d changed while it was held", r, st.Seq())
					return
				}
			}
		}()
	}
	// The agent's loop, on this goroutine.
	out := strings.Repeat("a line of output\n", 40)
	for i := range exchanges {
		must(t, s.Append(&record.UserPrompt{Turn: s.Snapshot().Next(), Text: fmt.Sprintf("step %d", i)}))
		st := s.Snapshot()
		turn := st.Next()
		_ = st.Meta().LastUsage // weighing the context, as the loop does at a turn boundary
		_ = len(st.Context())
		id := fmt.Sprintf("c%d", i)
		must(t, s.Commit(&record.AssistantMessage{Turn: turn, Parts: []record.Part{{Type: record.PartText, Text: "running"},
			{Type: record.PartToolCall, CallID: id, Name: "bash", Args: json.RawMessage(`{"command":"make"}`)}}},
			&record.ToolStarted{CallID: id, Name: "bash"}))
		if plan := s.Snapshot().QuiescePlan(fold.Cancelled); plan == nil || plan.Results[0].Outcome != record.Interrupted {
			t.Fatalf("the snapshot after the call's tool_started does not owe it as started: %+v", plan)
		}
		must(t, s.Append(&record.ToolResults{Results: []record.ToolResult{{CallID: id, Content: fold.WithTrailer(out, turn), Outcome: record.OK}}}))
		must(t, s.Append(&record.AssistantMessage{Turn: s.Snapshot().Next(), Parts: []record.Part{{Type: record.PartText, Text: "done"}}}))
		must(t, s.Commit(&record.Quiesced{Reason: fold.Replied}))
		if i%10 == 9 {
			items := s.Snapshot().Frontier()
			must(t, s.Commit(&record.Evicted{From: items[0].From, To: items[len(items)-3].To, Note: "older steps", By: record.ByHarness}))
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The last snapshot is the state a replay of the record builds.
	replayed, _, err := Replay(s.opts.FS, s.Path())
	must(t, err)
	if got, want := s.Snapshot().Seq(), replayed.Seq(); got != want {
		t.Fatalf("the last snapshot is at record %d, the replay at %d", got, want)
	}
	if got, want := len(s.Snapshot().Submissions()), len(replayed.Submissions()); got != want || got == 0 {
		t.Fatalf("the last snapshot holds %d submissions, the replay %d", got, want)
	}
}
