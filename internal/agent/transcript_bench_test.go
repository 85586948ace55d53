package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// transcriptSession builds a session of about size bytes of tool output on an in-memory
// filesystem, with all but the newest turns evicted, so every grep and read goes to the record.
func transcriptSession(b testing.TB, size int) *Agent {
	b.Helper()
	s, err := session.Create("/r/s", session.Options{FS: fsys.NewMem()}, &record.SessionStarted{Session: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	out := strings.Repeat("ok  \tgithub.com/example/pkg\t0.123s some more output of the test run\n", 64)
	for written := 0; written < size; written += len(out) {
		must := func(err error) {
			if err != nil {
				b.Fatal(err)
			}
		}
		must(s.Append(&record.UserPrompt{Turn: s.Snapshot().Next(), Text: "run the tests"}))
		turn := s.Snapshot().Next()
		id := fmt.Sprintf("c%d", turn)
		must(s.Append(&record.AssistantMessage{Turn: turn, Parts: []record.Part{{Type: record.PartToolCall, CallID: id, Name: "bash", Args: json.RawMessage(`{"command":"go test ./..."}`)}}}))
		must(s.Append(&record.ToolResults{Results: []record.ToolResult{{CallID: id, Content: fold.WithTrailer(out, turn), Outcome: record.OK}}}))
		must(s.Append(&record.AssistantMessage{Turn: s.Snapshot().Next(), Parts: []record.Part{{Type: record.PartText, Text: "all pass"}}}))
	}
	items := s.Snapshot().Frontier()
	if err := s.Commit(&record.Evicted{From: items[0].From, To: items[len(items)-2].To, Note: "old test runs", By: record.ByUser}); err != nil {
		b.Fatal(err)
	}
	return New(Config{Session: s})
}

// BenchmarkTranscriptGrep greps a 100 MB transcript through the transcript door, one turn read
// back through its digest-checked pointer at a time.
func BenchmarkTranscriptGrep(b *testing.B) {
	size := 100 << 20
	if testing.Short() {
		size = 8 << 20
	}
	a := transcriptSession(b, size)
	for _, pattern := range []string{"panic: runtime error", "FAIL|panic:"} {
		b.Run(pattern, func(b *testing.B) {
			args, _ := json.Marshal(map[string]string{"op": "grep", "pattern": pattern})
			b.SetBytes(int64(size))
			for i := 0; i < b.N; i++ {
				res, _ := transcriptDoor{}.Run(context.Background(), a, 0, tool.Call{Name: "transcript", Args: args})
				if res.IsError {
					b.Fatal(res.Content)
				}
			}
		})
	}
}

// BenchmarkReadBack reads 1,000 departed turns back through the transcript door.
func BenchmarkReadBack(b *testing.B) {
	a := transcriptSession(b, 3000*4500)
	ids := make([]int64, 0, 1000)
	for _, t := range a.sess.Snapshot().Turns() {
		if t.Under >= 0 && len(ids) < 1000 {
			ids = append(ids, t.ID)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, id := range ids {
			if _, err := a.sess.ReadTurn(id); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(ids)), "µs/turn")
}
