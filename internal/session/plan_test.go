package session

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
)

// A plan is computed from the state at the writer: writers racing to act on the same message
// (one delivering it, one withdrawing it) each see the other's record or none, so exactly one
// acts and the fold refuses nothing. Without the writer's lock around the plan, both would read
// the message waiting and the second write would be a refused live record.
func TestPlanIsJudgedAtTheWriter(t *testing.T) {
	s, err := Create(filepath.Join(t.TempDir(), "s1"), Options{Now: clock()}, started("s1"))
	must(t, err)
	defer s.Close()
	const n = 200
	for i := range n {
		must(t, s.Commit(&record.Submission{ID: fmt.Sprintf("m%d", i), Op: fmt.Sprintf("op%d", i), State: record.SubmissionAccepted, Text: "x"}))
	}
	// Two writers race over every message: one withdraws it, one rejects it, each only if it is
	// still accepted.
	var wg sync.WaitGroup
	for _, end := range []record.SubmissionState{record.SubmissionWithdrawn, record.SubmissionRejected} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n {
				id := fmt.Sprintf("m%d", i)
				err := s.CommitPlan(func(st *fold.State) []record.Payload {
					if v, _ := st.Submission(id); v.State != record.SubmissionAccepted {
						return nil
					}
					return []record.Payload{&record.Submission{ID: id, State: end}}
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var ended int
	for _, v := range s.Snapshot().Submissions() {
		if v.State == record.SubmissionWithdrawn || v.State == record.SubmissionRejected {
			ended++
		}
	}
	if ended != n {
		t.Fatalf("%d of %d messages ended", ended, n)
	}
	// A plan with nothing to write writes nothing.
	before := s.Snapshot().Seq()
	must(t, s.AppendPlan(func(*fold.State) []record.Payload { return nil }))
	if s.Snapshot().Seq() != before {
		t.Fatal("an empty plan wrote a record")
	}
	if _, _, err := Replay(nil, s.Path()); err != nil {
		t.Fatalf("the record does not replay: %v", err)
	}
}
