package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/external"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// External runs a conversation's turns in another agent program (Claude Code, Codex) instead of
// the provider loop. The exchange is the same to everything above the agent — the prompt is
// committed by Begin, Stop is ctx ending, Continue quiesces however the turn ended — and the
// record keeps what rein owns of it:
//
//   - external_session when the program names its session (or a new one), so the next prompt
//     resumes it, after a restart too;
//   - an external_item event for each thing the program did;
//   - at the turn's end, the program's final reply as an import (Source the program's kind,
//     External its session): a turn of the harness's, so that the context stays coherent for a
//     later fork onto a model rein drives itself;
//   - a failure event when the program failed, then the usual quiesced.
//
// Messages a person sends while the program works are not delivered into its turn: they are
// handed back when the exchange quiesces and taken up as the next prompt.
type External struct {
	Backend external.Backend
	// Turn is what each turn is run with: the workspace, the model, rein's permission mode and the
	// program's environment. Prompt and Resume are filled in per turn.
	Turn external.Turn
	// Approver puts the program's permission requests to the person (permission mode ask): the
	// host's, so its clients show them. Nil answers every request deny.
	Approver tool.Approver
}

// continueExternal runs the exchange's turn in the external program.
func (a *Agent) continueExternal(ctx context.Context) (string, error) {
	x := a.cfg.External
	st := a.sess.Snapshot()
	t := x.Turn
	t.Prompt = promptText(st)
	if m := st.Meta().External; m.Program == x.Backend.Kind() {
		t.Resume = m.Session
	}
	sink := &externalSink{a: a, kind: x.Backend.Kind(), approver: x.Approver, known: st.Meta().External}
	res := x.Backend.Turn(ctx, t, sink)
	if t.Resume != "" && res.Status == external.StatusFailed && errors.Is(res.Err, external.ErrSessionGone) && sink.err == nil {
		// The program no longer has the conversation's session (its files gone, another
		// machine): a conversation must not fail for ever on that. The turn starts a new session,
		// told what was said so far as the record has it, and the record says so.
		note := fmt.Sprintf("%s could not resume session %s (%v): this turn starts a new session, given the conversation so far as rein recorded it", x.Backend.Kind(), t.Resume, res.Err)
		if err := sink.Item(external.Item{Kind: external.ItemError, Text: note}); err != nil {
			return fold.Aborted, err
		}
		t.Resume, t.Prompt = "", retold(st)+t.Prompt
		res = x.Backend.Turn(ctx, t, sink)
	}
	if sink.err != nil && res.Status != external.StatusFailed {
		// The record could not be written: the exchange ends on that, whatever the program did.
		return fold.Aborted, sink.err
	}
	if res.Session != "" && res.Session != sink.known.Session {
		if err := sink.Started(res.Session, sink.known.Version); err != nil {
			return fold.Aborted, err
		}
	}
	// The reply is what the program said: a completed turn's answer, or what an interrupted one
	// had said (DESIGN §6.7). A failed turn's last words may be the program's own error text,
	// not a reply: the failure says them.
	if reply := res.Reply; strings.TrimSpace(reply) != "" && res.Status != external.StatusFailed {
		imp := &record.Import{Turn: a.sess.Snapshot().Next(), Source: x.Backend.Kind(), External: res.Session,
			Message: record.Message{Role: record.Assistant, Parts: []record.Part{{Type: record.PartText, Text: reply}}}}
		if err := a.sess.Commit(imp); err != nil {
			return fold.Aborted, err
		}
	}
	switch res.Status {
	case external.StatusCompleted:
		return fold.Replied, nil
	case external.StatusInterrupted:
		return fold.Cancelled, nil
	}
	err := res.Err
	if err == nil {
		err = fmt.Errorf("%s failed and said nothing of why", x.Backend.Kind())
	}
	if ferr := a.sess.Append(&record.Failure{Message: err.Error()}); ferr != nil {
		return fold.Aborted, errors.Join(err, ferr)
	}
	return fold.Aborted, err
}

// promptText is what the exchange's prompt says: the user turn Begin committed, its text and
// the texts of its attachments.
func promptText(st *fold.State) string {
	t, ok := st.Turn(st.Newest())
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, m := range t.Messages {
		for _, p := range m.Parts {
			if p.Type == record.PartText && p.Text != "" {
				if b.Len() > 0 {
					b.WriteString("\n\n")
				}
				b.WriteString(p.Text)
			}
		}
	}
	return b.String()
}

// retoldLimit is the most of an earlier conversation retold to a new session, its newest part kept.
const retoldLimit = 64 << 10

// retold is the conversation before the turn in hand, as its context holds it, for a program that
// lost its session: each message's text under who said it, the oldest cut when it is long.
func retold(st *fold.State) string {
	msgs := st.Context()
	if len(msgs) > 0 {
		msgs = msgs[:len(msgs)-1] // the prompt in hand, which follows
	}
	var b strings.Builder
	for _, m := range msgs {
		who := "The person"
		if m.Role == record.Assistant {
			who = "You"
		}
		for _, p := range m.Parts {
			if p.Type == record.PartText && strings.TrimSpace(p.Text) != "" {
				fmt.Fprintf(&b, "%s: %s\n\n", who, p.Text)
			}
		}
	}
	if b.Len() == 0 {
		return ""
	}
	told := b.String()
	cut := ""
	if len(told) > retoldLimit {
		at := len(told) - retoldLimit
		for at < len(told) && !utf8.RuneStart(told[at]) {
			at++
		}
		told, cut = told[at:], " (its beginning cut)"
	}
	return "[rein: this conversation's earlier session could not be resumed. What was said before, as rein recorded it" + cut + ":]\n\n" +
		told + "[rein: end of the earlier conversation. The new message follows.]\n\n"
}

// externalSink records what the program reports, as it reports it.
type externalSink struct {
	a        *Agent
	kind     string
	approver tool.Approver
	known    fold.External // the session the record names
	err      error         // the first write that failed
}

func (s *externalSink) fail(err error) error {
	if s.err == nil {
		s.err = err
	}
	return err
}

// Started records the program's session when the record does not already name it (synced: a
// crash right after still resumes it).
func (s *externalSink) Started(id, version string) error {
	if id == "" || (id == s.known.Session && version == s.known.Version && s.known.Program == s.kind) {
		return nil
	}
	if err := s.a.sess.Commit(&record.ExternalSession{Program: s.kind, ID: id, Version: version}); err != nil {
		return s.fail(err)
	}
	s.known = fold.External{Program: s.kind, Session: id, Version: version}
	return nil
}

// Item records one thing the program did and shows it to the conversation's watchers.
func (s *externalSink) Item(it external.Item) error {
	if err := s.a.sess.Append(&record.ExternalItem{Item: it.Kind, ID: it.ID, Name: it.Name, Text: it.Text, Status: it.Status, Raw: it.Raw}); err != nil {
		return s.fail(err)
	}
	switch it.Kind {
	case external.ItemText:
		s.a.sess.Publish(session.Live{Kind: "text", Text: it.Text})
	case external.ItemRetry, external.ItemError:
		s.a.sess.Publish(session.Live{Kind: "status", Text: it.Text})
	}
	return nil
}

// Approve puts the request to the person through the host's approver; a wait a Stop or the
// turn's end cuts short, or any error, answers deny.
func (s *externalSink) Approve(ctx context.Context, req external.Approval) bool {
	if s.approver == nil || ctx.Err() != nil {
		return false
	}
	args := req.Input
	if len(args) == 0 {
		args = []byte(fmt.Sprintf("%q", req.Summary))
	}
	ok, err := s.approver.Approve(ctx, tool.Call{ID: req.ID, Name: req.Tool, Args: args})
	return ok && err == nil && ctx.Err() == nil
}
