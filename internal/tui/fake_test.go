package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/record"
)

// fakeHost is a working in-memory host for model tests: it answers from what the test set up
// and keeps a log of the calls, in order.
type fakeHost struct {
	mu       sync.Mutex
	caps     []string
	convs    []api.View
	calls    []string
	subs     []chan api.Event
	stopRes  api.StopResult
	sendGate chan struct{} // when set, Send waits for it
	survey   api.Survey
	editErr  error
	noEdit   bool
}

func newFake() *fakeHost {
	return &fakeHost{caps: []string{"conversation-stop.v1", "op-ids.v1", "events.v1", api.CapQueue, api.CapEdits, api.CapFork}}
}

func (f *fakeHost) log(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

func (f *fakeHost) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeHost) Capabilities(ctx context.Context) ([]string, error) { return f.caps, nil }
func (f *fakeHost) List(ctx context.Context) ([]api.View, error) {
	f.log("list")
	return f.convs, nil
}
func (f *fakeHost) Create(ctx context.Context, op, title string) (api.View, error) {
	f.log("create %s %q", op, title)
	v := api.View{ID: "c-new", Title: title, State: api.State{Phase: "ready_for_user", Seq: 1}}
	return v, nil
}
func (f *fakeHost) CreateOn(ctx context.Context, op, title, backend string) (api.View, error) {
	f.log("create %s %q on %s", op, title, backend)
	return api.View{ID: "c-new", Title: title, Backend: backend, State: api.State{Phase: "ready_for_user", Seq: 1}}, nil
}
func (f *fakeHost) Send(ctx context.Context, id string, m api.Message) (api.SendResult, error) {
	f.log("send %s %s %q queue=%v", id, m.Op, m.Text, m.Queue)
	if f.sendGate != nil {
		<-f.sendGate
	}
	return api.SendResult{MessageID: "m-" + m.Op, State: api.Accepted}, nil
}
func (f *fakeHost) Stop(ctx context.Context, id, op string) (api.StopResult, error) {
	f.log("stop %s %s", id, op)
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.stopRes
	f.stopRes = api.StopResult{Withdrawn: []api.Taken{}}
	return r, nil
}
func (f *fakeHost) Transcript(ctx context.Context, id string) (api.Transcript, error) {
	f.log("transcript %s", id)
	f.mu.Lock()
	defer f.mu.Unlock()
	return api.Transcript{Survey: f.survey}, nil
}
func (f *fakeHost) Events(ctx context.Context, id string, after int64) (<-chan api.Event, error) {
	ch := make(chan api.Event, 1024)
	f.mu.Lock()
	f.subs = append(f.subs, ch)
	f.mu.Unlock()
	f.log("events %s after=%d", id, after)
	return ch, nil
}

// push delivers events to the newest subscription.
func (f *fakeHost) push(evs ...api.Event) {
	f.mu.Lock()
	ch := f.subs[len(f.subs)-1]
	f.mu.Unlock()
	for _, ev := range evs {
		ch <- ev
	}
}

func (f *fakeHost) Evict(ctx context.Context, id, op string, from, to int64, note string) (api.Survey, error) {
	f.log("evict %s %s %d %d %q", id, op, from, to, note)
	return f.survey, f.editErr
}
func (f *fakeHost) Rewind(ctx context.Context, id, op string, turn int64) (api.Survey, error) {
	f.log("rewind %s %s %d", id, op, turn)
	return f.survey, f.editErr
}
func (f *fakeHost) Clear(ctx context.Context, id, op string) (api.Survey, error) {
	f.log("clear %s %s", id, op)
	return f.survey, f.editErr
}
func (f *fakeHost) Fork(ctx context.Context, id, op string, at int64) (api.View, error) {
	f.log("fork %s %s %d", id, op, at)
	return api.View{ID: "c-fork", Title: "fork", State: api.State{Phase: "ready_for_user", Seq: 2}}, nil
}
func (f *fakeHost) SetModel(ctx context.Context, id, op, model string) (api.View, error) {
	f.log("model %s %s %s", id, op, model)
	return api.View{}, ErrUnsupported
}

func (f *fakeHost) Approve(ctx context.Context, id, op, callID string, allow bool) error {
	f.log("approve %s %s %s %v", id, op, callID, allow)
	return nil
}

// hostOnly hides a fake's Editor methods: a client with no edit calls.
type hostOnly struct{ Host }

// driver runs a Model as Bubble Tea would, without a terminal: it runs each command on its own
// goroutine and feeds the messages back into Update, and waits for conditions with a deadline
// (never a fixed sleep).
type driver struct {
	t    testing.TB
	m    *Model
	msgs chan tea.Msg
	quit bool
	now  time.Time
}

func newDriver(t testing.TB, h Host, opt Options) *driver {
	t.Helper()
	d := &driver{t: t, msgs: make(chan tea.Msg, 4096), now: time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)}
	n := 0
	if opt.NewOp == nil {
		opt.NewOp = func() string { n++; return fmt.Sprintf("op-%d", n) }
	}
	if opt.Now == nil {
		opt.Now = func() time.Time { return d.now }
	}
	if opt.Model == "" {
		opt.Provider, opt.Model, opt.Window = "sim", "sim-1", 200_000
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opt.Context = ctx
	d.m = New(h, opt)
	d.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	d.exec(d.m.Init())
	return d
}

func (d *driver) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		if msg := cmd(); msg != nil {
			d.msgs <- msg
		}
	}()
}

func (d *driver) send(msg tea.Msg) {
	switch msg := msg.(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			d.exec(c)
		}
		return
	case tea.QuitMsg:
		d.quit = true
		return
	}
	_, cmd := d.m.Update(msg)
	d.exec(cmd)
}

// until feeds messages until cond holds.
func (d *driver) until(what string, cond func() bool) {
	d.t.Helper()
	deadline := time.After(5 * time.Second)
	poll := time.NewTicker(time.Millisecond) // a call a command made shows in the host's log
	defer poll.Stop()
	for !cond() {
		select {
		case msg := <-d.msgs:
			d.send(msg)
		case <-poll.C:
		case <-deadline:
			d.t.Fatalf("timed out waiting for %s\ncalls: %q\nscreen:\n%s", what, d.calls(), d.screen())
		}
	}
}

// settle feeds messages until none arrives for a moment's grace: used only where a test asserts
// that something did not happen, after waiting for what did.
func (d *driver) settle() {
	for {
		select {
		case msg := <-d.msgs:
			d.send(msg)
		case <-time.After(30 * time.Millisecond):
			return
		}
	}
}

func (d *driver) calls() []string {
	if f, ok := d.m.host.(interface{ Calls() []string }); ok { // the fake, or a fake that embeds it
		return f.Calls()
	}
	if f, ok := d.m.host.(hostOnly); ok {
		return f.Host.(*fakeHost).Calls()
	}
	return nil
}

func (d *driver) called(prefix string) bool {
	for _, c := range d.calls() {
		if strings.HasPrefix(c, prefix) {
			return true
		}
	}
	return false
}

func (d *driver) waitCall(prefix string) {
	d.t.Helper()
	d.until("a call "+prefix, func() bool { return d.called(prefix) })
}

// screen is the screen as plain text.
func (d *driver) screen() string {
	s, _ := d.m.draw()
	return ansi.Strip(s)
}

func (d *driver) waitScreen(sub string) {
	d.t.Helper()
	d.until("the screen to show "+sub, func() bool { return strings.Contains(d.screen(), sub) })
}

func (d *driver) typ(s string) {
	for _, r := range s {
		d.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (d *driver) press(keys ...string) {
	for _, k := range keys {
		d.send(keyMsg(k))
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "alt+enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt}
	case "ctrl+j":
		return tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "ctrl+d":
		return tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	case "ctrl+o":
		return tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl}
	case "ctrl+r":
		return tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}
	case "ctrl+l":
		return tea.KeyPressMsg{Code: 'l', Mod: tea.ModCtrl}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	}
	panic("unknown key " + k)
}

// ---- events -------------------------------------------------------------------------------------

// stream builds a conversation's events with consecutive seqs.
type stream struct {
	seq   int64
	state api.State
}

func (s *stream) rec(p record.Payload) api.Event {
	s.seq++
	s.state.Seq = s.seq
	s.state.Working = api.Working(s.state)
	b, err := json.Marshal(p)
	if err != nil {
		panic(err)
	}
	st := s.state
	st.Submissions = append([]api.Submission(nil), s.state.Submissions...)
	return api.Event{Seq: s.seq, Kind: string(p.Kind()), Payload: b, State: st}
}

func (s *stream) working(on bool) *stream {
	s.state.InFlight = on
	if on {
		s.state.Phase = "awaiting_assistant_after_user"
	} else {
		s.state.Phase = "ready_for_user"
	}
	return s
}

func liveText(kind, text string) api.Event { return api.Event{Live: &api.Live{Kind: kind, Text: text}} }

func liveCall(kind, id, name, text string) api.Event {
	return api.Event{Live: &api.Live{Kind: kind, CallID: id, Name: name, Text: text}}
}

func started() *record.SessionStarted {
	return &record.SessionStarted{Session: "c-new", Provider: "sim", Model: "sim-1", ContextWindow: 200_000, Cwd: "/w", Version: "0.1.0"}
}

func intp(n int) *int { return &n }
