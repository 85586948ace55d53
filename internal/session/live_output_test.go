package session

import (
	"path/filepath"
	"strings"
	"testing"
)

// A key a command prints is redacted in its live output even when its pieces split it, and what
// a piece holds back comes out, in order, before the call's tool_end.
func TestLiveToolOutputRedacted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	s, err := Create(dir, Options{Now: clock(), Redact: secrets(t)}, started("s"))
	must(t, err)
	defer s.Close()
	ch, end := s.Subscribe()
	defer end()
	out := "line one\nexport KEY=" + secret + "\nlast " + secret[:10]
	for i := 0; i < len(out); i += 9 {
		s.Publish(Live{Kind: "tool_output", CallID: "c1", Name: "bash", Text: out[i:min(i+9, len(out))]})
	}
	s.Publish(Live{Kind: "tool_end", CallID: "c1", Name: "bash", Text: "ok"})
	var got strings.Builder
	for u := range ch {
		if u.Live.Kind == "tool_end" {
			break
		}
		if u.Live.Kind != "tool_output" || u.Live.CallID != "c1" {
			t.Fatalf("live %+v", u.Live)
		}
		got.WriteString(u.Live.Text)
	}
	if want := "line one\nexport KEY=[REDACTED:KEY]\nlast " + secret[:10]; got.String() != want {
		t.Fatalf("live output %q, want %q", got.String(), want)
	}
}
