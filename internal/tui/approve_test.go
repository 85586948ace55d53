package tui

import (
	"encoding/json"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/record"
)

// ask publishes a bash call waiting for the person's approval, as the host does in ask mode.
func ask(f *fakeHost, s *stream, callID, command string) {
	b, _ := json.Marshal(map[string]string{"command": command})
	askCall(f, s, api.Approval{CallID: callID, Name: "bash", Args: string(b)})
}

// askCall publishes calls waiting for approval, after those already waiting.
func askCall(f *fakeHost, s *stream, calls ...api.Approval) {
	s.working(true)
	var evs []api.Event
	for _, a := range calls {
		s.state.Approvals = append(s.state.Approvals, a)
		evs = append(evs, s.rec(&record.Approval{CallID: a.CallID, Name: a.Name, Args: a.Args, State: record.ApprovalAsked}))
	}
	f.push(evs...)
}

// settleApproval publishes the host's taking of an answer: the call no longer waits.
func settleApproval(f *fakeHost, s *stream, callID string, allowed bool) {
	st := record.ApprovalDenied
	if allowed {
		st = record.ApprovalAllowed
	}
	var left []api.Approval
	for _, a := range s.state.Approvals {
		if a.CallID != callID {
			left = append(left, a)
		}
	}
	s.state.Approvals = left
	f.push(s.rec(&record.Approval{CallID: callID, State: st, By: "user"}))
}

// approveCalls are the host's approve calls so far, as "<call> <allow>".
func approveCalls(d *driver) []string {
	var out []string
	for _, c := range d.calls() {
		if f := strings.Fields(c); len(f) == 5 && f[0] == "approve" {
			out = append(out, f[3]+" "+f[4])
		}
	}
	return out
}

func noAnswer(t *testing.T, d *driver, when string) {
	t.Helper()
	d.settle()
	if a := approveCalls(d); len(a) > 0 {
		t.Fatalf("%s: the approval was answered: %q\n%s", when, a, d.screen())
	}
}

func approvingHost(t *testing.T) (*fakeHost, *driver, *stream) {
	f := newFake()
	f.caps = append(f.caps, api.CapApprovals)
	d, s := withConversation(t, f)
	return f, d, s
}

// The issue this answers: with an empty composer, the first letter typed answered the call
// waiting; "you must not run that" ran it and "no wait…" denied one. Now no sentence typed, in
// the composer or with the panel focused, answers; Tab, then Enter, does — exactly once.
func TestTypingNeverAnswersAnApproval(t *testing.T) {
	f, d, s := approvingHost(t)
	ask(f, s, "c2", "rm -rf build")
	d.waitScreen("$ rm -rf build")
	d.waitScreen("Tab to answer")
	if !strings.Contains(d.screen(), "Tab answer · Esc stop") {
		t.Fatalf("the status line does not say how to answer:\n%s", d.screen())
	}

	for _, text := range []string{"yes do it", "no wait", "you must not run that", "y", "n", "Y", "N"} {
		d.typ(text) // one key press per character, as a person types
		noAnswer(t, d, "typing "+text)
		if v := d.m.composer.Value(); v != text {
			t.Fatalf("typing %q: the composer holds %q", text, v)
		}
		if !strings.Contains(d.screen(), "$ rm -rf build") {
			t.Fatalf("typing %q: the approval is no longer shown:\n%s", text, d.screen())
		}
		for range text {
			d.press("backspace")
		}
		if v := d.m.composer.Value(); v != "" {
			t.Fatalf("backspace left %q", v)
		}
	}

	// A sentence sent while the call waits is a message, not an answer.
	d.typ("no wait, not that directory")
	d.press("enter")
	d.waitCall(`send c-new op-3 "no wait, not that directory"`)
	noAnswer(t, d, "sending a message")

	// Enter on an empty composer says how to answer, and does not.
	d.press("enter")
	noAnswer(t, d, "Enter on an empty composer")
	if !strings.Contains(d.screen(), "Tab to answer the approval") {
		t.Fatalf("no hint after an empty Enter:\n%s", d.screen())
	}

	// With the panel focused, a letter is text: it goes to the composer, and the focus with it.
	d.press("tab")
	d.waitScreen("Enter answer · Esc stop")
	d.typ("yes do it")
	noAnswer(t, d, "typing with the panel focused")
	if v := d.m.composer.Value(); v != "yes do it" {
		t.Fatalf("with the panel focused, typing left the composer %q", v)
	}
	if d.m.panelFocused() || !d.m.composer.Focused() {
		t.Fatal("a letter typed in the panel did not give the focus back to the composer")
	}
	// Enter now sends what is typed; it does not answer.
	d.press("enter")
	d.waitCall(`send c-new op-4 "yes do it"`)
	noAnswer(t, d, "Enter after typing in the panel")

	// The explicit answer: Tab, Enter allows once — one approve call.
	d.press("tab", "enter")
	d.until("one answer", func() bool { return len(approveCalls(d)) == 1 })
	if strings.Contains(d.screen(), "rm -rf build") && strings.Contains(d.screen(), "Tab to answer") {
		t.Fatalf("the answered call is still shown:\n%s", d.screen())
	}
	// The focus is the composer's again: more Enters and Tabs answer nothing twice.
	d.press("enter", "tab", "enter")
	d.settle()
	if got := approveCalls(d); len(got) != 1 || got[0] != "c2 true" {
		t.Fatalf("approve calls %q, want exactly [c2 true]", got)
	}

	// The next call is denied with Tab, →, Enter.
	settleApproval(f, s, "c2", true)
	d.waitScreen("✓ allowed")
	ask(f, s, "c3", "curl example.com")
	d.waitScreen("$ curl example.com")
	d.press("tab", "right", "enter")
	d.until("two answers", func() bool { return len(approveCalls(d)) == 2 })
	d.settle()
	if got := approveCalls(d); len(got) != 2 || got[1] != "c3 false" {
		t.Fatalf("approve calls %q, want [c2 true c3 false]", got)
	}
}

// The choices move with the arrows and stay in range; Tab and Shift+Tab give the focus back
// without answering.
func TestApprovalPanelChoicesAndFocus(t *testing.T) {
	f, d, s := approvingHost(t)
	ask(f, s, "c2", "make")
	d.waitScreen("$ make")
	d.typ("draft")
	d.press("tab")
	if !d.m.panelFocused() || d.m.composer.Focused() {
		t.Fatal("Tab did not give the panel the focus")
	}
	if _, cur := d.m.draw(); cur != nil {
		t.Fatal("the composer's cursor is drawn while the panel has the focus")
	}
	d.press("right", "right", "down")
	if a, _ := d.m.awaiting(); d.m.choicesFor(a)[d.m.panel.pick].label != "Deny" {
		t.Fatalf("pick %d after →→↓, want Deny", d.m.panel.pick)
	}
	d.press("left", "left", "up")
	if d.m.panel.pick != pickAllow {
		t.Fatalf("pick %d after ←←↑, want Allow once", d.m.panel.pick)
	}
	d.press("right", "tab")
	if d.m.panelFocused() || !d.m.composer.Focused() {
		t.Fatal("Tab in the panel did not give the focus back")
	}
	d.press("tab", "shift+tab")
	if d.m.panelFocused() {
		t.Fatal("Shift+Tab in the panel did not give the focus back")
	}
	// Focused again, the cursor starts on Allow once, not where it was left.
	d.press("tab")
	if d.m.panel.pick != pickAllow {
		t.Fatalf("the panel took the focus with pick %d", d.m.panel.pick)
	}
	// Backspace is the composer's, and takes the focus there.
	d.press("backspace")
	if d.m.panelFocused() || d.m.composer.Value() != "draf" {
		t.Fatalf("backspace in the panel: focused %v, composer %q", d.m.panelFocused(), d.m.composer.Value())
	}
	// A paste is text too.
	d.press("tab")
	d.send(tea.PasteMsg{Content: "t\nyes"})
	if d.m.panelFocused() || d.m.composer.Value() != "draft\nyes" {
		t.Fatalf("a paste in the panel: focused %v, composer %q", d.m.panelFocused(), d.m.composer.Value())
	}
	// Scrolling keeps the focus.
	d.press("tab", "pgup", "pgdown", "ctrl+o", "ctrl+o")
	if !d.m.panelFocused() {
		t.Fatal("scrolling took the focus from the panel")
	}
	noAnswer(t, d, "moving the focus")
}

// The focus belongs to the call it was given for: when another call takes its place, an Enter
// does not answer the new one.
func TestApprovalFocusBelongsToOneCall(t *testing.T) {
	f, d, s := approvingHost(t)
	ask(f, s, "c2", "make")
	d.waitScreen("$ make")
	d.press("tab")
	// Another client answers c2; c3 asks.
	settleApproval(f, s, "c2", false)
	ask(f, s, "c3", "rm -rf /tmp/x")
	d.waitScreen("$ rm -rf /tmp/x")
	if d.m.panelFocused() || !d.m.composer.Focused() {
		t.Fatal("the panel kept the focus for a call it was not given for")
	}
	d.press("enter")
	noAnswer(t, d, "Enter after the call changed")

	// Two calls waiting: answering the first gives the focus back, so a second Enter (a key held
	// down, a double press) does not answer the next.
	askCall(f, s, api.Approval{CallID: "c4", Name: "bash", Args: `{"command":"make install"}`})
	d.waitScreen("1 more waiting")
	d.press("tab", "enter", "enter", "enter")
	d.until("one answer", func() bool { return len(approveCalls(d)) == 1 })
	d.waitScreen("$ make install")
	d.settle()
	if got := approveCalls(d); len(got) != 1 || got[0] != "c3 true" {
		t.Fatalf("approve calls %q, want exactly [c3 true]", got)
	}
}

// Esc stops with the panel focused or not: the Stop ends the wait; nothing is answered.
func TestEscStopsWhileAnApprovalWaits(t *testing.T) {
	f, d, s := approvingHost(t)
	ask(f, s, "c2", "make")
	d.waitScreen("$ make")
	d.press("tab", "esc")
	d.waitCall("stop c-new op-3")
	d.typ("on it, y")
	d.press("esc")
	d.waitCall("stop c-new op-4")
	if v := d.m.composer.Value(); v != "on it, y" {
		t.Fatalf("composer %q", v)
	}
	noAnswer(t, d, "Esc")
}

func TestApprovalOnAHostWithoutIt(t *testing.T) {
	f := newFake()
	d, s := withConversation(t, f)
	ask(f, s, "c2", "ls")
	d.waitScreen("$ ls")
	d.waitScreen("this host cannot take an answer (no approvals.v1)")
	d.press("tab")
	d.waitScreen("does not advertise approvals.v1")
	d.press("enter")
	if d.m.panelFocused() {
		t.Fatal("the panel took the focus on a host that cannot take an answer")
	}
	if d.called("approve") {
		t.Fatal("an answer went to a host that does not take them")
	}
}

// The panel shows a call's arguments in readable form, never the terminal controls in them.
func TestReadableCall(t *testing.T) {
	for _, c := range []struct {
		name, args string
		what       string
		body       []string
	}{
		{"bash", `{"command":"go test ./...\ngo vet ./...","description":"run the tests"}`,
			"bash wants to run a command: run the tests", []string{"$ go test ./...", "  go vet ./..."}},
		{"bash", `{"command":"echo ok\u001b[2K\rrm -rf ~"}`,
			"bash wants to run a command", []string{`$ echo ok\x1b[2K\x0drm -rf ~`}},
		{"bash", `{"command":"ls \u202eexe.txt\tx"}`,
			"bash wants to run a command", []string{`$ ls \u202eexe.txt    x`}},
		{"write_file", `{"path":"cmd/main.go","content":"package main\n\nfunc main() {}\n"}`,
			"write_file wants to write a file", []string{"cmd/main.go  (3 lines, 29 bytes)"}},
		{"edit_file", `{"path":"a.go","old":"x := 1","new":"x := 2\ny := 3","replace_all":true}`,
			"edit_file wants to edit a file", []string{"a.go  (every match)", "- x := 1", "+ x := 2", "+ y := 3"}},
		{"edit_file", `{"path":"b.go","old":"1\n2\n3\n4\n5","new":""}`,
			"edit_file wants to edit a file", []string{"b.go", "- 1", "- 2", "- 3", "  … 2 more lines", "+ (nothing)"}},
		{"agents", `{"op":"start","task":"look\u0007","n":2}`,
			"agents asks to run", []string{"n: 2", "op: start", `task: look\x07`}},
		{"weird", `not json`, "weird asks to run", []string{"not json"}},
	} {
		what, body := readableCall(c.name, c.args)
		for i := range body {
			body[i] = ansi.Strip(body[i])
		}
		if what != c.what || strings.Join(body, "\n") != strings.Join(c.body, "\n") {
			t.Errorf("readableCall(%s, %s):\n got %q %q\nwant %q %q", c.name, c.args, what, body, c.what, c.body)
		}
	}
}

// The panel fits the screen and hides nothing silently: a long line is wrapped, not cut at the
// edge; a long command is folded at the panel's room, saying how much more there is; Ctrl+O
// unfolds it.
func TestApprovalPanelFitsTheScreen(t *testing.T) {
	f, d, s := approvingHost(t)
	ask(f, s, "c2", "echo "+strings.Repeat("x", 100)+" ; rm -rf ~/work")
	d.waitScreen("$ echo xxx")
	if !strings.Contains(d.screen(), "x ; rm -rf ~/work") {
		t.Fatalf("the end of a long command is not shown:\n%s", d.screen())
	}
	settleApproval(f, s, "c2", false)

	long := strings.Repeat("echo line\n", 40) + strings.Repeat("x", 300) // 40 lines, then 4 wrapped
	ask(f, s, "c3", long)
	d.waitScreen("$ echo line")
	scr := d.screen()
	if !strings.Contains(scr, "… 39 more lines (Ctrl+O unfolds)") {
		t.Fatalf("the folded command does not say how much is left:\n%s", scr)
	}
	if n := len(strings.Split(scr, "\n")); n != 24 {
		t.Fatalf("%d lines on a 24-line screen", n)
	}
	d.press("ctrl+o")
	if !strings.Contains(d.screen(), "… 28 more lines (Ctrl+O unfolds)") {
		t.Fatalf("Ctrl+O did not unfold the command:\n%s", d.screen())
	}
	if n := len(strings.Split(d.screen(), "\n")); n != 24 {
		t.Fatalf("%d lines on a 24-line screen, unfolded", n)
	}
	d.send(tea.WindowSizeMsg{Width: 80, Height: 200})
	if scr := d.screen(); strings.Contains(scr, "more lines") || strings.Count(scr, "echo line") != 40 {
		t.Fatalf("unfolded on a tall screen, the command is not shown whole:\n%s", scr)
	}
}
