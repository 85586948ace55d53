package session

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
)

// bigExchange appends a prompt, a batch of eight 256 KiB results and a reply of replyBytes: records
// no line can hold.
func bigExchange(t testing.TB, s *Session, replyBytes int) {
	t.Helper()
	must(t, s.Append(&record.UserPrompt{Turn: s.Snapshot().Next(), Text: "read the eight logs"}))
	turn := s.Snapshot().Next()
	parts := []record.Part{{Type: record.PartText, Text: "reading"}}
	var results []record.ToolResult
	for i := 0; i < 8; i++ {
		id := fmt.Sprintf("r%d-%d", turn, i)
		parts = append(parts, record.Part{Type: record.PartToolCall, CallID: id, Name: "read_file", Args: json.RawMessage(fmt.Sprintf(`{"path":"log%d"}`, i))})
		results = append(results, record.ToolResult{CallID: id, Content: fold.WithTrailer(strings.Repeat(fmt.Sprintf("%d: a log line\n", i), 256<<10/14), turn), Outcome: record.OK})
	}
	must(t, s.Append(&record.AssistantMessage{Turn: turn, Parts: parts}))
	for _, r := range results {
		must(t, s.Commit(&record.ToolStarted{CallID: r.CallID, Name: "read_file"}))
	}
	must(t, s.Append(&record.ToolResults{Results: results}))
	must(t, s.Append(&record.AssistantMessage{Turn: s.Snapshot().Next(), Parts: []record.Part{{Type: record.PartText, Text: strings.Repeat("a long answer ", replyBytes/14)}}}))
	must(t, s.Commit(&record.Quiesced{Reason: fold.Replied}))
}

// Records too large for a line are kept as blobs beside the record: they replay, read back
// through pointers, and a changed blob is refused by name with the record left untouched.
func TestLargeRecordsAsBlobs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	s, err := Create(dir, Options{Now: clock()}, started("s"))
	must(t, err)
	bigExchange(t, s, 5<<20)
	exchange(t, s, 1)
	live := s.Snapshot().Context()
	must(t, s.Commit(&record.Evicted{From: 1, To: 3, Note: "the big logs", By: record.ByUser}))
	back, err := s.ReadTurn(2)
	must(t, err)
	if n := len(back[1].Parts); n != 8 {
		t.Fatalf("turn 2 read back with %d results, want 8", n)
	}
	must(t, s.Close())

	path := filepath.Join(dir, journal.FileName)
	data, err := os.ReadFile(path)
	must(t, err)
	for i, line := range strings.SplitAfter(string(data), "\n") {
		if len(line) >= record.BlobOver {
			t.Fatalf("line %d is %d bytes", i+1, len(line))
		}
	}
	blobs, err := os.ReadDir(filepath.Join(dir, journal.BlobDir))
	must(t, err)
	if len(blobs) != 2 {
		t.Fatalf("%d blobs, want 2 (the results and the reply)", len(blobs))
	}

	st, _, err := Replay(nil, path)
	must(t, err)
	s2, _, err := Open(path, Options{})
	must(t, err)
	got, err := s2.ReadTurn(2)
	must(t, err)
	if d := cmp.Diff(back, got, cmpopts.EquateEmpty()); d != "" {
		t.Fatalf("turn 2 reads back differently after a resume:\n%s", d)
	}
	must(t, s2.Commit(&record.Rewound{Anchor: 1}))
	must(t, s2.Close())
	if st.Seq() == 0 || len(live) == 0 {
		t.Fatal("nothing replayed")
	}

	// A blob changed on disk: the record is refused, naming the record and the blob, untouched.
	victim := filepath.Join(dir, journal.BlobDir, blobs[0].Name())
	b, err := os.ReadFile(victim)
	must(t, err)
	b[len(b)/2] ^= 1
	must(t, os.WriteFile(victim, b, 0o600))
	before, _ := os.ReadFile(path)
	_, _, err = Open(path, Options{})
	if err == nil || !strings.Contains(err.Error(), "does not match its digest") || !strings.Contains(err.Error(), blobs[0].Name()) {
		t.Fatalf("a changed blob opened: %v", err)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Fatal("a refused record was changed")
	}
	must(t, os.Remove(victim))
	if _, _, err = Open(path, Options{}); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Fatalf("a missing blob opened: %v", err)
	}
}

// A crash at any point keeps every committed record, blobs included: a blob is durable before the
// line that names it.
func TestCrashKeepsBlobs(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("REIN_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (rerun with REIN_SEED=%d)", seed, seed)
	for run := 0; run < 40; run++ {
		rng := rand.New(rand.NewPCG(seed, uint64(run)))
		mem := fsys.NewMem()
		s, err := Create("/r/s", Options{FS: mem}, started("s"))
		must(t, err)
		for i := rng.IntN(3); i >= 0; i-- {
			bigExchange(t, s, 300<<10)
			exchange(t, s, i)
		}
		committed := s.Snapshot().Seq()
		must(t, s.Append(&record.UserPrompt{Turn: s.Snapshot().Next(), Text: strings.Repeat("the last prompt ", 24<<10)}))
		mem.Crash(rng)
		s2, _, err := Open("/r/s/record.jsonl", Options{FS: mem})
		if err != nil {
			t.Fatalf("run %d (seed %d): a crash left a record that does not open: %v", run, seed, err)
		}
		if got := s2.Snapshot().Seq(); got < committed {
			t.Fatalf("run %d (seed %d): %d records survived, %d were committed", run, seed, got, committed)
		}
		must(t, s2.Append(&record.UserPrompt{Turn: s2.Snapshot().Next(), Text: "after the crash"}))
		s2.Close()
	}
}
