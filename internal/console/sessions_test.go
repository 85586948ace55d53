package console

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// A session removed between the listing of the directory and the reading of its record (a run
// whose prompt was refused discards its new session) is left out, not shown as an error.
func TestSessionsSkipsOneRemovedMeanwhile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions", "ws")
	s, err := session.Start(dir, session.Options{}, record.SessionStarted{Provider: "sim", Model: "sim-1", Cwd: "/ws"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	gone := session.Entry{ID: "20261203-000000-000000-dead", Path: filepath.Join(dir, "20261203-000000-000000-dead", "record.jsonl")}
	kept := session.Entry{ID: s.ID(), Path: s.Path()}
	for _, asJSON := range []bool{false, true} {
		var out bytes.Buffer
		if err := Sessions(&out, []session.Entry{gone, kept}, asJSON); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), gone.ID) || !strings.Contains(out.String(), s.ID()) {
			t.Errorf("json %v: want only %s listed:\n%s", asJSON, s.ID(), out.String())
		}
	}
}
