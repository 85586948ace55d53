package session

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

// toolTurn appends a prompt and an assistant message calling one tool, then commits its
// tool_started; it returns the call id and the turn.
func toolTurn(t testing.TB, s *Session, id string) int64 {
	t.Helper()
	must(t, s.Append(&record.UserPrompt{Turn: s.Snapshot().Next(), Text: "go"}))
	turn := s.Snapshot().Next()
	must(t, s.Commit(&record.AssistantMessage{Turn: turn, Parts: []record.Part{{Type: record.PartToolCall, CallID: id, Name: "bash", Args: json.RawMessage(`{"command":"ls"}`)}}},
		&record.ToolStarted{CallID: id, Name: "bash"}))
	return turn
}

func results(id string, turn int64) record.Payload {
	return &record.ToolResults{Results: []record.ToolResult{{CallID: id, Content: fold.WithTrailer("ok", turn), Outcome: record.OK}}}
}

// TestAppendBehindIsDurableByTheNextCommit: tool results appended behind are applied at once, and
// are durable once the next commit (the reply's) returns — under every seeded crash, whatever
// happened to the sync that ran beside.
func TestAppendBehindIsDurableByTheNextCommit(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("REIN_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (rerun with REIN_SEED=%d)", seed, seed)
	for run := range 200 {
		rng := rand.New(rand.NewPCG(seed, uint64(run)))
		mem := fsys.NewMem()
		s, err := Create("/r/s", Options{FS: mem}, started("s"))
		must(t, err)
		turn := toolTurn(t, s, "c1")
		must(t, s.AppendBehind(&record.ToolFinished{CallID: "c1", Outcome: record.OK}, results("c1", turn)))
		if ph := s.Snapshot().Phase(); ph != fold.AwaitingAssistantAfterToolResults {
			t.Fatalf("after AppendBehind the phase is %v: the results were not applied", ph)
		}
		must(t, s.Append(&record.TurnStarted{Attempt: 1}))
		must(t, s.Commit(&record.AssistantMessage{Turn: s.Snapshot().Next(), Parts: []record.Part{{Type: record.PartText, Text: "done"}}}))
		committed := s.Snapshot().Seq()
		mem.Crash(rng)
		s2, _, err := Open("/r/s/record.jsonl", Options{FS: mem})
		if err != nil {
			t.Fatalf("run %d (seed %d): %v", run, seed, err)
		}
		if got := s2.Snapshot().Seq(); got < committed {
			t.Fatalf("run %d (seed %d): %d records survived, %d were committed", run, seed, got, committed)
		}
		s2.Close()
	}
}

// TestAppendBehindSyncFailureFails: a sync that fails beside the caller fails the session at the
// next write that syncs: the reply is not applied, and the session refuses all writes after.
func TestAppendBehindSyncFailureFails(t *testing.T) {
	mem := fsys.NewMem()
	s, err := Create("/r/s", Options{FS: mem}, started("s"))
	must(t, err)
	turn := toolTurn(t, s, "c1")
	mem.FailSync("/r/s/record.jsonl", errors.New("EIO"))
	must(t, s.AppendBehind(results("c1", turn)))
	seq := s.Snapshot().Seq()
	err = s.Commit(&record.AssistantMessage{Turn: s.Snapshot().Next(), Parts: []record.Part{{Type: record.PartText, Text: "done"}}})
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("the commit after a failed sync: %v, want the session failed", err)
	}
	if s.Snapshot().Seq() != seq {
		t.Error("the reply was applied after the results' sync failed")
	}
	if err := s.Append(&record.TurnStarted{Attempt: 1}); !errors.Is(err, ErrFailed) {
		t.Errorf("a write after: %v", err)
	}
}

// TestAppendBehindClose: Close waits for the sync running beside, and reports its failure.
func TestAppendBehindClose(t *testing.T) {
	mem := fsys.NewMem()
	s, err := Create("/r/s", Options{FS: mem}, started("s"))
	must(t, err)
	turn := toolTurn(t, s, "c1")
	mem.FailSync("/r/s/record.jsonl", errors.New("EIO"))
	must(t, s.AppendBehind(results("c1", turn)))
	if err := s.Close(); !errors.Is(err, ErrFailed) {
		t.Errorf("Close: %v, want the sync's failure", err)
	}
}
