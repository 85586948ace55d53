package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// Printer prints one session's exchange as it happens, for rein run: the model's text as it
// streams, each tool call and a preview of its result, and what the harness did (a retry, a
// repair, an eviction) in human lines, the text to out and the rest to errw; or, asJSON, one JSON
// object a line on out, each record as it was recorded and the live text events.
type Printer struct {
	mu      sync.Mutex
	out     io.Writer
	err     io.Writer
	json    bool
	midLine bool
	// attemptText: text of the reply being streamed was printed since its attempt began.
	attemptText bool
	// shownLive holds the calls of the batch running whose output was printed as it came.
	shownLive map[string]bool
	// plan follows the session's todo calls; each change is printed (plan.go).
	plan record.Plan
}

// NewPrinter returns a Printer writing to out and errw.
func NewPrinter(out, errw io.Writer, asJSON bool) *Printer {
	if !asJSON {
		out, errw = Safe(out), Safe(errw) // JSON escapes every control character itself
	}
	return &Printer{out: out, err: errw, json: asJSON}
}

// Follow prints every update of s from now on, on a goroutine of its own, until stop, which
// returns once the last update taken is printed.
func (p *Printer) Follow(s *session.Session) (stop func()) {
	updates, unsubscribe := s.Subscribe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for u := range updates {
			p.update(s, u)
		}
	}()
	return func() {
		unsubscribe()
		wg.Wait()
	}
}

// emit prints one JSON object whose keys keep the order given: "type" first, always.
func (p *Printer) emit(kv ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		v, err := json.Marshal(kv[i+1])
		if err != nil {
			v, _ = json.Marshal(err.Error())
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString("}\n")
	_, _ = p.out.Write(b.Bytes())
}

// Session says which session the exchange is written to.
func (p *Printer) Session(s *session.Session) {
	if p.json {
		p.emit("type", "session", "id", s.ID(), "record", s.Path())
		return
	}
	fmt.Fprintf(p.err, "rein: session %s\n", s.ID())
}

func (p *Printer) line(w io.Writer, format string, args ...any) {
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
	}
	fmt.Fprintf(w, format, args...)
}

func (p *Printer) update(s *session.Session, u session.Update) {
	if p.json {
		if u.Live != nil {
			switch u.Live.Kind {
			case "text", "thinking", "restart", "status":
				p.emit("type", u.Live.Kind, "text", u.Live.Text)
			case "tool_output":
				p.emit("type", u.Live.Kind, "call_id", u.Live.CallID, "text", u.Live.Text)
			}
			return
		}
		p.emit("type", "record", "seq", u.Record.Seq, "kind", u.Record.Kind(), "payload", u.Record.Body)
		p.planRecord(u.Record.Body)
		return
	}
	if u.Live != nil {
		switch u.Live.Kind {
		case "text":
			fmt.Fprint(p.out, u.Live.Text)
			p.midLine = !strings.HasSuffix(u.Live.Text, "\n")
			p.attemptText = p.attemptText || u.Live.Text != ""
		case "restart":
			// What this attempt printed is not what the model said: the record will hold only
			// the retried reply. Say so where the text went, not only on stderr.
			if p.attemptText {
				p.line(p.out, "[rein: the text above was discarded: the stream failed and the reply is being retried]\n")
				p.attemptText = false
			}
			p.line(p.err, "rein: the stream failed after output began; retrying from the start\n")
		case "tool_start":
			p.line(p.out, "⏺ %s\n", callSummary(u.Live.Name, u.Live.Text))
		case "tool_output":
			p.liveOutput(u.Live.CallID, u.Live.Text)
		}
		return
	}
	defer p.planRecord(u.Record.Body)
	switch b := u.Record.Body.(type) {
	case *record.TurnStarted:
		p.attemptText = false
	case *record.AssistantMessage:
		p.attemptText = false
		if p.midLine {
			fmt.Fprintln(p.out)
			p.midLine = false
		}
		p.searches(b) // plan.go
	case *record.ToolResults:
		for _, r := range b.Results {
			if p.shownLive[r.CallID] {
				// Its output was shown as it came: say only how it ended.
				p.line(p.out, "  ⎿ %s\n", endWord(r.Outcome, r.Content))
				continue
			}
			p.line(p.out, "  ⎿ %s%s\n", outcomeWord(r.Outcome), preview(r.Content))
		}
		p.shownLive = nil
	case *record.Import:
		if b.Source == "child" && len(b.Message.Parts) > 0 {
			head, _, _ := strings.Cut(b.Message.Parts[0].Text, "\n")
			p.line(p.err, "%s\n", head)
		}
	case *record.Repaired:
		p.line(p.err, "rein: repaired the reply: %s\n", b.What)
	case *record.ProviderError:
		if b.Status != 0 {
			p.line(p.err, "rein: provider error: %s (%d): %s\n", b.Class, b.Status, b.Message)
		} else {
			p.line(p.err, "rein: provider error: %s: %s\n", b.Class, b.Message)
		}
	case *record.RetryScheduled:
		p.line(p.err, "rein: retrying in %s (attempt %d)\n", (time.Duration(b.DelayMs) * time.Millisecond).String(), b.Attempt+1)
	case *record.Quiesced:
		if len(b.Answered) > 0 {
			p.line(p.err, "rein: answered %d owed tool call(s) (%s)\n", len(b.Answered), b.Reason)
		}
	case *record.Failure:
		p.line(p.err, "rein: %s\n", b.Message)
	case *record.Checkpoint:
		if b.Error != "" {
			p.line(p.err, "rein: no checkpoint of the files at turn %d: %s\n", b.Turn, b.Error)
		}
	case *record.Hook, *record.Hold, *record.Released:
		p.control(b)
	case *record.Pressure:
		if b.Limit > 0 {
			p.line(p.err, "rein: the provider refused the context as too long; this session now keeps to its limit of %d tokens\n", b.Limit)
		}
	case *record.Evicted:
		if b.By == record.ByHarness {
			p.line(p.err, "rein: evicted turns %d–%d to stay within the context window (they stay readable: rein show, or the transcript tool)\n", b.From, b.To)
		}
	}
}

// Result says how the exchange ended; kept false says that the session was then removed (a new
// session whose prompt was refused before anything of it was recorded).
func (p *Printer) Result(s *session.Session, res agent.Outcome, kept bool) {
	if p.json {
		kv := []any{"type", "result", "reason", res.Reason, "session", s.ID()}
		if res.Err != nil {
			kv = append(kv, "error", res.Err.Error())
		}
		if !kept {
			kv = append(kv, "kept", false)
		}
		if len(res.Withdrawn) > 0 {
			kv = append(kv, "withdrawn", res.Withdrawn)
		}
		p.emit(kv...)
		return
	}
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
	}
	if res.Reason == fold.Cancelled {
		fmt.Fprintf(p.err, "rein: stopped; the session is settled and resumable: rein resume %s\n", s.ID())
	}
}

// Standing says where a session settled without an exchange stands.
func (p *Printer) Standing(s *session.Session) {
	st := s.Snapshot()
	phase, turns := st.Phase().String(), st.NumTurns()
	if p.json {
		p.emit("type", "result", "reason", "settled", "session", s.ID(), "phase", phase, "turns", turns)
		return
	}
	fmt.Fprintf(p.out, "session %s is settled: %d turns, %s. Continue with: rein resume %s \"<prompt>\"\n", s.ID(), turns, phase, s.ID())
}

func callSummary(name, args string) string {
	var a map[string]any
	_ = json.Unmarshal([]byte(args), &a)
	for _, k := range []string{"description", "command", "path", "pattern", "op"} {
		if v, ok := a[k].(string); ok && v != "" {
			return fmt.Sprintf("%s(%s)", name, clip(v, 80))
		}
	}
	return name
}

func outcomeWord(o record.Outcome) string {
	if o == record.OK {
		return ""
	}
	return string(o) + ": "
}

func preview(content string) string {
	content = strings.TrimSpace(content)
	if i := strings.LastIndex(content, "\nTURN: "); i >= 0 {
		content = strings.TrimSpace(content[:i])
	} else if strings.HasPrefix(content, "TURN: ") {
		content = ""
	}
	lines := strings.Split(content, "\n")
	if len(lines) > 3 {
		return strings.Join(lines[:3], "\n    ") + fmt.Sprintf("\n    … %d more lines", len(lines)-3)
	}
	if content == "" {
		return "(no output)"
	}
	return strings.Join(lines, "\n    ")
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
