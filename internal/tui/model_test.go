package tui

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
)

// sendFirst types a prompt and presses Enter on a fresh chat, and waits for the conversation to
// be created, the send made and the stream subscribed.
func sendFirst(t *testing.T, d *driver, text string) {
	t.Helper()
	d.typ(text)
	d.press("enter")
	d.waitCall("send c-new")
	d.waitCall("events c-new after=0")
	d.until("the send's answer", func() bool { return len(d.m.outbox) == 1 && d.m.outbox[0].acked })
}

// exchange is a whole exchange's events: a prompt, a tool call, its result, and a reply.
func exchange(s *stream, op, text string) []api.Event {
	args, _ := json.Marshal(map[string]string{"command": "ls -la"})
	sub := api.Submission{ID: "m-" + op, Op: op, State: api.Accepted, Text: text, Attachments: []record.Attachment{}}
	var evs []api.Event
	evs = append(evs, s.rec(started()))
	s.state.Submissions = []api.Submission{sub}
	evs = append(evs, s.rec(&record.Submission{ID: sub.ID, Op: op, State: api.Accepted, Text: text}))
	s.working(true)
	s.state.Submissions[0].State = api.Delivered
	s.state.Turn = 1
	evs = append(evs,
		s.rec(&record.UserPrompt{Turn: 1, Text: text, Submission: sub.ID}),
		s.rec(&record.Submission{ID: sub.ID, State: api.Delivered}),
		s.rec(&record.TurnStarted{Attempt: 1}),
		liveText("text", "Let me "), liveText("text", "look."),
		liveCall("tool_call", "c1", "bash", ""), liveCall("tool_args", "c1", "", string(args)),
	)
	s.state.Turn = 2
	evs = append(evs,
		s.rec(&record.AssistantMessage{Turn: 2, StopReason: "tool_use", Model: "sim-1", Parts: []record.Part{
			{Type: record.PartText, Text: "Let me look."},
			{Type: record.PartToolCall, CallID: "c1", Name: "bash", Args: args},
		}}),
		s.rec(&record.ToolStarted{CallID: "c1", Name: "bash"}),
		liveCall("tool_start", "c1", "bash", string(args)),
		s.rec(&record.ToolFinished{CallID: "c1", DurationMs: 12, ExitCode: intp(0), Outcome: record.OK}),
		s.rec(&record.ToolResults{Results: []record.ToolResult{{CallID: "c1", Content: "a.txt\nb.txt\nTURN: 2", Outcome: record.OK}}}),
		s.rec(&record.TurnStarted{Attempt: 1}),
		liveText("text", "Two files: **a.txt** and `b.txt`."),
	)
	s.state.Turn = 3
	evs = append(evs, s.rec(&record.AssistantMessage{Turn: 3, StopReason: "end_turn", Model: "sim-1", Usage: record.Usage{Input: 1200, Output: 30},
		Parts: []record.Part{{Type: record.PartText, Text: "Two files: **a.txt** and `b.txt`."}}}))
	s.working(false)
	s.state.Turn = 0
	evs = append(evs, s.rec(&record.Quiesced{Reason: fold.Replied}))
	s.state.Submissions = nil
	evs = append(evs, s.rec(&record.Submission{ID: sub.ID, State: api.Answered, Reason: fold.Replied}))
	return evs
}

func TestSendCreatesAConversationAndShowsTheExchange(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	d.waitScreen("Send a message")
	sendFirst(t, d, "list the files")
	calls := d.calls()
	if i, j := index(calls, `create op-1 "list the files"`), index(calls, `send c-new op-2 "list the files" queue=false`); i != 0 || j < 0 {
		t.Fatalf("calls = %q", calls)
	}
	if !strings.Contains(d.screen(), "list the files · sending") || !strings.Contains(d.screen(), "working") {
		t.Fatalf("the outbox is not shown as working:\n%s", d.screen())
	}
	var s stream
	f.push(exchange(&s, "op-2", "list the files")...)
	d.waitScreen("Two files: a.txt and b.txt.")
	d.until("ready", func() bool { return !d.m.working() })
	scr := d.screen()
	for _, want := range []string{"› list the files", "● Let me look.", "▸ bash ls -la ✓ · 12 ms", "ready", "sim-1", "1.2k/200k ctx (0%)"} {
		if !strings.Contains(scr, want) {
			t.Errorf("screen lacks %q:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "a.txt\n") {
		t.Errorf("tool output shows while folded:\n%s", scr)
	}
	d.press("ctrl+o")
	if !strings.Contains(d.screen(), "│ a.txt") || strings.Contains(d.screen(), "TURN: 2") {
		t.Errorf("ctrl+o does not unfold the output (without its TURN trailer):\n%s", d.screen())
	}
	d.press("ctrl+o")
	if strings.Contains(d.screen(), "│ a.txt") {
		t.Errorf("a second ctrl+o does not fold it back:\n%s", d.screen())
	}
}

func TestStreamingTextShowsLiveAndIsReplacedByTheRecord(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	sendFirst(t, d, "hello")
	var s stream
	f.push(s.rec(started()))
	s.working(true)
	f.push(s.rec(&record.UserPrompt{Turn: 1, Text: "hello"}), liveText("text", "Hel"), liveText("text", "lo **there**"))
	d.waitScreen("● Hello there")
	f.push(liveText("restart", ""))
	d.waitScreen("retrying from the start")
	if strings.Contains(d.screen(), "Hello there") {
		t.Fatalf("a restarted stream keeps its text:\n%s", d.screen())
	}
	f.push(liveText("text", "Again."), s.rec(&record.AssistantMessage{Turn: 2, Parts: []record.Part{{Type: record.PartText, Text: "Again, recorded."}}}))
	d.waitScreen("Again, recorded.")
	if strings.Count(d.screen(), "Again") != 1 {
		t.Fatalf("the live text stays beside the recorded one:\n%s", d.screen())
	}
}

func TestEscStopsWithANewOperationPerPress(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	sendFirst(t, d, "work")
	var s stream
	f.push(s.rec(started()))
	s.working(true)
	f.push(s.rec(&record.UserPrompt{Turn: 1, Text: "work"}))
	d.until("working", func() bool { return d.m.state.InFlight })
	d.press("esc")
	d.waitCall("stop c-new op-3")
	d.press("esc")
	d.waitCall("stop c-new op-4")
	if d.quit {
		t.Fatal("Esc quit")
	}
}

func TestEscWhenIdleDoesNotStop(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	d.press("esc")
	d.settle()
	if d.called("stop") || d.quit {
		t.Fatalf("Esc with nothing running: calls %q, quit %v", d.calls(), d.quit)
	}
}

func TestStopHandsWithdrawnTextBackAfterWhatIsTyped(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	sendFirst(t, d, "first")
	var s stream
	f.push(s.rec(started()))
	s.working(true)
	s.state.Submissions = []api.Submission{{ID: "m-op-2", Op: "op-2", State: api.Accepted, Text: "first"}}
	f.push(s.rec(&record.Submission{ID: "m-op-2", Op: "op-2", State: api.Accepted, Text: "first"}))
	d.until("the outbox to empty", func() bool { return len(d.m.outbox) == 0 })
	d.waitScreen("first · waiting")
	d.typ("half typed")
	f.stopRes = api.StopResult{Stopped: true, Withdrawn: []api.Taken{{ID: "m-op-2", Text: "first"}}}
	d.press("esc")
	d.until("the text back", func() bool { return d.m.composer.Value() == "half typed\nfirst" })
	d.waitScreen("Stop: 1 message back in the composer")
}

func TestStopDropsASendNotYetMade(t *testing.T) {
	f := newFake()
	f.sendGate = make(chan struct{})
	d := newDriver(t, f, Options{})
	d.typ("one")
	d.press("enter")
	d.waitCall("send c-new op-2")
	d.typ("two")
	d.press("enter") // queued behind the first send, which the host has not answered
	d.press("esc")
	if got := d.m.composer.Value(); got != "two" {
		t.Fatalf("composer = %q, want the unsent message back", got)
	}
	close(f.sendGate)
	d.waitCall("stop c-new op-4")
	calls := d.calls()
	for _, c := range calls {
		if strings.Contains(c, `"two"`) {
			t.Fatalf("the dropped message was sent: %q", calls)
		}
	}
	// The Stop follows the send it was pressed after.
	if i, j := index(calls, "send c-new op-2"), index(calls, "stop c-new op-4"); i < 0 || j < i {
		t.Fatalf("stop is not after the send: %q", calls)
	}
}

func index(calls []string, prefix string) int {
	for i, c := range calls {
		if strings.HasPrefix(c, prefix) {
			return i
		}
	}
	return -1
}

func TestCtrlCTwiceQuitsWhenNothingRuns(t *testing.T) {
	d := newDriver(t, newFake(), Options{})
	d.press("ctrl+c")
	if d.quit || !strings.Contains(d.screen(), "Ctrl-C again to quit") {
		t.Fatalf("first Ctrl-C: quit %v\n%s", d.quit, d.screen())
	}
	d.typ("x") // another key disarms
	d.press("ctrl+c")
	if d.quit {
		t.Fatal("a Ctrl-C after another key quit")
	}
	d.press("ctrl+c")
	d.until("quit", func() bool { return d.quit })
}

func TestCtrlCStopsWhatRunsThenQuits(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	sendFirst(t, d, "work")
	var s stream
	f.push(s.rec(started()), s.rec(&record.Submission{ID: "m-op-2", Op: "op-2", State: api.Accepted, Text: "work"}))
	s.working(true)
	f.push(s.rec(&record.UserPrompt{Turn: 1, Text: "work"}))
	d.until("working", func() bool { return d.m.state.InFlight })
	d.press("ctrl+c")
	d.waitCall("stop c-new")
	if d.quit {
		t.Fatal("Ctrl-C while working quit")
	}
	s.working(false)
	f.push(s.rec(&record.Cancelled{Reason: "stopped"}), s.rec(&record.Quiesced{Reason: fold.Cancelled}))
	d.until("settled", func() bool { return !d.m.working() })
	d.waitScreen("⏹ stopped")
	d.press("ctrl+c")
	d.until("quit", func() bool { return d.quit })
}

func TestCtrlDQuitsOnAnEmptyComposer(t *testing.T) {
	d := newDriver(t, newFake(), Options{})
	d.typ("ab")
	d.press("ctrl+d")
	if d.quit {
		t.Fatal("ctrl+d with text quit")
	}
	d.m.composer.Reset()
	d.press("ctrl+d")
	d.until("quit", func() bool { return d.quit })
}

func TestAltEnterQueuesAndEnterSteers(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	d.until("capabilities", func() bool { return d.m.capsKnown })
	sendFirst(t, d, "work")
	d.typ("after")
	d.press("alt+enter")
	d.waitCall(`send c-new op-3 "after" queue=true`)
	d.typ("now")
	d.press("enter")
	d.waitCall(`send c-new op-4 "now" queue=false`)
	if n := strings.Count(strings.Join(d.calls(), "\n"), "create"); n != 1 {
		t.Fatalf("%d creates: %q", n, d.calls())
	}
}

func TestQueueIsNotSentToAHostWithoutIt(t *testing.T) {
	f := newFake()
	f.caps = []string{"conversation-stop.v1"}
	d := newDriver(t, f, Options{})
	d.until("capabilities", func() bool { return d.m.capsKnown })
	d.typ("x")
	d.press("alt+enter")
	d.waitCall(`send c-new op-2 "x" queue=false`)
}

func TestNewlineAndEmptyEnter(t *testing.T) {
	d := newDriver(t, newFake(), Options{})
	d.press("enter")
	d.typ("a")
	d.press("ctrl+j")
	d.typ("b")
	if got := d.m.composer.Value(); got != "a\nb" {
		t.Fatalf("composer = %q", got)
	}
	d.settle()
	if d.called("create") {
		t.Fatal("an empty Enter sent something")
	}
}

func TestHistoryUpDownAtTheEdges(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	for _, s := range []string{"one", "two"} {
		d.typ(s)
		d.press("enter")
	}
	d.typ("draft")
	d.press("up")
	if got := d.m.composer.Value(); got != "two" {
		t.Fatalf("up: %q", got)
	}
	d.press("up")
	if got := d.m.composer.Value(); got != "one" {
		t.Fatalf("up up: %q", got)
	}
	d.press("up")
	if got := d.m.composer.Value(); got != "one" {
		t.Fatalf("up past the oldest: %q", got)
	}
	d.press("down", "down")
	if got := d.m.composer.Value(); got != "draft" {
		t.Fatalf("down to the draft: %q", got)
	}
	// Inside a multi-line message, Up moves the cursor, not through history.
	d.m.composer.SetValue("l1\nl2")
	d.press("up")
	if got := d.m.composer.Value(); got != "l1\nl2" || d.m.composer.Line() != 0 {
		t.Fatalf("up inside a message: %q line %d", got, d.m.composer.Line())
	}
	d.press("up")
	if got := d.m.composer.Value(); got != "two" {
		t.Fatalf("up at the first line: %q", got)
	}
}

func TestPageUpScrollsAndHoldsWhileTheStreamGrows(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	sendFirst(t, d, "go")
	var s stream
	f.push(s.rec(started()), s.rec(&record.Submission{ID: "m-op-2", Op: "op-2", State: api.Answered}))
	for i := 0; i < 30; i++ {
		f.push(s.rec(&record.Failure{Message: "line " + strconv.Itoa(i)}))
	}
	d.waitScreen("line 29")
	d.press("pgup")
	if d.m.scroll == 0 || strings.Contains(d.screen(), "line 29") || !strings.Contains(d.screen(), "more lines below") {
		t.Fatalf("pgup did not scroll:\n%s", d.screen())
	}
	top := d.screen()
	f.push(s.rec(&record.Failure{Message: "line 30"}))
	d.until("line 30", func() bool { return d.m.seq == s.seq })
	if body(d.screen()) != body(top) {
		t.Fatalf("the view moved while scrolled up:\n%s\n---\n%s", top, d.screen())
	}
	d.press("pgdown", "pgdown", "pgdown")
	d.waitScreen("line 30")
	d.press("pgup", "esc")
	if d.m.scroll != 0 {
		t.Fatal("Esc does not return to the bottom")
	}
}

func body(screen string) string { return strings.Join(strings.Split(screen, "\n")[:10], "\n") }

func TestRetryCountdownFromRetryScheduled(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	sendFirst(t, d, "go")
	var s stream
	f.push(s.rec(started()))
	s.working(true)
	f.push(s.rec(&record.UserPrompt{Turn: 1, Text: "go"}),
		s.rec(&record.ProviderError{Class: "rate_limited", Status: 429, Message: "slow down"}),
		s.rec(&record.RetryScheduled{Attempt: 1, DelayMs: 2500, Class: "rate_limited"}))
	d.waitScreen("rate_limited: retrying in 2.5s")
	if !strings.Contains(d.screen(), "provider error 429 (rate_limited): slow down") {
		t.Fatalf("no provider error line:\n%s", d.screen())
	}
	d.now = d.now.Add(time.Second)
	d.send(tickMsg(d.now))
	if !strings.Contains(d.screen(), "retrying in 1.5s") {
		t.Fatalf("countdown did not advance:\n%s", d.screen())
	}
	f.push(s.rec(&record.TurnStarted{Attempt: 2}))
	d.until("the countdown to end", func() bool { return !strings.Contains(d.screen(), "retrying in 1.5s") })
}

func TestReplayedRetryShowsNoCountdown(t *testing.T) {
	f := newFake()
	var s stream
	evs := []api.Event{s.rec(started()), s.rec(&record.RetryScheduled{Attempt: 1, DelayMs: 60000, Class: "overloaded"})}
	f.convs = []api.View{{ID: "c-old", Title: "old", State: api.State{Phase: "ready_for_user", Seq: s.seq}}}
	d := newDriver(t, f, Options{Resume: "c-old"})
	d.waitCall("events c-old after=0")
	f.push(evs...)
	d.until("replay", func() bool { return d.m.seq == s.seq })
	if !d.m.retryAt.IsZero() {
		t.Fatal("a replayed retry_scheduled started a countdown")
	}
}

func TestResidueRewindAndClearShowInTheScrollback(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	sendFirst(t, d, "go")
	var s stream
	evs := exchange(&s, "op-2", "go")
	f.push(evs...)
	f.push(s.rec(&record.Evicted{From: 1, To: 2, Note: "the listing; two files", By: record.ByModel}))
	d.waitScreen("▤ turns 1–2 left the context by model: the listing; two files")
	d.waitCall("transcript c-new")
	f.push(s.rec(&record.Rewound{Anchor: 3}), s.rec(&record.Cleared{}))
	d.waitScreen("cleared: every turn left the context")
	for _, e := range d.m.sb.entries {
		if e.turn > 0 && !e.gone {
			t.Fatalf("entry of turn %d is not marked gone after clear", e.turn)
		}
	}
}

func TestImportedResidueAndForkNotice(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	sendFirst(t, d, "go")
	var s stream
	f.push(s.rec(started()),
		s.rec(&record.Inherited{Parent: "c-parent", At: 4, High: 4}),
		s.rec(&record.Import{Turn: 5, Source: "resume", Message: record.Message{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: fold.ResidueText(1, 3, "setup done")}}}}))
	d.waitScreen("▤ turns 1–3 left the context: setup done")
	if !strings.Contains(d.screen(), "forked from c-parent: 0 turns inherited, up to turn 4") {
		t.Fatalf("no fork notice:\n%s", d.screen())
	}
}

func TestRejectedAndWithdrawnSubmissionsAreSaid(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	sendFirst(t, d, "go")
	var s stream
	f.push(s.rec(started()),
		s.rec(&record.Submission{ID: "m-x", State: api.Rejected, Reason: "host_restarted", Detail: "the host restarted before this message was delivered"}),
		s.rec(&record.Submission{ID: "m-y", State: api.Withdrawn}))
	d.waitScreen("a message was not delivered: the host restarted")
	d.waitScreen("withdrawn before it started")
}

func TestEventStreamReconnectsAfterTheLastSeq(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	sendFirst(t, d, "go")
	var s stream
	f.push(s.rec(started()), s.rec(&record.UserPrompt{Turn: 1, Text: "go"}))
	d.until("two records", func() bool { return d.m.seq == 2 })
	f.mu.Lock()
	close(f.subs[len(f.subs)-1])
	f.mu.Unlock()
	d.waitCall("events c-new after=2")
	f.push(s.rec(&record.Failure{Message: "after the reconnect"}))
	d.waitScreen("after the reconnect")
}

// ---- slash commands -----------------------------------------------------------------------------

// withConversation is a driver with conversation c-new created and settled.
func withConversation(t *testing.T, f *fakeHost) (*driver, *stream) {
	d := newDriver(t, f, Options{})
	d.until("capabilities", func() bool { return d.m.capsKnown })
	sendFirst(t, d, "go")
	s := &stream{}
	f.push(exchange(s, "op-2", "go")...)
	d.until("settled", func() bool { return !d.m.working() && d.m.seq == s.seq })
	return d, s
}

func slashCmd(d *driver, line string) {
	d.typ(line)
	d.press("enter")
}

func TestSlashHelp(t *testing.T) {
	d := newDriver(t, newFake(), Options{})
	slashCmd(d, "/help")
	d.waitScreen("/usage")
	if d.m.composer.Value() != "" {
		t.Fatal("the command stays in the composer")
	}
}

func TestSlashContextShowsTheSurvey(t *testing.T) {
	f := newFake()
	f.survey = api.Survey{Bytes: 4000, SystemBytes: 2000, Rows: []api.Row{
		{From: 1, To: 1, Role: record.User, Kind: api.Own, Label: "go", Bytes: 40, Held: "resident"},
		{From: 2, To: 3, Role: record.User, Kind: api.Residual, Label: "the listing", Bytes: 200, Held: "resident"},
	}}
	d, _ := withConversation(t, f)
	slashCmd(d, "/context")
	d.waitScreen("Context: 2 items, 6.0k bytes (~1.5k tokens of 200k, 0%)")
	d.waitScreen("2–3       user      residue      200  the listing")
}

func TestSlashContextBeforeAnything(t *testing.T) {
	d := newDriver(t, newFake(), Options{})
	slashCmd(d, "/context")
	d.waitScreen("the context is empty")
}

func TestSlashEvictRewindClear(t *testing.T) {
	f := newFake()
	f.survey = api.Survey{Bytes: 400}
	d, _ := withConversation(t, f)
	slashCmd(d, "/evict 1 2 the listing; two files")
	d.waitCall(`evict c-new op-3 1 2 "the listing; two files"`)
	d.until("the estimate", func() bool { return d.m.meter.used == 100+d.m.meter.overhead && !d.m.meter.exact })
	slashCmd(d, "/rewind 3")
	d.waitCall("rewind c-new op-4 3")
	slashCmd(d, "/clear")
	d.waitCall("clear c-new op-5")
	slashCmd(d, "/evict 1")
	d.waitScreen("usage: /evict <from> <to> <note>")
	slashCmd(d, "/rewind x")
	d.waitScreen("usage: /rewind <turn>")
}

func TestSlashEditRefusedIsSaid(t *testing.T) {
	f := newFake()
	f.editErr = &api.Error{Code: "bad_request", Message: "turn 999 is not recorded: the latest is 3"}
	d, _ := withConversation(t, f)
	slashCmd(d, "/rewind 999")
	d.waitScreen("rewind refused: turn 999 is not recorded")
}

func TestSlashEditsWhileWorkingAreRefusedHere(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	d.until("capabilities", func() bool { return d.m.capsKnown })
	sendFirst(t, d, "go")
	slashCmd(d, "/clear")
	d.waitScreen("/clear: the conversation is working; stop it first")
	if d.called("clear") {
		t.Fatal("clear was sent while working")
	}
}

func TestSlashEditsOnAHostWithoutThem(t *testing.T) {
	f := newFake()
	f.caps = []string{"conversation-stop.v1", "events.v1"}
	d, _ := withConversation(t, f)
	for _, c := range []string{"/evict 1 2 note", "/rewind 1", "/clear", "/fork", "/model other"} {
		slashCmd(d, c)
		name := strings.Fields(c)[0]
		d.waitScreen(name + " is not supported by this host")
	}
}

func TestSlashEditsThroughAClientWithoutEditor(t *testing.T) {
	f := newFake()
	d := newDriver(t, hostOnly{f}, Options{})
	d.until("capabilities", func() bool { return d.m.capsKnown })
	sendFirst(t, d, "go")
	var s stream
	f.push(exchange(&s, "op-2", "go")...)
	d.until("settled", func() bool { return !d.m.working() })
	slashCmd(d, "/rewind 1")
	d.waitScreen("/rewind is not supported by this host")
}

func TestSlashForkOpensTheFork(t *testing.T) {
	f := newFake()
	d, _ := withConversation(t, f)
	slashCmd(d, "/fork 2")
	d.waitCall("fork c-new op-3 2")
	d.waitCall("events c-fork after=0")
	d.until("the fork", func() bool { return d.m.conv == "c-fork" })
	d.waitScreen("this is a fork of c-new")
}

func TestSlashModel(t *testing.T) {
	f := newFake()
	f.caps = append(f.caps, api.CapModel)
	d, _ := withConversation(t, f)
	slashCmd(d, "/model")
	d.waitScreen("model: sim sim-1 · context window 200k tokens")
	slashCmd(d, "/model big-1")
	d.waitCall("model c-new op-3 big-1")
	d.waitScreen("model change refused: not supported by this host")
}

func TestSlashSessionsAndResume(t *testing.T) {
	f := newFake()
	f.convs = []api.View{
		{ID: "20261129-200102-a1b2c3", Title: "list the files", Updated: "2026-11-29T20:01:09Z", State: api.State{Seq: 3}},
		{ID: "20261128-100000-ffffff", Title: "older", Updated: "2026-11-28T10:00:00Z", State: api.State{Seq: 5, InFlight: true}},
	}
	d := newDriver(t, f, Options{})
	slashCmd(d, "/sessions")
	d.waitScreen("Conversations (2)")
	d.waitScreen("20261128-100000-ffffff  2026-11-28 10:00  older working")
	slashCmd(d, "/resume 20261128")
	d.waitCall("events 20261128-100000-ffffff after=0")
	d.until("opened", func() bool { return d.m.conv == "20261128-100000-ffffff" && d.m.working() })
	slashCmd(d, "/resume nope")
	d.waitScreen("no conversation nope here")
	slashCmd(d, "/resume 2026")
	d.waitScreen("2026 names 2 conversations")
}

func TestSlashResumeWithoutIDOpensThePicker(t *testing.T) {
	f := newFake()
	f.convs = []api.View{{ID: "c-a", Title: "alpha"}, {ID: "c-b", Title: "beta"}}
	d := newDriver(t, f, Options{})
	slashCmd(d, "/resume")
	d.until("the picker", func() bool { return d.m.picker != nil })
	d.waitScreen("Resume a conversation")
	d.press("down", "enter")
	d.waitCall("events c-b after=0")
	if d.m.picker != nil || d.m.conv != "c-b" {
		t.Fatalf("picker %v conv %q", d.m.picker, d.m.conv)
	}
}

// /new <back-end> makes the next conversation run in that agent program; a name the chat does not
// know is refused with the usage, and nothing is created.
func TestSlashNewOnBackend(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	slashCmd(d, "/new claudecode")
	d.waitScreen("usage: /new [rein|claude|codex]")
	slashCmd(d, "/new codex")
	d.waitScreen("it runs in Codex")
	d.typ("hello")
	d.press("enter")
	d.waitCall(`create op-1 "hello" on codex`)
	d.waitCall(`send c-new op-2 "hello"`)
	slashCmd(d, "/new")
	d.typ("again")
	d.press("enter")
	d.waitCall(`create op-3 "again" on codex`)
}

func TestSlashNewAndUnknownAndQuit(t *testing.T) {
	f := newFake()
	d, _ := withConversation(t, f)
	slashCmd(d, "/new")
	if d.m.conv != "" || len(d.m.sb.entries) != 1 {
		t.Fatalf("after /new: conv %q, %d entries", d.m.conv, len(d.m.sb.entries))
	}
	slashCmd(d, "/frobnicate")
	d.waitScreen("unknown command /frobnicate")
	slashCmd(d, "//etc/hosts is a path")
	d.waitCall(`send c-new op-4 "/etc/hosts is a path"`)
	slashCmd(d, "/quit")
	d.until("quit", func() bool { return d.quit })
}

// ---- the picker at start ------------------------------------------------------------------------

func TestPickerAtStart(t *testing.T) {
	f := newFake()
	f.convs = []api.View{{ID: "c-a", Title: "alpha"}, {ID: "c-b", Title: "beta"}, {ID: "c-c", Title: "gamma"}}
	d := newDriver(t, f, Options{Pick: true})
	d.until("the picker", func() bool { return d.m.picker != nil })
	d.press("down", "down", "down", "up")
	if d.m.picker.cursor != 1 {
		t.Fatalf("cursor %d", d.m.picker.cursor)
	}
	d.send(tea.KeyPressMsg{Code: tea.KeyEscape})
	if d.m.picker != nil || d.m.conv != "" {
		t.Fatal("Esc does not leave the picker for a new conversation")
	}
}

func TestPickerWithNothingToResume(t *testing.T) {
	d := newDriver(t, newFake(), Options{Pick: true})
	d.waitScreen("there is no conversation to resume yet")
}

func TestResumeAtStartReplaysTheRecord(t *testing.T) {
	f := newFake()
	var s stream
	evs := exchange(&s, "op-1", "list the files")
	f.convs = []api.View{{ID: "c-old", Title: "list the files", State: api.State{Phase: "ready_for_user", Seq: s.seq}}}
	d := newDriver(t, f, Options{Resume: "c-old"})
	d.waitCall("events c-old after=0")
	f.push(evs...)
	d.waitScreen("Two files: a.txt and b.txt.")
	if d.m.working() {
		t.Fatal("a replayed exchange shows as working")
	}
}

// The status line says which OS sandbox the session's commands run under, as recorded.
func TestStatusShowsTheSandbox(t *testing.T) {
	m := &Model{opt: Options{Now: time.Now}}
	m.meta(&record.SessionStarted{Provider: "sim", Model: "sim-1", Sandbox: "workspace-write, no network"}, false)
	if s := m.status(160); !strings.Contains(s, "sandbox workspace-write, no network") {
		t.Fatalf("the status line does not show the sandbox: %q", s)
	}
	m.meta(&record.SessionResumed{Provider: "sim", Model: "sim-1", Sandbox: "off"}, false)
	if s := m.status(160); !strings.Contains(s, "sandbox off") {
		t.Fatalf("a resume's sandbox is not shown: %q", s)
	}
}

// TestResumeNewest: --resume newest opens the conversation the host lists first (the most recently
// updated), as "newest" names a workspace's newest session on the command line.
func TestResumeNewest(t *testing.T) {
	f := newFake()
	f.convs = []api.View{{ID: "c-recent", Title: "recent", State: api.State{Phase: "ready_for_user"}}, {ID: "c-old", Title: "old", State: api.State{Phase: "ready_for_user"}}}
	d := newDriver(t, f, Options{Resume: "newest"})
	d.waitCall("events c-recent after=0")
}

// A message the host rejects (a prompt hook refused it, or it cannot fit the window) comes back
// to the composer, after anything typed since, with the host's reason on screen: nothing typed is
// lost, and it can be changed and sent again.
func TestRejectedMessageComesBack(t *testing.T) {
	f := newFake()
	d := newDriver(t, f, Options{})
	sendFirst(t, d, "the secret is 42")
	d.typ("and more")
	var s stream
	f.push(s.rec(started()),
		s.rec(&record.Submission{ID: "m-op-2", Op: "op-2", State: api.Accepted, Text: "the secret is 42"}),
		s.rec(&record.Submission{ID: "m-op-2", State: api.Rejected, Reason: "refused", Detail: "a prompt hook refused the prompt: no secrets"}))
	d.waitScreen("no secrets")
	d.until("the text back in the composer", func() bool { return d.m.composer.Value() == "and more\nthe secret is 42" })
	if len(d.m.outbox) != 0 {
		t.Errorf("the rejected message is still in the outbox: %+v", d.m.outbox)
	}
}
