package session

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
)

// Check judges a record as a resume would: admissible with its torn tail quarantined (or only
// counted, dry); refused at the first bad line, classified by type, the file untouched; live, only
// read, while another writer holds it.
func TestCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "ws")
	s, err := Start(dir, Options{Now: clock()}, *started(""))
	must(t, err)
	exchange(t, s, 0)
	path := s.Path()

	c, err := Check(nil, path, false)
	if err == nil && c.Live == nil {
		t.Fatal("Check of a record its writer holds did not say it is live")
	}
	must(t, err)
	if c.Refused != nil || c.State.Stats().Records == 0 {
		t.Fatalf("a live record: %+v", c)
	}
	must(t, s.Close())

	whole, err := os.ReadFile(path)
	must(t, err)
	write := func(b []byte) {
		t.Helper()
		must(t, os.WriteFile(path, b, 0o600))
		os.Remove(path + journal.TornSuffix)
	}
	write(append(whole, `{"v":1,"seq":`...))
	c, err = Check(nil, path, true)
	must(t, err)
	if c.Refused != nil || c.Live != nil || c.Report.Torn == 0 || c.Good != int64(len(whole)) {
		t.Fatalf("dry, a torn tail: %+v", c)
	}
	if _, err := os.Stat(path + journal.TornSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a dry check quarantined the tail")
	}
	c, err = Check(nil, path, false)
	must(t, err)
	if c.Report.Torn == 0 {
		t.Fatalf("a torn tail: %+v", c)
	}
	if b, _ := os.ReadFile(path); len(b) != len(whole) {
		t.Fatalf("the torn tail was not trimmed: %d bytes, want %d", len(b), len(whole))
	}

	// A line the fold refuses: results for a call never made.
	bad, err := record.Encode(record.Record{Seq: int64(c.Report.Lines) + 1, Time: 1, Body: &record.ToolResults{
		Results: []record.ToolResult{{CallID: "never", Content: "x", Outcome: record.OK}}}})
	must(t, err)
	write(append(append([]byte(nil), whole...), bad...))
	c, err = Check(nil, path, false)
	must(t, err)
	var judged *fold.Refusal
	if c.Refused == nil || !errors.As(c.Refused, &judged) || c.Refused.Line != c.Report.Lines+1 || c.Good != int64(len(whole)) {
		t.Fatalf("a record the fold refuses: %+v (%v)", c, c.Refused)
	}
	// A damaged line: a flipped byte.
	damaged := append(append([]byte(nil), whole...), bad...)
	damaged[len(whole)+len(bad)/2] ^= 0x01
	write(damaged)
	c, err = Check(nil, path, true)
	must(t, err)
	if c.Refused == nil || !errors.Is(c.Refused, record.ErrChecksum) || errors.As(c.Refused, &judged) {
		t.Fatalf("a damaged line: %v", c.Refused)
	}
	if b, _ := os.ReadFile(path); string(b) != string(damaged) {
		t.Fatal("a refused record was changed")
	}
}
