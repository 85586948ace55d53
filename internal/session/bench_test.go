package session

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
)

// writeRecord writes a record of about size bytes: exchanges of a prompt, an assistant message
// with a tool call, its ~4 KB result, and a reply, with an eviction every 40 turns. Lines are
// written without fsync; only replay is measured.
func writeRecord(b testing.TB, dir string, size int64) string {
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
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		st, _, err := Replay(nil, path)
		if err != nil {
			b.Fatal(err)
		}
		_ = st
	}
	reportCPU(b, fi.Size(), cpuTime()-cpu)
}

// cpuTime is the CPU time the process has used, every thread's (the collector's too).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds the throughput per CPU-second, which a machine shared with other work does not
// change the way it changes the wall-clock MB/s.
func reportCPU(b *testing.B, size int64, cpu time.Duration) {
	if cpu > 0 {
		b.ReportMetric(float64(size)*float64(b.N)/1e6/cpu.Seconds(), "MB/cpu-s")
	}
}

// BenchmarkReplayFile replays the record at $REIN_REPLAY_RECORD (write one with
// TestWriteReplayRecord) and reports, beside the throughput, the peak of the heap in use
// (sampled every 4,096 lines) and the process's peak resident set, so that memory over a large
// record can be measured in a process that did nothing else:
//
//	REIN_WRITE_RECORD=/tmp/big.jsonl REIN_WRITE_SIZE=1024 go test -run TestWriteReplayRecord ./internal/session
//	REIN_REPLAY_RECORD=/tmp/big.jsonl go test -run '^$' -bench ReplayFile -benchtime 1x ./internal/session
//
// With $REIN_REPLAY_HEAP set it also writes there a heap profile taken with the folded state
// live (go tool pprof -sample_index=inuse_space): what holds the state's memory.
func BenchmarkReplayFile(b *testing.B) {
	benchFile(b, func(path string, sample func(seq int64)) (any, error) {
		st := fold.New()
		blobs := journal.Blobs(nil, path)
		_, err := journal.Inspect(fsys.OS{}, path, func(seq int64, line []byte, _ record.Locus) error {
			sample(seq)
			r, err := record.DecodeWith(line, seq, blobs)
			if err != nil {
				return err
			}
			return st.Step(r)
		})
		return st, err
	})
}

// BenchmarkLoadFile is BenchmarkReplayFile for session.Load: the fold and the session's loci.
func BenchmarkLoadFile(b *testing.B) {
	benchFile(b, func(path string, _ func(int64)) (any, error) {
		s, _, err := Load(path, Options{})
		return s, err
	})
}

// benchFile loads the record at $REIN_REPLAY_RECORD with load and reports what the loaded value
// holds (the heap it keeps past what the process held before), the peak of the heap in use
// (sampled every 4,096 lines where load calls sample) and the process's peak resident set.
func benchFile(b *testing.B, load func(path string, sample func(seq int64)) (any, error)) {
	path := os.Getenv("REIN_REPLAY_RECORD")
	if path == "" {
		b.Skip("set REIN_REPLAY_RECORD to a record file")
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	var peak uint64
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	sample := func(seq int64) {
		if seq%4096 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}
	var v any
	cpu := cpuTime()
	for b.Loop() {
		v = nil
		if v, err = load(path, sample); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, fi.Size(), cpuTime()-cpu)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if heap := os.Getenv("REIN_REPLAY_HEAP"); heap != "" {
		writeHeap(b, heap)
	}
	runtime.KeepAlive(v)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	b.ReportMetric(float64(ms.HeapAlloc-base)/(1<<20), "kept-MiB")
	if peak > 0 {
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	}
	b.ReportMetric(float64(maxRSS(ru))/(1<<20), "peak-rss-MiB")
}

// writeHeap writes a heap profile of what is live now to path: what a folded state holds.
func writeHeap(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}

// TestWriteReplayRecord writes a record of $REIN_WRITE_SIZE MiB at $REIN_WRITE_RECORD for
// BenchmarkReplayFile.
func TestWriteReplayRecord(t *testing.T) {
	path := os.Getenv("REIN_WRITE_RECORD")
	if path == "" {
		t.Skip("set REIN_WRITE_RECORD to the file to write")
	}
	mib, err := strconv.Atoi(os.Getenv("REIN_WRITE_SIZE"))
	if err != nil {
		t.Fatalf("REIN_WRITE_SIZE must be a size in MiB: %v", err)
	}
	dir := t.TempDir()
	written := writeRecord(t, dir, int64(mib)<<20)
	if err := os.Rename(written, path); err != nil {
		t.Fatal(err)
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
