package tui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/record"
)

// Options configure a chat.
type Options struct {
	// Resume opens this conversation (an id or a unique prefix of one) at start; Pick opens the
	// session picker instead.
	Resume string
	Pick   bool
	// Provider, Model and Window are shown until the conversation's record says otherwise.
	Provider string
	Model    string
	Window   int64
	// NewOp mints operation ids (default: random); Now is the clock (default: time.Now).
	NewOp func() string
	Now   func() time.Time
	// Context bounds every call to the host (default: context.Background()).
	Context context.Context
	// Out receives the conversation as drawn when the chat ends (nil: nothing is printed).
	Out io.Writer
	// HistoryFile keeps the prompts sent, for Up, Down and Ctrl+R across runs ("": this run's
	// only). Workspace is the directory @-mentions complete in ("": no @-completion).
	HistoryFile string
	Workspace   string
}

// Model is the chat's Bubble Tea model. Everything it shows is a projection of what the host
// said (records, live events, answers); everything it does to the conversation goes through Host,
// mutations one at a time in the order they were asked for, so a Stop pressed after a send stops
// that send.
type Model struct {
	host Host
	edit Editor    // nil when the client has no edit calls
	appr Approvals // nil when the client cannot answer approvals
	opt  Options
	ctx  context.Context

	caps      map[string]bool
	capsKnown bool

	conv string // the conversation shown; "" until the first send creates one
	// backend is the back-end the next conversation created runs in, as /new named it ("": the
	// host's default, or the one rein chat --backend chose).
	backend string
	title   string
	gen     int       // the event subscription's generation; older deliveries are dropped
	cancel  func()    // ends the event subscription
	lost    int       // the subscription's failures in a row
	seq     int64     // the last record applied
	base    int64     // the seq the conversation stood at when opened: records up to it are replayed
	state   api.State // the folded state as of seq

	sb       scrollback
	composer textarea.Model
	history  []string
	hist     int    // index into history while browsing; len(history) when not
	draft    string // what was typed before browsing history
	search   *search
	files    []string // the workspace's files, for @-mentions; nil until listed

	completeAfterList bool // a Tab is waiting for the file list

	width, height int
	scroll        int // lines scrolled up from the bottom; 0 follows the stream

	provider, model string
	sandbox         string // the OS sandbox the session's commands run under, as recorded
	window          int64
	meter           meter // context used, in tokens
	tally           tally // tokens and cost, per exchange and in all
	needSurvey      bool

	retryAt      time.Time
	retryClass   string
	workingSince time.Time
	ticking      bool

	outbox []sent // sent and not yet seen in the stream
	// mine holds the text of this chat's messages the stream showed accepted and not yet ended, by
	// submission id: one the host rejects comes back to the composer.
	mine     map[string]string
	queue    []op   // mutations waiting their turn
	busy     bool   // a mutation is in flight
	inflight opKind // which

	answering map[string]bool // approvals this client answered, until the state drops them
	panel     panel           // the approval panel's focus (approval.go)

	picker *picker
	armed  bool   // a Ctrl-C with nothing running: the next one quits
	flash  string // a one-line hint under the composer, cleared by the next key
	expand bool   // tool output and thinking unfolded
	quit   bool
}

// sent is a message in the outbox: sent (or about to be) and not yet seen in the stream.
type sent struct {
	op, id, text string
	queue        bool
	acked        bool
}

// New returns a chat over h. h may also implement Editor.
func New(h Host, opt Options) *Model {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.NewOp == nil {
		opt.NewOp = randomOps()
	}
	if opt.Context == nil {
		opt.Context = context.Background()
	}
	m := &Model{host: h, opt: opt, ctx: opt.Context, provider: opt.Provider, model: opt.Model, window: opt.Window}
	m.edit, _ = h.(Editor)
	m.appr, _ = h.(Approvals)
	m.sb.reset()
	m.composer = newComposer()
	if opt.HistoryFile != "" {
		h, err := loadHistory(opt.HistoryFile)
		if err != nil {
			m.sb.notice(warn, "%v", err)
		}
		m.history, m.hist = h, len(h)
	}
	m.width, m.height = 80, 24
	m.layout()
	return m
}

func randomOps() func() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	prefix := "tui-" + hex.EncodeToString(b[:]) + "-"
	var n atomic.Int64
	return func() string { return prefix + strconv.FormatInt(n.Add(1), 10) }
}

func newComposer() textarea.Model {
	ta := textarea.New()
	ta.Prompt = ""
	ta.ShowLineNumbers = false
	ta.Placeholder = "Send a message  (/help for commands)"
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 8
	ta.CharLimit = 0
	ta.MaxContentHeight = 0
	ta.SetVirtualCursor(false)
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("ctrl+j", "shift+enter"))
	ta.KeyMap.LinePrevious = key.NewBinding(key.WithKeys("up"))
	ta.KeyMap.LineNext = key.NewBinding(key.WithKeys("down"))
	ta.KeyMap.PageUp = key.NewBinding(key.WithDisabled())
	ta.KeyMap.PageDown = key.NewBinding(key.WithDisabled())
	s := ta.Styles()
	s.Focused.CursorLine = s.Focused.Text
	s.Focused.Placeholder = sty.dim
	s.Blurred.Placeholder = sty.dim
	ta.SetStyles(s)
	ta.Focus()
	return ta
}

// Init fetches the host's capabilities and, when asked, opens a conversation or the picker.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.fetchCaps()}
	switch {
	case m.opt.Pick:
		cmds = append(cmds, m.fetchList(listForPicker))
	case m.opt.Resume != "":
		cmds = append(cmds, m.fetchList(listForResume(m.opt.Resume)))
	}
	return tea.Batch(cmds...)
}

// working is the one working rule on the published state, plus this client's outbox: a message
// is Stop-able from the moment it is sent.
func (m *Model) working() bool { return api.Working(m.state) || len(m.outbox) > 0 }

// Conversation returns the id of the conversation shown ("" before the first send).
func (m *Model) Conversation() string { return m.conv }

// Update applies one message. Whatever it changed, the approval panel keeps the focus only for
// the call it was given it for.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	defer m.syncPanel()
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.PasteMsg:
		m.flash, m.armed = "", false
		if m.panel.call != "" {
			m.blurPanel() // a paste is text: it goes to the composer, and the focus with it
		}
		var cmd tea.Cmd
		m.composer, cmd = m.composer.Update(msg)
		m.layout()
		return m, cmd
	case eventsMsg:
		return m, m.events(msg)
	case filesMsg:
		return m, m.filesListed(msg)
	case opDone:
		m.busy = false
		cmd := m.result(msg.msg)
		return m, tea.Batch(cmd, m.next())
	case tickMsg:
		return m, m.tick()
	}
	return m, m.result(msg)
}

// key handles a key press.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	if s != "ctrl+c" {
		m.armed = false
	}
	m.flash = ""
	if m.picker != nil {
		return m.pickerKey(s)
	}
	if m.search != nil {
		m.searchKey(s, k.Text)
		return nil
	}
	// A tool call waiting for the person's approval is answered in its panel, which takes the
	// keys only from Tab; what is typed into the composer never answers it (approval.go).
	m.syncPanel()
	if a, ok := m.awaiting(); ok {
		if m.panelFocused() {
			if cmd, handled := m.panelKey(a, s); handled {
				return cmd
			}
		} else if s == "tab" || s == "shift+tab" {
			return m.focusPanel(a)
		}
	}
	switch s {
	case "ctrl+c":
		if m.working() {
			m.armed = true
			return m.stop()
		}
		if m.armed {
			return m.exit()
		}
		m.armed = true
		m.flash = "Ctrl-C again to quit"
		return nil
	case "esc":
		if m.working() {
			return m.stop()
		}
		m.scroll = 0
		return nil
	case "ctrl+d":
		if m.composer.Value() == "" && !m.working() {
			return m.exit()
		}
	case "enter":
		if _, ok := m.awaiting(); ok && strings.TrimSpace(m.composer.Value()) == "" {
			m.flash = "Tab to answer the approval"
			return nil
		}
		return m.submit(false)
	case "alt+enter":
		return m.submit(true)
	case "up":
		if m.composer.Line() == 0 && m.composer.LineInfo().RowOffset == 0 {
			m.historyMove(-1)
			return nil
		}
	case "down":
		if m.composer.Line() == m.composer.LineCount()-1 && m.atLastRow() {
			m.historyMove(+1)
			return nil
		}
	case "pgup":
		m.scrollBy(m.scrollHeight() - 2)
		return nil
	case "pgdown":
		m.scrollBy(-(m.scrollHeight() - 2))
		return nil
	case "ctrl+o":
		m.expand = !m.expand
		return nil
	case "ctrl+r":
		if len(m.history) > 0 {
			m.search = &search{at: -1, draft: m.composer.Value()}
		}
		return nil
	case "tab":
		if strings.TrimSpace(m.composer.Value()) != "" {
			return m.complete()
		}
		return nil
	case "ctrl+l":
		m.scroll = 0
		return nil
	}
	var cmd tea.Cmd
	m.composer, cmd = m.composer.Update(k)
	m.layout()
	return cmd
}

func (m *Model) atLastRow() bool {
	li := m.composer.LineInfo()
	return li.RowOffset >= li.Height-1
}

// historyMove browses sent messages: -1 is older, +1 newer; past the newest is the draft.
func (m *Model) historyMove(d int) {
	if len(m.history) == 0 {
		return
	}
	if m.hist == len(m.history) && d < 0 {
		m.draft = m.composer.Value()
	}
	n := m.hist + d
	if n < 0 || n > len(m.history) {
		return
	}
	m.hist = n
	if n == len(m.history) {
		m.composer.SetValue(m.draft)
	} else {
		m.composer.SetValue(m.history[n])
	}
	if d < 0 {
		m.composer.MoveToBegin()
	} else {
		m.composer.MoveToEnd()
	}
	m.layout()
}

func (m *Model) remember(text string) {
	if n := len(m.history); n == 0 || m.history[n-1] != text {
		m.history = append(m.history, text)
		if m.opt.HistoryFile != "" {
			if err := appendHistory(m.opt.HistoryFile, text, m.history); err != nil {
				m.sb.notice(warn, "%v", err)
			}
		}
		if len(m.history) > 2*historyKept {
			m.history = append([]string(nil), m.history[len(m.history)-historyKept:]...)
		}
	}
	m.hist = len(m.history)
	m.draft = ""
}

// submit sends what the composer holds, or runs it as a slash command.
func (m *Model) submit(queue bool) tea.Cmd {
	text := m.composer.Value()
	if strings.TrimSpace(text) == "" {
		return nil
	}
	m.remember(text)
	m.composer.Reset()
	m.layout()
	m.scroll = 0
	if strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "//") {
		return m.slash(text)
	}
	text = strings.TrimPrefix(text, "/") // "//x" sends "/x"
	var cmds []tea.Cmd
	if m.conv == "" && !m.creating() {
		cmds = append(cmds, m.enqueue(m.createOp(firstLine(text, 60))))
	}
	s := sent{op: m.opt.NewOp(), text: text, queue: queue && m.caps[api.CapQueue]}
	m.outbox = append(m.outbox, s)
	cmds = append(cmds, m.enqueue(m.sendOp(s)), m.startTicking())
	return tea.Batch(cmds...)
}

// creating says whether a create is queued or in flight.
func (m *Model) creating() bool {
	if m.busy && m.inflight == opCreate {
		return true
	}
	for _, o := range m.queue {
		if o.kind == opCreate {
			return true
		}
	}
	return false
}

// stop is the Stop button: messages not yet handed to the host are dropped here and given back;
// the host's Stop (a new operation per press) withdraws what it holds and interrupts the rest.
func (m *Model) stop() tea.Cmd {
	var back []string
	kept := m.queue[:0]
	for _, o := range m.queue {
		if o.kind == opApprove {
			continue // the Stop ends the wait: an answer not yet sent has nothing to answer
		}
		if o.kind == opSend || o.kind == opCreate {
			if o.kind == opSend {
				back = append(back, o.text)
				m.dropOutbox(o.sendOp)
			}
			continue
		}
		kept = append(kept, o)
	}
	m.queue = kept
	m.giveBack(back)
	if m.conv == "" && !m.busy {
		if len(back) > 0 {
			m.sb.notice(dim, "⏹ stopped before it was sent")
		}
		return nil
	}
	return m.enqueue(m.stopOp(m.opt.NewOp()))
}

func (m *Model) dropOutbox(op string) {
	for i, s := range m.outbox {
		if s.op == op {
			m.outbox = append(m.outbox[:i], m.outbox[i+1:]...)
			return
		}
	}
}

// giveBack puts withdrawn text into the composer, after what is typed.
func (m *Model) giveBack(texts []string) {
	if len(texts) == 0 {
		return
	}
	cur := m.composer.Value()
	parts := texts
	if strings.TrimSpace(cur) != "" {
		parts = append([]string{cur}, texts...)
	}
	m.composer.SetValue(strings.Join(parts, "\n"))
	m.composer.MoveToEnd()
	m.layout()
}

func (m *Model) exit() tea.Cmd {
	m.quit = true
	if m.cancel != nil {
		m.cancel()
	}
	return tea.Quit
}

func (m *Model) scrollBy(n int) {
	m.scroll += n
	if m.scroll < 0 {
		m.scroll = 0
	}
	if top := m.totalLines() - m.scrollHeight(); m.scroll > top {
		m.scroll = max(0, top)
	}
}

// events applies a delivery of events from the stream.
func (m *Model) events(msg eventsMsg) tea.Cmd {
	if msg.gen != m.gen {
		return nil
	}
	if len(msg.evs) > 0 {
		m.lost = 0
	}
	before := m.totalLinesIf(m.scroll > 0)
	for i := range msg.evs {
		m.apply(&msg.evs[i])
	}
	if m.scroll > 0 {
		m.scroll += m.totalLines() - before
	}
	var cmds []tea.Cmd
	if msg.closed {
		cmds = append(cmds, m.resubscribe())
	} else {
		cmds = append(cmds, waitEvents(msg.ch, m.gen))
	}
	if m.needSurvey {
		m.needSurvey = false
		cmds = append(cmds, m.fetchTranscript(false))
	}
	cmds = append(cmds, m.startTicking())
	return tea.Batch(cmds...)
}

// apply applies one event: live material to the scrollback, a record to the state, the status
// and the scrollback. A record at or before seq was applied already; applying twice converges.
func (m *Model) apply(ev *api.Event) {
	if ev.Live != nil {
		m.sb.liveEvent(ev.Live)
		return
	}
	if ev.Seq <= m.seq {
		return
	}
	m.seq = ev.Seq
	// While the record replays up to where the conversation stood when opened, the state it was
	// opened with stays: a replayed exchange is not a running one.
	if ev.Seq >= m.base {
		m.state = ev.State
		m.forgetAnswered()
	}
	p := decodePayload(ev.Kind, ev.Payload)
	m.meta(p, ev.Seq <= m.base)
	m.tally.take(p, m.provider, m.model)
	m.sb.record(p)
}

// meta keeps the status line's figures from the records.
func (m *Model) meta(p any, replayed bool) {
	switch b := p.(type) {
	case *record.SessionStarted:
		m.provider, m.model, m.sandbox = b.Provider, b.Model, b.Sandbox
		if b.ContextWindow > 0 {
			m.window = b.ContextWindow
		}
		if b.Title != "" {
			m.title = b.Title
		}
	case *record.SessionResumed:
		m.provider, m.model, m.sandbox = b.Provider, b.Model, b.Sandbox
		if b.ContextWindow > 0 {
			m.window = b.ContextWindow
		}
	case *record.ModelChanged:
		m.provider, m.model = b.Provider, b.Model
		if b.ContextWindow > 0 {
			m.window = b.ContextWindow
		}
	case *record.AssistantMessage:
		if b.Model != "" {
			m.model = b.Model
		}
		if u := b.Usage; u.Input+u.CacheRead+u.CacheWrite > 0 {
			m.meter.usage(u.Input + u.CacheRead + u.CacheWrite + u.Output)
			m.needSurvey = true // to learn what the usage counts beyond the messages
		}
		m.retryAt = time.Time{}
	case *record.UsageReported:
		if u := b.Usage; u.Input+u.CacheRead+u.CacheWrite > 0 {
			m.meter.usage(u.Input + u.CacheRead + u.CacheWrite + u.Output)
			m.needSurvey = true // to learn what the usage counts beyond the messages
		}
	case *record.Evicted, *record.Rewound, *record.Cleared, *record.Inherited:
		m.meter.changed()
		m.needSurvey = true // the usage no longer measures the context
	case *record.RetryScheduled:
		if replayed {
			return
		}
		m.retryAt = m.opt.Now().Add(time.Duration(b.DelayMs) * time.Millisecond)
		m.retryClass = b.Class
	case *record.TurnStarted, *record.Quiesced, *record.Cancelled, *record.Failure:
		m.retryAt = time.Time{}
	case *record.Renamed:
		m.title = b.Title
	case *record.Submission:
		if b.Op != "" || b.State != api.Accepted {
			if text, ok := m.seen(b); ok && b.State == api.Accepted && !replayed {
				if m.mine == nil {
					m.mine = map[string]string{}
				}
				m.mine[b.ID] = text
			}
		}
		switch b.State {
		case record.SubmissionAccepted, record.SubmissionDelivered, record.SubmissionHanded:
		case record.SubmissionRejected:
			// A message the host rejected (a prompt hook refused it, or it cannot fit the
			// window) comes back to the composer, to be changed and sent again.
			if text, ok := m.mine[b.ID]; ok && text != "" {
				m.giveBack([]string{text})
				m.flash = "the message was not delivered: it is back in the composer"
			}
			delete(m.mine, b.ID)
		default:
			delete(m.mine, b.ID)
		}
	}
}

// seen takes a submission out of the outbox once the stream shows it, and returns its text.
func (m *Model) seen(b *record.Submission) (string, bool) {
	for i, s := range m.outbox {
		if (b.Op != "" && s.op == b.Op) || (s.id != "" && s.id == b.ID) {
			m.outbox = append(m.outbox[:i], m.outbox[i+1:]...)
			return s.text, true
		}
	}
	return "", false
}

// tickMsg animates the working indicator and the retry countdown.
type tickMsg time.Time

const tickEvery = 120 * time.Millisecond

func (m *Model) startTicking() tea.Cmd {
	if m.ticking || !(m.working() || !m.retryAt.IsZero()) {
		if !m.working() {
			m.workingSince = time.Time{}
		}
		return nil
	}
	if m.workingSince.IsZero() {
		m.workingSince = m.opt.Now()
	}
	m.ticking = true
	return tea.Tick(tickEvery, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m *Model) tick() tea.Cmd {
	m.ticking = false
	return m.startTicking()
}
