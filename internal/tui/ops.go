package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/reinhq/rein/internal/api"
)

// Calls to the host run as Bubble Tea commands, off the update loop. Mutations (create, send,
// stop, edits, fork) run one at a time in the order they were asked for: the host then sees a
// Stop after the send it follows, as the person did. Reads run at once.

type opKind int

const (
	opCreate opKind = iota
	opSend
	opStop
	opEdit
	opFork
	opModel
	opApprove
)

// op is one mutation waiting its turn. run is given the conversation as it is when the op
// starts (a send queued behind a create goes to the conversation the create made).
type op struct {
	kind   opKind
	text   string // a send's text, given back if a Stop drops it
	sendOp string // a send's operation id
	run    func(ctx context.Context, conv string) tea.Msg
}

// opDone carries a mutation's answer; the next one starts when it arrives.
type opDone struct{ msg tea.Msg }

func (m *Model) enqueue(o op) tea.Cmd {
	m.queue = append(m.queue, o)
	return m.next()
}

func (m *Model) next() tea.Cmd {
	if m.busy || len(m.queue) == 0 {
		return nil
	}
	o := m.queue[0]
	m.queue = m.queue[1:]
	m.busy, m.inflight = true, o.kind
	ctx, conv := m.ctx, m.conv
	return func() tea.Msg { return opDone{o.run(ctx, conv)} }
}

// Answers from the host.
type (
	capsMsg struct {
		caps []string
		err  error
	}
	createdMsg struct {
		view api.View
		err  error
	}
	sentMsg struct {
		op  string
		res api.SendResult
		err error
	}
	stoppedMsg struct {
		res api.StopResult
		err error
	}
	editedMsg struct {
		what   string
		survey api.Survey
		err    error
		files  *api.FilesRestored // what a rewind with files did (files.go)
	}
	forkedMsg struct {
		view api.View
		err  error
	}
	modelSetMsg struct {
		view api.View
		err  error
	}
	approvedMsg struct {
		callID string
		allow  bool
		err    error
	}
	listMsg struct {
		purpose listPurpose
		views   []api.View
		err     error
	}
	transcriptMsg struct {
		conv string
		show bool
		t    api.Transcript
		err  error
	}
	subscribedMsg struct {
		gen int
		err error
	}
	resubscribeMsg struct{ gen int }
	// eventsMsg is one delivery of events: everything the stream had ready, up to a bound, so a
	// fast stream costs one render per delivery rather than one per event.
	eventsMsg struct {
		gen    int
		ch     <-chan api.Event
		evs    []api.Event
		closed bool
	}
)

// listPurpose says what a list of conversations was fetched for.
type listPurpose struct {
	kind   int // listShow, listPick, listResume
	prefix string
}

const (
	listShow = iota
	listPick
	listResumeID
)

var (
	listForPicker   = listPurpose{kind: listPick}
	listForSessions = listPurpose{kind: listShow}
)

// newest names the most recently updated conversation, as the command line names a workspace's
// newest session.
const newest = "newest"

func listForResume(prefix string) listPurpose { return listPurpose{kind: listResumeID, prefix: prefix} }

func (m *Model) fetchCaps() tea.Cmd {
	h, ctx := m.host, m.ctx
	return func() tea.Msg {
		caps, err := h.Capabilities(ctx)
		return capsMsg{caps, err}
	}
}

func (m *Model) fetchList(p listPurpose) tea.Cmd {
	h, ctx := m.host, m.ctx
	return func() tea.Msg {
		vs, err := h.List(ctx)
		return listMsg{p, vs, err}
	}
}

func (m *Model) fetchTranscript(show bool) tea.Cmd {
	if m.conv == "" {
		return nil
	}
	h, ctx, conv := m.host, m.ctx, m.conv
	return func() tea.Msg {
		t, err := h.Transcript(ctx, conv)
		return transcriptMsg{conv, show, t, err}
	}
}

func (m *Model) createOp(title string) op {
	h, opID, backend := m.host, m.opt.NewOp(), m.backend
	return op{kind: opCreate, run: func(ctx context.Context, _ string) tea.Msg {
		if backend == "" {
			v, err := h.Create(ctx, opID, title)
			return createdMsg{v, err}
		}
		on, ok := h.(BackendCreator)
		if !ok {
			return createdMsg{err: errors.New("this host cannot choose the agent a conversation runs in: /new without a name")}
		}
		v, err := on.CreateOn(ctx, opID, title, backend)
		return createdMsg{v, err}
	}}
}

func (m *Model) sendOp(s sent) op {
	h := m.host
	return op{kind: opSend, text: s.text, sendOp: s.op, run: func(ctx context.Context, conv string) tea.Msg {
		if conv == "" {
			return sentMsg{op: s.op, err: errors.New("no conversation to send to")}
		}
		res, err := h.Send(ctx, conv, api.Message{Op: s.op, Text: s.text, Queue: s.queue})
		return sentMsg{s.op, res, err}
	}}
}

func (m *Model) stopOp(opID string) op {
	h := m.host
	return op{kind: opStop, run: func(ctx context.Context, conv string) tea.Msg {
		if conv == "" {
			return stoppedMsg{res: api.StopResult{}}
		}
		res, err := h.Stop(ctx, conv, opID)
		return stoppedMsg{res, err}
	}}
}

// waitEvents waits for the next delivery from the stream.
func waitEvents(ch <-chan api.Event, gen int) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		if !ok {
			return eventsMsg{gen: gen, ch: ch, closed: true}
		}
		evs := []api.Event{ev}
		for len(evs) < 512 {
			select {
			case ev, ok := <-ch:
				if !ok {
					return eventsMsg{gen: gen, ch: ch, evs: evs, closed: true}
				}
				evs = append(evs, ev)
				continue
			default:
			}
			break
		}
		return eventsMsg{gen: gen, ch: ch, evs: evs}
	}
}

// subscribe starts a new event subscription after seq after; deliveries of any older one are
// dropped by their generation.
func (m *Model) subscribe(after int64) tea.Cmd {
	if m.cancel != nil {
		m.cancel()
	}
	m.gen++
	gen, conv, h := m.gen, m.conv, m.host
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancel = cancel
	return func() tea.Msg {
		ch, err := h.Events(ctx, conv, after)
		if err != nil {
			return subscribedMsg{gen, err}
		}
		return waitEvents(ch, gen)()
	}
}

// resubscribe reconnects a stream that ended, after the last record applied, backing off while
// it keeps failing. (The client reconnects dropped connections itself; its stream ends only when
// the host refuses the subscription.)
func (m *Model) resubscribe() tea.Cmd {
	if m.quit || m.conv == "" {
		return nil
	}
	m.lost++
	if m.lost == 2 {
		m.sb.notice(warn, "the conversation's event stream keeps ending; reconnecting")
	}
	delay := min(250*time.Millisecond<<min(m.lost-1, 5), 5*time.Second)
	gen := m.gen
	return tea.Tick(delay, func(time.Time) tea.Msg { return resubscribeMsg{gen} })
}

// open shows conversation v: its record replayed from the start draws the scrollback.
func (m *Model) open(v api.View) tea.Cmd {
	m.dropQueued()
	m.conv, m.title, m.state, m.seq, m.base = v.ID, v.Title, v.State, 0, v.State.Seq
	m.sb.reset()
	m.retryAt, m.scroll, m.outbox = time.Time{}, 0, nil
	m.meter.reset()
	m.tally.reset()
	if v.Held != nil {
		// Its stream is refused until that process lets go; the chat keeps asking meanwhile.
		m.sb.notice(warn, "conversation %s is held by %s: another rein process is writing it, and a session has one writer at a time. "+
			"It shows here once that process lets go; if it is a rein serve, talk to it there (rein chat --connect <its URL>)", v.ID, v.Held)
	}
	return tea.Batch(m.subscribe(0), m.fetchTranscript(false), m.startTicking())
}

// dropQueued gives back the text of sends that have not started.
func (m *Model) dropQueued() {
	var back []string
	kept := m.queue[:0]
	for _, o := range m.queue {
		if o.kind == opSend {
			back = append(back, o.text)
			m.dropOutbox(o.sendOp)
			continue
		}
		if o.kind == opCreate {
			continue
		}
		kept = append(kept, o)
	}
	m.queue = kept
	m.giveBack(back)
}

// say is an error in words for the scrollback: a host's refusal is its message.
func say(err error) string {
	var e *api.Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return err.Error()
}

// result applies a host's answer.
func (m *Model) result(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case capsMsg:
		if msg.err != nil {
			m.sb.notice(bad, "cannot reach the host: %v", say(msg.err))
			return nil
		}
		m.caps, m.capsKnown = map[string]bool{}, true
		for _, c := range msg.caps {
			m.caps[c] = true
		}
	case createdMsg:
		if msg.err != nil {
			m.sb.notice(bad, "could not start a conversation: %v", say(msg.err))
			m.dropQueued()
			m.outbox = nil
			return nil
		}
		m.conv, m.title, m.state, m.base = msg.view.ID, msg.view.Title, msg.view.State, msg.view.State.Seq
		return m.subscribe(0)
	case sentMsg:
		for i := range m.outbox {
			if m.outbox[i].op == msg.op {
				if msg.err != nil {
					text := m.outbox[i].text
					m.outbox = append(m.outbox[:i], m.outbox[i+1:]...)
					m.sb.notice(bad, "could not send: %v", say(msg.err))
					m.giveBack([]string{text})
				} else {
					m.outbox[i].id, m.outbox[i].acked = msg.res.MessageID, true
				}
				break
			}
		}
		return m.startTicking()
	case stoppedMsg:
		if msg.err != nil {
			m.sb.notice(bad, "Stop failed: %v", say(msg.err))
			return nil
		}
		var back []string
		for _, w := range msg.res.Withdrawn {
			back = append(back, w.Text)
			for i, s := range m.outbox {
				if s.id == w.ID {
					m.outbox = append(m.outbox[:i], m.outbox[i+1:]...)
					break
				}
			}
		}
		m.giveBack(back)
		if n := len(back); n > 0 {
			m.flash = fmt.Sprintf("Stop: %d message%s back in the composer", n, plural(n))
		}
	default:
		return m.answered(msg)
	}
	return nil
}

// answered applies the answer to an edit, a fork, or a read.
func (m *Model) answered(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case editedMsg:
		if msg.err != nil {
			m.sb.notice(bad, "%s refused: %v", msg.what, say(msg.err))
			return nil
		}
		m.meter.edited((msg.survey.Bytes + msg.survey.SystemBytes) / 4)
		if msg.files != nil {
			m.sb.block(filesLines(msg.files)...)
		}
	case forkedMsg:
		if msg.err != nil {
			m.sb.notice(bad, "fork refused: %v", say(msg.err))
			return nil
		}
		from := m.conv
		cmd := m.open(msg.view)
		m.sb.notice(dim, "this is a fork of %s", from)
		return cmd
	case modelSetMsg:
		if msg.err != nil {
			m.sb.notice(bad, "model change refused: %v", say(msg.err))
		}
	case releasedMsg:
		if msg.err != nil {
			m.sb.notice(bad, "the release was refused: %v", say(msg.err))
		}
	case approvedMsg:
		if msg.err != nil {
			delete(m.answering, msg.callID)
			m.sb.notice(bad, "the answer to %s was refused: %v", msg.callID, say(msg.err))
		}
	case listMsg:
		return m.listed(msg)
	case transcriptMsg:
		if msg.conv != m.conv {
			return nil
		}
		if msg.err != nil {
			if msg.show {
				m.sb.notice(bad, "cannot read the context: %v", say(msg.err))
			}
			return nil
		}
		m.meter.survey((msg.t.Survey.Bytes + msg.t.Survey.SystemBytes) / 4)
		if msg.show {
			m.sb.block(surveyLines(msg.t.Survey, m.window)...)
		}
	case subscribedMsg:
		if msg.gen == m.gen && msg.err != nil {
			m.sb.notice(warn, "the event stream failed: %v; reconnecting", say(msg.err))
			return m.resubscribe()
		}
	case resubscribeMsg:
		if msg.gen == m.gen {
			return m.subscribe(m.seq)
		}
	}
	return nil
}

// listed acts on a list of conversations.
func (m *Model) listed(msg listMsg) tea.Cmd {
	if msg.err != nil {
		m.sb.notice(bad, "cannot list the conversations: %v", say(msg.err))
		return nil
	}
	switch msg.purpose.kind {
	case listPick:
		if len(msg.views) == 0 {
			m.sb.notice(dim, "there is no conversation to resume yet: send a message to start one")
			return nil
		}
		m.picker = &picker{items: msg.views}
	case listResumeID:
		var found []api.View
		for _, v := range msg.views {
			if msg.purpose.prefix == newest {
				// The list comes most recently updated first.
				found = append(found, v)
				break
			}
			if v.ID == msg.purpose.prefix {
				found = []api.View{v}
				break
			}
			if strings.HasPrefix(v.ID, msg.purpose.prefix) {
				found = append(found, v)
			}
		}
		switch len(found) {
		case 0:
			m.sb.notice(bad, "no conversation %s here (/sessions lists them)", msg.purpose.prefix)
		case 1:
			return m.open(found[0])
		default:
			m.sb.notice(bad, "%s names %d conversations: give more of the id", msg.purpose.prefix, len(found))
		}
	default:
		m.sb.block(sessionLines(msg.views, m.conv)...)
	}
	return nil
}
