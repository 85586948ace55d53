package fold

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/record"
)

// log is a live session in miniature: it proposes records, steps them through the fold, and
// keeps what it wrote so a test can replay it.
// tb is what the helpers need of a test: *testing.T, *testing.F and *rapid.T all have it.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

type log struct {
	t    tb
	s    *State
	recs []record.Record
}

func newLog(t tb) *log { return &log{t: t, s: New()} }

// try steps a record and keeps it if admitted.
func (l *log) try(p record.Payload) error {
	r := record.Record{Seq: l.s.Seq() + 1, Time: int64(1000 + len(l.recs)), Body: p}
	if err := l.s.Step(r); err != nil {
		return err
	}
	l.recs = append(l.recs, r)
	return nil
}

// add steps a record that must be admitted.
func (l *log) add(p record.Payload) {
	l.t.Helper()
	if err := l.try(p); err != nil {
		l.t.Fatalf("live append refused: %v", err)
	}
}

// addLine steps a record that must be admitted as the session does: as its line reads back
// (invalid UTF-8, for one, does not survive JSON), so the live fold is what a replay builds.
func (l *log) addLine(p record.Payload) {
	l.t.Helper()
	r := record.Record{Seq: l.s.Seq() + 1, Time: int64(1000 + len(l.recs)), Body: p}
	line, err := record.Encode(r)
	if err != nil {
		l.t.Fatalf("encode: %v", err)
	}
	if r, err = record.Decode(line, r.Seq); err != nil {
		l.t.Fatalf("decode: %v", err)
	}
	if err := l.s.Step(r); err != nil {
		l.t.Fatalf("live append refused: %v", err)
	}
	l.recs = append(l.recs, r)
}

func (l *log) prompt(text string) int64 {
	id := l.s.Next()
	l.add(&record.UserPrompt{Turn: id, Text: text})
	return id
}

func call(id, name, args string) record.Part {
	return record.Part{Type: record.PartToolCall, CallID: id, Name: name, Args: json.RawMessage(args)}
}

func text(s string) record.Part { return record.Part{Type: record.PartText, Text: s} }

func (l *log) reply(parts ...record.Part) int64 {
	id := l.s.Next()
	l.add(&record.AssistantMessage{Turn: id, Parts: parts, StopReason: "end_turn"})
	return id
}

func (l *log) results(outcome record.Outcome) {
	res := &record.ToolResults{}
	for _, id := range l.s.Owed() {
		res.Results = append(res.Results, record.ToolResult{CallID: id, Content: WithTrailer("out "+id, l.s.newest()), Outcome: outcome})
	}
	l.add(res)
}

// replay folds recs from scratch through encode and strict decode, as a resume would.
func replay(t tb, recs []record.Record) *State {
	t.Helper()
	s := New()
	for _, r := range recs {
		line, err := record.Encode(r)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		back, err := record.Decode(line, r.Seq)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if err := s.Step(back); err != nil {
			t.Fatalf("replay refused what the live fold admitted: %v", err)
		}
	}
	return s
}

// view is everything observable about a state, for comparing a live fold with its replay.
type view struct {
	Phase    Phase
	Seq      int64
	High     int64
	System   string
	Owed     []string
	InFlight bool
	Context  []record.Message
	Index    []Row
	Survey   Survey
	Residues []Residue
	Unclosed int64
	// Plan is what a crash would settle the log with: it shows which owed calls started and the
	// results their tool_finished events kept.
	Plan *record.ToolResults
}

func viewOf(s *State) view {
	return view{s.Phase(), s.Seq(), s.High(), s.System(), s.Owed(), s.InFlight(), s.Context(), s.Index(), s.Survey(), s.Residues(), s.Unclosed(), s.QuiescePlan(Crashed)}
}

// checkSendable asserts the provider-agnostic rules of a rendered context: every tool call is
// answered in the next message, every result answers a call of the previous message, no message
// is empty, every argument is an object, call ids are unique.
func checkSendable(msgs []record.Message) error {
	seen := map[string]bool{}
	for i, m := range msgs {
		if why := checkMessage(m); why != "" {
			return fmt.Errorf("message %d %s", i, why)
		}
		var calls []string
		for _, p := range m.Parts {
			if p.Type == record.PartToolCall {
				if seen[p.CallID] {
					return fmt.Errorf("message %d repeats call id %s", i, p.CallID)
				}
				seen[p.CallID] = true
				calls = append(calls, p.CallID)
			}
			if p.Type == record.PartToolResult {
				ok := false
				if i > 0 {
					for _, q := range msgs[i-1].Parts {
						ok = ok || (q.Type == record.PartToolCall && q.CallID == p.CallID)
					}
				}
				if !ok {
					return fmt.Errorf("message %d answers call %s, which the previous message did not make", i, p.CallID)
				}
			}
		}
		if len(calls) > 0 {
			if i+1 >= len(msgs) {
				return fmt.Errorf("message %d ends the context with unanswered calls %v", i, calls)
			}
			answered := map[string]bool{}
			for _, q := range msgs[i+1].Parts {
				if q.Type == record.PartToolResult {
					answered[q.CallID] = true
				}
			}
			for _, c := range calls {
				if !answered[c] {
					return fmt.Errorf("message %d: call %s is not answered by the next message", i, c)
				}
			}
		}
	}
	if len(msgs) > 0 && msgs[0].Role != record.User {
		return fmt.Errorf("the context opens with a %s message", msgs[0].Role)
	}
	return nil
}

func mustContain(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("admitted; want a refusal containing %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("refusal %q does not contain %q", err, want)
	}
}
