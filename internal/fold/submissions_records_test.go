package fold

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/record"
)

// Records a host wrote before handing was recorded (and before the fold judged submissions, Stops
// and approvals) keep loading: every one under testdata/host-records was written by the host's own
// tests — sends, steering, queued messages, Stops, restarts, approvals — and must replay
// admissibly, ending with no submission waiting.
func TestOldHostRecordsLoad(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "host-records", "*.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no host records: %v", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			s := replayFile(t, p)
			for _, v := range s.Submissions() {
				if v.Open() {
					t.Errorf("submission %s is still %s", v.ID, v.State)
				}
			}
		})
	}
}

func replayFile(t *testing.T, path string) *State {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := New()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		r, err := record.Decode(sc.Bytes(), s.Seq()+1)
		if err != nil {
			t.Fatalf("decode record %d: %v", s.Seq()+1, err)
		}
		if err := s.Step(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}
