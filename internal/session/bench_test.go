package session

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
)

// writeRecord writes a record of about size bytes: exchanges of a prompt, an assistant message
// with a tool call, its ~4 KB result, and a reply, with an eviction every 40 turns. Lines are
// written without fsync; only replay is measured.
func writeRecord(b *testing.B, dir string, size int64) string {
	b.Helper()
	st := fold.New()
	path := filepath.Join(dir, journal.FileName)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var written int64
	put := func(p record.Payload) {
		r := record.Record{Seq: st.Seq() + 1, Time: 1764400000000 + st.Seq(), Body: p}
		if err := st.Step(r); err != nil {
			b.Fatal(err)
		}
		line, err := record.Encode(r)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := f.Write(line)
		written += int64(n)
	}
	put(&record.SessionStarted{Session: "bench", Provider: "sim", Model: "sim-1", Cwd: "/w", Version: "bench"})
	out := strings.Repeat("main.go:12: some output of the command, a line of moderate length\n", 60)
	for i := 0; written < size; i++ {
		put(&record.UserPrompt{Turn: st.Next(), Text: fmt.Sprintf("do step %d of the task", i)})
		turn := st.Next()
		id := fmt.Sprintf("call_%d", i)
		put(&record.AssistantMessage{Turn: turn, Parts: []record.Part{{Type: record.PartText, Text: "Running the tests now."}, {Type: record.PartToolCall, CallID: id, Name: "bash", Args: json.RawMessage(`{"command":"go test ./..."}`)}}, StopReason: "tool_use", Usage: record.Usage{Input: 1200, Output: 40}})
		put(&record.ToolStarted{CallID: id, Name: "bash"})
		put(&record.ToolResults{Results: []record.ToolResult{{CallID: id, Content: fold.WithTrailer(out, turn), Outcome: record.OK}}})
		put(&record.AssistantMessage{Turn: st.Next(), Parts: []record.Part{{Type: record.PartText, Text: "The tests pass; moving on."}}, StopReason: "end_turn"})
		put(&record.Quiesced{Reason: "replied"})
		if i%10 == 9 {
			items := st.Frontier()
			if len(items) > 8 {
				put(&record.Evicted{From: items[0].From, To: items[len(items)-5].To, Note: "earlier steps, all passing", By: record.ByHarness})
			}
		}
	}
	return path
}

// BenchmarkReplay is what a resume costs: read, verify, decode and fold a 100 MB record
// (DESIGN §15: ≥ 250 MB/s, a 100 MB record resumed in ≤ 1 s).
func BenchmarkReplay(b *testing.B) {
	size := int64(100 << 20)
	if testing.Short() {
		size = 8 << 20
	}
	path := writeRecord(b, b.TempDir(), size)
	fi, _ := os.Stat(path)
	b.SetBytes(fi.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, _, err := Replay(nil, path)
		if err != nil {
			b.Fatal(err)
		}
		_ = st
	}
}

// BenchmarkAppend is durable appends through the single writer: a protocol record synced per
// append (DESIGN §15: ≥ 1,000 records/s).
func BenchmarkAppend(b *testing.B) {
	s, err := Create(filepath.Join(b.TempDir(), "s"), Options{}, started("s"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Append(&record.System{Text: fmt.Sprintf("system prompt %d", i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
