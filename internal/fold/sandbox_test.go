package fold

import (
	"testing"

	"github.com/reinhq/rein/internal/record"
)

// TestMetaSandbox: the sandbox a session's commands ran under is the last start's or resume's,
// each saying its own (a resume does not inherit it), and a record from before says none.
func TestMetaSandbox(t *testing.T) {
	l := newLog(t)
	l.add(&record.SessionStarted{Session: "s", Provider: "sim", Model: "m", Sandbox: "workspace-write, no network"})
	if got := l.s.Meta().Sandbox; got != "workspace-write, no network" {
		t.Errorf("after the start: %q", got)
	}
	l.add(&record.SessionResumed{Provider: "sim", Model: "m", Sandbox: "off"})
	if got := l.s.Meta().Sandbox; got != "off" {
		t.Errorf("after a resume: %q", got)
	}
	l.add(&record.SessionResumed{Provider: "sim", Model: "m"})
	if got := l.s.Meta().Sandbox; got != "" {
		t.Errorf("after a resume by a rein without a sandbox: %q", got)
	}
}
