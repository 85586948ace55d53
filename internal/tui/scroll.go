package tui

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/record"
)

// The scrollback is a projection of the conversation's event stream: every record in seq order,
// plus the live material (streamed text, tool progress) of the exchange in hand. A recorded
// assistant message replaces what was streamed for it, so a reconnect that lost live material
// still ends right, and a resume that replays the record draws the same screen.

type entryKind int

const (
	userEntry entryKind = iota
	assistantEntry
	thinkingEntry
	toolEntry
	residueEntry
	noticeEntry
	blockEntry // preformatted lines: the survey, the session list, help
)

// tone colours a notice.
type tone int

const (
	dim tone = iota
	warn
	bad
	plain
)

// entry is one item of the scrollback.
type entry struct {
	kind entryKind
	turn int64
	text string
	note string // a user entry's note ("steering", "imported"), a residue's authority
	tone tone
	from int64 // a residue's span
	to   int64
	call *toolCall
	gone bool // withdrawn or evicted: no longer in the context

	ver   int // bumped on every change; the render cache keys on it
	cache rendered
}

// toolCall is a tool call with what is known of its fate.
type toolCall struct {
	id, name string
	args     string // the call's one-line summary
	rawArgs  string
	outcome  string // "" (pending), "running", or a record.Outcome
	dur      time.Duration
	hasDur   bool
	exit     *int
	output   string
	// live is the newest of the call's output as it runs (live.go); liveBytes counts all of it.
	live      string
	liveBytes int
}

// live is the material of the exchange in hand that is not recorded yet.
type live struct {
	text     strings.Builder
	thinking strings.Builder
	calls    []*toolCall
	status   string
	ver      int
	cache    rendered
	done     settled
}

// settled is the streamed text's settled part: whole markdown blocks, each ended by a blank line
// outside a code fence, each rendered once. Only the block being written re-renders as text
// arrives, so a delta costs the same at the end of a long reply as at its start.
type settled struct {
	end   int  // text[:end] is rendered into lines (the newline at end is the seam)
	scan  int  // text[:scan] is scanned for block ends
	fence bool // the scan is inside a code fence
	width int
	lines []string // the blocks of text[:end] at width, joined
}

// advance renders, one by one, the blocks of text that have ended since the last call. Each block
// is cut where the whole text would cut it, so advancing in steps draws what advancing at once does.
func (d *settled) advance(text string, width int) {
	if width != d.width || len(text) < d.scan {
		*d = settled{width: width}
	}
	for {
		i := strings.IndexByte(text[d.scan:], '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(text[d.scan : d.scan+i])
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			d.fence = !d.fence
		} else if line == "" && !d.fence && d.scan > d.end {
			boundary := d.scan + i
			d.lines = joinBlocks(d.lines, renderBlock(text[d.end:boundary], width))
			d.end = boundary + 1
		}
		d.scan += i + 1
	}
}

func (l *live) active() bool {
	return l.text.Len() > 0 || l.thinking.Len() > 0 || len(l.calls) > 0 || l.status != ""
}

func (l *live) reset() {
	l.done = settled{}
	l.text.Reset()
	l.thinking.Reset()
	l.calls = nil
	l.status = ""
	l.ver++
}

// scrollback holds the conversation as shown.
type scrollback struct {
	entries []*entry
	calls   map[string]*entry
	live    live
	turn    int64 // the newest turn seen
	plan    record.Plan
}

func (s *scrollback) reset() {
	s.plan = record.Plan{}
	s.entries = nil
	s.calls = map[string]*entry{}
	s.live.reset()
	s.turn = 0
}

func (s *scrollback) add(e *entry) *entry {
	s.entries = append(s.entries, e)
	return e
}

func (s *scrollback) notice(t tone, format string, args ...any) {
	s.add(&entry{kind: noticeEntry, tone: t, text: fmt.Sprintf(format, args...)})
}

func (s *scrollback) block(lines ...string) {
	s.add(&entry{kind: blockEntry, text: strings.Join(lines, "\n")})
}

// record applies one record to the scrollback.
func (s *scrollback) record(p any) {
	if s.calls == nil {
		s.calls = map[string]*entry{}
	}
	if b, ok := p.(record.Payload); ok {
		s.plan.Apply(b)
	}
	if !s.protocol(p) && !s.holdEvent(p) {
		s.event(p)
	}
}

// protocol applies a record of the context (and the tool events that go with its calls), and
// says whether p was one.
func (s *scrollback) protocol(p any) bool {
	switch b := p.(type) {
	case *record.UserPrompt:
		s.turn = b.Turn
		text := b.Text
		for _, a := range b.Attachments {
			text += "\n📎 " + a.Name
		}
		s.add(&entry{kind: userEntry, turn: b.Turn, text: text})
	case *record.Steering:
		if b.Source == "" || b.Source == "user" {
			s.add(&entry{kind: userEntry, turn: s.turn, text: b.Text, note: "steering"})
			return true
		}
		s.notice(dim, "rein %s: %s", b.Source, firstLine(b.Text, 200))
	case *record.Import:
		s.turn = b.Turn
		s.imported(b)
	case *record.Inherited:
		if b.High > s.turn {
			s.turn = b.High
		}
		s.notice(dim, "forked from %s: %d turns inherited, up to turn %d", b.Parent, len(b.Rows), b.At)
	case *record.AssistantMessage:
		s.live.reset()
		s.turn = b.Turn
		s.assistant(b)
	case *record.ToolStarted:
		if e := s.calls[b.CallID]; e != nil && e.call.outcome == "" {
			e.call.outcome = "running"
			e.ver++
		}
	case *record.ToolFinished:
		if e := s.calls[b.CallID]; e != nil {
			e.call.dur, e.call.hasDur = time.Duration(b.DurationMs)*time.Millisecond, true
			e.call.exit = b.ExitCode
			if b.Outcome != "" {
				e.call.outcome = string(b.Outcome)
			}
			e.ver++
		}
	case *record.ToolResults:
		for _, r := range b.Results {
			e := s.calls[r.CallID]
			if e == nil {
				continue
			}
			e.call.outcome = string(r.Outcome)
			if e.call.outcome == "" {
				e.call.outcome = map[bool]string{true: string(record.Failed), false: string(record.OK)}[r.IsError]
			}
			e.call.output = stripTrailer(r.Content)
			e.call.live = ""
			e.ver++
		}
	case *record.Evicted:
		s.mark(b.From, b.To)
		s.add(&entry{kind: residueEntry, from: b.From, to: b.To, text: b.Note, note: string(b.By)})
	case *record.Rewound:
		s.mark(b.Anchor, 1<<62)
		s.notice(dim, "rewound: turns from %d on left the context (still readable in the transcript)", b.Anchor)
	case *record.Cleared:
		s.mark(0, 1<<62)
		s.notice(dim, "cleared: every turn left the context (still readable in the transcript)")
	default:
		return false
	}
	return true
}

// event applies an event record: the exchange's progress, failures, the host's decisions.
func (s *scrollback) event(p any) {
	switch b := p.(type) {
	case *record.ProviderError:
		status := ""
		if b.Status != 0 {
			status = strconv.Itoa(b.Status) + " "
		}
		s.notice(warn, "provider error %s(%s): %s", status, b.Class, firstLine(b.Message, 300))
	case *record.RetryScheduled:
		s.notice(dim, "retrying in %s (attempt %d, %s)", roundDelay(time.Duration(b.DelayMs)*time.Millisecond), b.Attempt+1, b.Class)
	case *record.Cancelled:
		s.live.reset() // the quiesced record that follows says it
	case *record.Quiesced:
		s.live.reset()
		if n := len(b.Answered); n > 0 {
			s.notice(dim, "answered %d owed tool call%s truthfully (%s)", n, plural(n), b.Reason)
		}
		switch b.Reason {
		case record.QuiescedReplied, "":
		case record.QuiescedCancelled:
			s.notice(dim, "⏹ stopped: the session is settled")
		default:
			s.notice(warn, "the exchange ended: %s", b.Reason)
		}
	case *record.Failure:
		s.live.reset()
		s.notice(bad, "%s", b.Message)
	case *record.Repaired:
		s.notice(dim, "rein repaired the reply of turn %d: %s", b.Turn, b.What)
	case *record.Nudge:
		s.notice(dim, "rein nudged the model (%s)", b.Reason)
	case *record.Pressure:
		s.notice(dim, "context pressure (%s line): %s of %s tokens", b.Line, compact(b.Used), compact(b.Window))
	case *record.ModelChanged:
		s.notice(dim, "model: %s %s", b.Provider, b.Model)
	case *record.Approval:
		name := b.Name
		if e := s.calls[b.CallID]; e != nil && e.call != nil {
			name = e.call.name
		}
		switch b.State {
		case record.ApprovalAllowed:
			if b.Scope == record.ScopeConversation {
				s.notice(dim, "✓ allowed %s, and for this conversation: %s", name, strings.Join(b.Rules, " · "))
				break
			}
			s.notice(dim, "✓ allowed %s", name)
		case record.ApprovalDenied:
			s.notice(warn, "✗ denied %s", name)
		}
	case *record.Hold:
		s.notice(dim, "the agent is on hold")
	case *record.Released:
		s.notice(dim, "the hold was released")
	case *record.Closed:
		s.notice(dim, "this conversation was closed")
	case *record.Backend:
		s.notice(dim, "this conversation runs in %s", b.Name)
	case *record.ExternalSession:
		s.notice(dim, "%s %s · session %s", b.Program, b.Version, b.ID)
	case *record.ExternalItem:
		s.externalItem(b)
	case *record.SessionResumed:
		s.notice(dim, "resumed · %s %s", b.Provider, b.Model)
	case *record.Submission:
		switch b.State {
		case "withdrawn":
			s.notice(dim, "a waiting message was withdrawn before it started")
		case "rejected":
			why := b.Detail
			if why == "" {
				why = b.Reason
			}
			s.notice(warn, "a message was not delivered: %s", why)
		}
	case *record.Stop:
		// The Stop's effects show as their own records (cancelled, withdrawn submissions).
	}
}

// externalItem shows what an external program did; its final reply comes as an import.
func (s *scrollback) externalItem(b *record.ExternalItem) {
	switch b.Item {
	case "text", "thinking":
		s.notice(dim, "· %s", firstLine(b.Text, 300))
	case "tool_call", "command":
		s.notice(dim, "⏺ %s %s", b.Name, firstLine(b.Text, 200))
	case "tool_result", "file_change":
		tone := dim
		if b.Status == "failed" {
			tone = warn
		}
		s.notice(tone, "  ⎿ %s %s", b.Status, firstLine(b.Text, 200))
	case "retry", "error":
		s.notice(warn, "%s: %s", b.Item, firstLine(b.Text, 300))
	}
}

func (s *scrollback) imported(b *record.Import) {
	var parts []string
	for _, p := range b.Message.Parts {
		if p.Type == record.PartText {
			parts = append(parts, p.Text)
		}
	}
	text := strings.Join(parts, "\n\n")
	if from, to, note, ok := parseResidue(text); ok {
		s.add(&entry{kind: residueEntry, turn: b.Turn, from: from, to: to, text: note})
		return
	}
	kind := userEntry
	if b.Message.Role == record.Assistant {
		kind = assistantEntry
	}
	s.add(&entry{kind: kind, turn: b.Turn, text: text, note: "imported (" + b.Source + ")"})
}

func (s *scrollback) assistant(b *record.AssistantMessage) {
	var last *entry
	for _, p := range b.Parts {
		switch p.Type {
		case record.PartText:
			if p.Text == "" {
				continue
			}
			if last != nil && last.kind == assistantEntry {
				last.text += "\n\n" + p.Text
				last.ver++
				continue
			}
			last = s.add(&entry{kind: assistantEntry, turn: b.Turn, text: p.Text})
		case record.PartThinking:
			text := p.Text
			if text == "" {
				text = "(reasoning the provider keeps encrypted)"
			}
			last = s.add(&entry{kind: thinkingEntry, turn: b.Turn, text: text})
		case record.PartRedacted:
			last = s.add(&entry{kind: thinkingEntry, turn: b.Turn, text: "(thinking, redacted by the provider)"})
		case record.PartServerTool:
			// The provider's own web search: what it searched for, and what it found.
			if p.Text != "" {
				last = s.add(&entry{kind: noticeEntry, tone: dim, turn: b.Turn, text: "⌕ " + p.Text})
			}
		case record.PartToolCall:
			c := &toolCall{id: p.CallID, name: p.Name, rawArgs: string(p.Args), args: summarize(p.Name, string(p.Args))}
			last = s.add(&entry{kind: toolEntry, turn: b.Turn, call: c})
			s.calls[p.CallID] = last
		}
	}
	switch b.StopReason {
	case "max_tokens":
		s.notice(dim, "(the reply was cut off at the token limit)")
	case "cancelled":
		s.notice(dim, "(cut short by Stop: what was said so far is kept)")
	}
}

// liveEvent applies one live event.
func (s *scrollback) liveEvent(l *api.Live) {
	lv := &s.live
	switch l.Kind {
	case "text":
		lv.text.WriteString(l.Text)
		lv.status = ""
	case "thinking":
		lv.thinking.WriteString(l.Text)
	case "tool_call":
		lv.calls = append(lv.calls, &toolCall{id: l.CallID, name: l.Name})
	case "tool_args":
		for _, c := range lv.calls {
			if c.id == l.CallID {
				c.rawArgs += l.Text
				c.args = summarize(c.name, c.rawArgs)
			}
		}
	case "tool_start":
		if e := s.calls[l.CallID]; e != nil && (e.call.outcome == "" || e.call.outcome == "running") {
			e.call.outcome = "running"
			e.ver++
		}
		return
	case "tool_output":
		if e := s.calls[l.CallID]; e != nil {
			e.call.addLive(l.Text)
			e.ver++
		}
		return
	case "tool_end":
		if e := s.calls[l.CallID]; e != nil && l.Text != "" {
			e.call.outcome = l.Text
			e.ver++
		}
		return
	case "restart":
		lv.reset()
		s.notice(dim, "the stream failed after output began; retrying from the start")
		return
	case "status":
		lv.status = l.Text
	default:
		return
	}
	lv.ver++
}

// mark dims the entries of turns [from, to]: they left the context.
func (s *scrollback) mark(from, to int64) {
	for _, e := range s.entries {
		if e.turn >= from && e.turn <= to && e.turn > 0 && !e.gone {
			e.gone = true
			e.ver++
		}
	}
}

// summarize says in one line what a tool call does.
func summarize(name, args string) string {
	var a map[string]any
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return firstLine(args, 160)
	}
	var s string
	switch {
	case str(a["description"]) != "" && str(a["command"]) != "":
		s = str(a["command"])
	case str(a["command"]) != "":
		s = str(a["command"])
	case str(a["path"]) != "":
		s = str(a["path"])
	case str(a["pattern"]) != "":
		s = str(a["pattern"])
	case name == "context" && str(a["op"]) == "evict":
		s = fmt.Sprintf("evict %v–%v: %s", a["from"], a["to"], str(a["note"]))
	case str(a["op"]) != "":
		s = str(a["op"])
		if t, ok := a["turns"]; ok {
			b, _ := json.Marshal(t)
			s += " " + string(b)
		}
	default:
		b, _ := json.Marshal(a)
		s = string(b)
	}
	return firstLine(s, 160)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// firstLine is s's first line, clipped to n bytes on a rune boundary.
func firstLine(s string, n int) string {
	more := false
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s, more = s[:i], true
	}
	if len(s) > n {
		for n > 0 && !utf8Start(s[n]) {
			n--
		}
		s, more = s[:n], true
	}
	if more {
		s += "…"
	}
	return s
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// stripTrailer drops the "TURN: <id>" line every tool result ends with.
func stripTrailer(s string) string {
	s = strings.TrimRight(s, " \n")
	if i := strings.LastIndex(s, "\nTURN: "); i >= 0 && !strings.Contains(s[i+1:], "\n") {
		return strings.TrimRight(s[:i], " \n")
	}
	if strings.HasPrefix(s, "TURN: ") && !strings.Contains(s, "\n") {
		return ""
	}
	return s
}

// parseResidue reads a residue's sentence (fold.ResidueText) back into its span and note.
func parseResidue(text string) (from, to int64, note string, ok bool) {
	if !strings.HasPrefix(text, "[rein: turn") {
		return 0, 0, "", false
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(text, "[rein: turns "), "[rein: turn ")
	i := strings.IndexByte(rest, ' ')
	if i < 0 {
		return 0, 0, "", false
	}
	span := rest[:i]
	a, b, found := strings.Cut(span, "–")
	if !found {
		b = a
	}
	f, err1 := strconv.ParseInt(a, 10, 64)
	t, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, "", false
	}
	_, n, found := strings.Cut(rest, "Note: \"")
	if !found {
		return 0, 0, "", false
	}
	if j := strings.Index(n, "\". Read them back"); j >= 0 {
		n = n[:j]
	}
	return f, t, n, true
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// compact writes a token count as 950, 12.3k or 1.2M.
func compact(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 100_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	case n < 1_000_000:
		return strconv.FormatInt(n/1000, 10) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
}

// roundDelay writes a delay as 250ms, 1.5s or 12s.
func roundDelay(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < 10*time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return d.Round(time.Second).String()
}
