package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
)

func clock() func() time.Time {
	t := time.Unix(1764400000, 0)
	return func() time.Time { t = t.Add(time.Millisecond); return t }
}

func started(id string) *record.SessionStarted {
	return &record.SessionStarted{Session: id, Provider: "sim", Model: "sim-1", ContextWindow: 1000, Cwd: "/w", Version: "test"}
}

// exchange appends one prompt, a tool round and a reply.
func exchange(t testing.TB, s *Session, i int) {
	t.Helper()
	must(t, s.Append(&record.UserPrompt{Turn: s.Snapshot().Next(), Text: fmt.Sprintf("step %d", i)}))
	turn := s.Snapshot().Next()
	id := fmt.Sprintf("c%d", i)
	must(t, s.Append(&record.AssistantMessage{Turn: turn, Parts: []record.Part{{Type: record.PartText, Text: "running"}, {Type: record.PartToolCall, CallID: id, Name: "bash", Args: json.RawMessage(`{"command":"ls"}`)}}}))
	must(t, s.Commit(&record.ToolStarted{CallID: id, Name: "bash"}))
	must(t, s.Append(&record.ToolResults{Results: []record.ToolResult{{CallID: id, Content: fold.WithTrailer("a\nb key=sk-ant-api03-XXXXXXXXXXXXXXXXXXXXXXXX", turn), Outcome: record.OK}}}))
	must(t, s.Append(&record.AssistantMessage{Turn: s.Snapshot().Next(), Parts: []record.Part{{Type: record.PartText, Text: "done " + strconv.Itoa(i)}}}))
	must(t, s.Commit(&record.Quiesced{Reason: fold.Replied}))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The live state is the state a resume replays, and departed turns read back exactly as they were
// sent.
func TestOpenEqualsLiveAndReadBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s1")
	s, err := Create(dir, Options{Now: clock(), Redact: RedactFunc(func(s string) string { return "R:" + s })}, started("s1"))
	must(t, err)
	for i := 0; i < 5; i++ {
		exchange(t, s, i)
	}
	before := map[int64][]record.Message{}
	for _, tr := range s.Snapshot().Turns() {
		msgs, err := s.ReadTurn(tr.ID)
		must(t, err)
		before[tr.ID] = msgs
	}
	if got := before[2][1].Parts[0].Text; got[:2] != "R:" {
		t.Errorf("tool output was not passed through the redactor where it was written: %q", got)
	}
	must(t, s.Commit(&record.Evicted{From: 2, To: 6, Note: "first steps", By: record.ByModel}))
	must(t, s.Commit(&record.Rewound{Anchor: 13}))
	for id, want := range before {
		got, err := s.ReadTurn(id)
		must(t, err)
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("turn %d (%s) reads back differently:\n%s", id, s.Snapshot().Held(id), d)
		}
	}
	live := s.Snapshot().Context()
	must(t, s.Close())

	s2, rep, err := Open(filepath.Join(dir, journal.FileName), Options{})
	must(t, err)
	defer s2.Close()
	if rep.Torn != 0 {
		t.Errorf("a clean close left %d torn bytes", rep.Torn)
	}
	if d := cmp.Diff(live, s2.Snapshot().Context(), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("the resumed context differs from the live one:\n%s", d)
	}
	recs, err := s2.RecordsAfter(3)
	must(t, err)
	if len(recs) == 0 || recs[0].Seq != 4 || recs[len(recs)-1].Seq != s2.Snapshot().Seq() {
		t.Errorf("RecordsAfter(3) answered %d records", len(recs))
	}
}

// A live record the fold refuses is a harness bug: nothing is written and the session fails.
func TestLiveRefusalWritesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	s, err := Create(dir, Options{}, started("s"))
	must(t, err)
	defer s.Close()
	size := fileSize(t, s.Path())
	err = s.Append(&record.ToolResults{Results: []record.ToolResult{{CallID: "x", Content: "y", Outcome: record.OK}}})
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("got %v, want ErrFailed", err)
	}
	if fileSize(t, s.Path()) != size {
		t.Fatal("a refused record reached the file")
	}
	if err := s.Append(&record.System{Text: "x"}); !errors.Is(err, ErrFailed) {
		t.Fatalf("a failed session accepted another record: %v", err)
	}
}

func fileSize(t *testing.T, p string) int64 {
	fi, err := os.Stat(p)
	must(t, err)
	return fi.Size()
}

// An fsync error poisons the session: it fails loudly and never retries the fsync.
func TestSyncErrorPoisons(t *testing.T) {
	mem := fsys.NewMem()
	s, err := Create("/r/s", Options{FS: mem}, started("s"))
	must(t, err)
	mem.FailSync("/r/s/record.jsonl", errors.New("EIO"))
	err = s.Append(&record.UserPrompt{Turn: 1, Text: "x"})
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("got %v, want the session failed", err)
	}
	if s.Snapshot().Phase() != fold.ReadyForUser {
		t.Fatal("a record whose sync failed was applied")
	}
	if err := s.Sync(); !errors.Is(err, ErrFailed) {
		t.Fatalf("Sync after a poisoned fsync: %v", err)
	}
}

// Seeded crashes of the in-memory filesystem: every committed record survives, and what
// survives opens to an admissible session that can go on.
func TestCrashKeepsCommitted(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("REIN_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (rerun with REIN_SEED=%d)", seed, seed)
	for run := 0; run < 300; run++ {
		rng := rand.New(rand.NewPCG(seed, uint64(run)))
		mem := fsys.NewMem()
		s, err := Create("/r/s", Options{FS: mem}, started("s"))
		must(t, err)
		n := 1 + rng.IntN(6)
		for i := 0; i < n; i++ {
			exchange(t, s, i)
		}
		committed := s.Snapshot().Seq()
		// Unsynced events after the last commit may or may not survive.
		must(t, s.Append(&record.TurnStarted{Attempt: 1}))
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

// TestOneWriterPerSession: while a Session is open, a second Open of its record — in this process
// too — is refused with a *journal.HeldError naming the holder, and changes nothing; Load reads it
// read-only, sees every committed record, and refuses writes. Close lets the next writer in.
func TestOneWriterPerSession(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	s, err := Create(dir, Options{Now: clock()}, started("s"))
	must(t, err)
	exchange(t, s, 0)
	path := s.Path()
	before, err := os.ReadFile(path)
	must(t, err)

	_, _, err = Open(path, Options{})
	var he *journal.HeldError
	if !errors.As(err, &he) || he.Holder.PID != os.Getpid() {
		t.Fatalf("a second Open while the first is open = %v; want a *journal.HeldError naming this process", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the refused Open changed the record")
	}

	r, _, err := Load(path, Options{})
	must(t, err)
	if r.ID() != "s" || r.Snapshot().Seq() != s.Snapshot().Seq() {
		t.Errorf("Load: id %s at seq %d; want s at %d", r.ID(), r.Snapshot().Seq(), s.Snapshot().Seq())
	}
	if _, err := r.Inheritance(0); err != nil {
		t.Errorf("Inheritance of a loaded session: %v", err)
	}
	if err := r.Commit(&record.Cleared{}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Commit to a loaded session = %v; want ErrReadOnly", err)
	}
	must(t, r.Close())

	must(t, s.Close())
	s2, _, err := Open(path, Options{})
	must(t, err)
	must(t, s2.Close())
}

// Session ids sort by creation time, to the microsecond and beyond: ids minted in a tight loop
// (the same microsecond, even a clock that stands still) come out strictly increasing.
func TestNewIDSortsByCreation(t *testing.T) {
	now := time.Date(2026, 12, 1, 14, 41, 50, 123456789, time.UTC)
	idMu.Lock()
	idLast = time.Time{} // whatever ids this process minted before (other tests, -count)
	idMu.Unlock()
	first := NewID(now)
	if want := "20261201-144150-123456-"; first[:len(want)] != want {
		t.Fatalf("id %q does not open with %q", first, want)
	}
	prev := first
	for i := 0; i < 1000; i++ {
		id := NewID(now) // the same instant every time
		if id <= prev {
			t.Fatalf("id %q minted after %q sorts before it", id, prev)
		}
		prev = id
	}
	if later := NewID(now.Add(-time.Hour)); later <= prev {
		t.Fatalf("an id minted after a clock step back sorts before the ones minted earlier: %q <= %q", later, prev)
	}
}
