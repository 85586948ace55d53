package tui

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/record"
)

// ask publishes a tool call waiting for the person's approval, as the host does in ask mode.
func ask(f *fakeHost, s *stream, callID, command string) {
	args := `{"command":"` + command + `"}`
	s.working(true)
	s.state.Approvals = []host.ApprovalV{{CallID: callID, Name: "bash", Args: args}}
	f.push(s.rec(&record.Approval{CallID: callID, Name: "bash", Args: args, State: record.ApprovalAsked}))
}

func TestApprovalAnsweredWithAKey(t *testing.T) {
	f := newFake()
	f.caps = append(f.caps, CapApprovals)
	d, s := withConversation(t, f)

	ask(f, s, "c2", "rm -rf build")
	d.waitScreen("⚠ bash asks to run: rm -rf build")
	d.waitScreen("y allow · n deny · Esc stop")
	d.typ("y")
	d.waitCall("approve c-new op-3 c2 true")
	if v := d.m.composer.Value(); v != "" {
		t.Fatalf("the key went to the composer too: %q", v)
	}
	// Answered here: the prompt is gone before the host's state says so, and a second key does
	// not answer twice.
	if strings.Contains(d.screen(), "asks to run") {
		t.Fatalf("the answered prompt is still shown:\n%s", d.screen())
	}
	d.typ("y")
	d.settle()
	if n := countCalls(d, "approve "); n != 1 {
		t.Fatalf("%d approve calls, want 1", n)
	}
	d.m.composer.Reset()

	// The host takes the answer; the next call is denied with n.
	s.state.Approvals = nil
	f.push(s.rec(&record.Approval{CallID: "c2", State: record.ApprovalAllowed, By: "user", Op: "op-3"}))
	d.waitScreen("✓ allowed")
	ask(f, s, "c3", "curl example.com")
	d.waitScreen("⚠ bash asks to run: curl example.com")
	d.typ("n")
	d.waitCall("approve c-new op-4 c3 false")

	// While a message is typed, y and n are text; Esc still stops.
	ask(f, s, "c4", "make")
	d.waitScreen("⚠ bash asks to run: make")
	d.typ("on it, y")
	if v := d.m.composer.Value(); v != "on it, y" {
		t.Fatalf("composer %q", v)
	}
	d.press("esc")
	d.waitCall("stop c-new")
	if n := countCalls(d, "approve "); n != 2 {
		t.Fatalf("%d approve calls, want 2", n)
	}
}

func TestApprovalOnAHostWithoutIt(t *testing.T) {
	f := newFake()
	d, s := withConversation(t, f)
	ask(f, s, "c2", "ls")
	d.waitScreen("⚠ bash asks to run: ls")
	d.typ("y")
	d.waitScreen("does not advertise approvals.v1")
	if d.called("approve") {
		t.Fatal("an answer went to a host that does not take them")
	}
}

func countCalls(d *driver, prefix string) int {
	n := 0
	for _, c := range d.calls() {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}
