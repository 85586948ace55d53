package importer

import (
	"fmt"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// Unanswered is the result an imported call gets when its source recorded none.
const Unanswered = "interrupted: the source session ended before this call's result was recorded; its effects are unknown"

// Write records c into sess, a session just started for it (its session_started naming the
// origin), under system, and reports what it did. Every record goes through the session, so the
// fold judges each as it judges a live one; each change to what the source held is recorded as a
// repaired event keeping the original.
func Write(sess *session.Session, c *Conversation, system string) (Report, error) {
	w := &writer{sess: sess, notes: &c.Notes}
	if err := sess.Append(&record.System{Text: system}); err != nil {
		return Report{}, err
	}
	var from, to int64 = 0, -1
	if len(c.Earlier) > 0 {
		from = sess.Snapshot().Next()
		if err := w.items(c.Earlier); err != nil {
			return Report{}, err
		}
		if err := w.end(); err != nil {
			return Report{}, err
		}
		to = sess.Snapshot().High()
	}
	if err := w.items(c.Items); err != nil {
		return Report{}, err
	}
	if err := w.end(); err != nil {
		return Report{}, err
	}
	// The history from before the compaction leaves the context once the live branch follows it
	// (an eviction never takes the turn in hand, so it is made last). Where the fold refuses it
	// (the live branch added no turn), the history stays in the context, and the report says so.
	if to >= from {
		note := fmt.Sprintf("turns %d–%d are the source session's history from before its compaction, imported with --with-history; the transcript tool reads them", from, to)
		if _, err := sess.Snapshot().CheckEviction(from, to, note); err != nil {
			c.Notes.repair("history before the compaction left in the context (it could not be evicted: " + err.Error() + ")")
		} else if err := sess.Append(&record.Evicted{From: from, To: to, Note: note, By: record.ByHarness}); err != nil {
			return Report{}, err
		}
	}
	if err := sess.Sync(); err != nil {
		return Report{}, err
	}
	return Report{Session: sess.ID(), Turns: sess.Snapshot().NumTurns(), Calls: w.calls, Notes: c.Notes}, nil
}

type writer struct {
	sess    *session.Session
	notes   *Notes
	calls   int
	minted  int
	known   []string    // the call ids this import has used
	renamed [][2]string // a source id and the id minted for it
}

func (w *writer) items(items []Item) error {
	for _, it := range items {
		var err error
		switch it.Kind {
		case Prompt:
			err = w.prompt(&record.UserPrompt{Text: it.Text})
		case Note:
			err = w.note(it.Text)
		case Assistant:
			err = w.assistant(it)
		case Results:
			err = w.results(it.Results)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// end closes the exchange the last prompt opened, as a live one closes.
func (w *writer) end() error {
	if err := w.settle(); err != nil {
		return err
	}
	if !w.sess.Snapshot().InFlight() {
		return nil
	}
	return w.sess.Append(&record.Quiesced{Reason: record.QuiescedImported})
}

// settle answers the calls still owed: their source recorded no result.
func (w *writer) settle() error {
	st := w.sess.Snapshot()
	if st.IsReady() {
		return nil
	}
	var rs []record.ToolResult
	for _, id := range st.Owed() {
		rs = append(rs, record.ToolResult{CallID: id, Content: Unanswered, IsError: true, Outcome: record.Interrupted})
		w.notes.repair("call with no result answered interrupted")
	}
	return w.sess.Append(&record.ToolResults{Results: rs})
}

func (w *writer) prompt(p *record.UserPrompt) error {
	if err := w.end(); err != nil {
		return err
	}
	st := w.sess.Snapshot()
	if st.Phase() == fold.AwaitingAssistantAfterUser {
		// Two user turns in a row (an assistant reply dropped between them): the later one
		// extends the turn, as a message typed while the agent worked does.
		return w.sess.Append(&record.Steering{Text: p.Text, Source: "user"})
	}
	p.Turn = st.Next()
	return w.sess.Append(p)
}

// note records harness-authored text the model saw as an import: never the person's voice.
func (w *writer) note(text string) error {
	if err := w.settle(); err != nil {
		return err
	}
	st := w.sess.Snapshot()
	return w.sess.Append(&record.Import{Turn: st.Next(), Source: "import", Message: record.Message{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: text}}}})
}

func (w *writer) assistant(it Item) error {
	st := w.sess.Snapshot()
	if !st.IsReady() {
		// An assistant message while calls are owed: the source went on without their results.
		if err := w.settle(); err != nil {
			return err
		}
		st = w.sess.Snapshot()
	}
	if ph := st.Phase(); ph != fold.AwaitingAssistantAfterUser && ph != fold.AwaitingAssistantAfterToolResults {
		// An assistant message with no turn before it to answer (a prompt dropped, or two replies
		// in a row): a note says so, in the harness's voice, so the message has a turn to follow.
		w.notes.repair("note added before an assistant message that followed no prompt")
		if err := w.note("[rein import: the source session has an assistant message here with no prompt before it]"); err != nil {
			return err
		}
		st = w.sess.Snapshot()
	}
	turn := st.Next()
	parts := w.ids(it.Parts)
	parts, repairs, verdict := st.Admit(turn, fold.Draft{Parts: parts})
	if verdict == fold.Nothing {
		w.notes.repair("empty assistant message dropped")
		return nil
	}
	var ps []record.Payload
	for _, r := range it.Repairs {
		r.Turn = turn
		ps = append(ps, &r)
	}
	for _, r := range repairs {
		w.notes.repair("admission: " + r.What)
		ps = append(ps, &record.Repaired{Turn: turn, What: r.What, Original: r.Original})
	}
	for _, p := range parts {
		if p.Type == record.PartToolCall {
			w.calls++
		}
	}
	ps = append(ps, &record.AssistantMessage{Turn: turn, Parts: parts, StopReason: "end_turn", Model: it.Model})
	return w.sess.Append(ps...)
}

// ids mints an id for a call with none, or with one already used in this session.
func (w *writer) ids(parts []record.Part) []record.Part {
	st := w.sess.Snapshot()
	out := make([]record.Part, len(parts))
	copy(out, parts)
	seen := map[string]bool{}
	for i, p := range out {
		if p.Type != record.PartToolCall {
			continue
		}
		if p.CallID == "" || seen[p.CallID] || st.Started(p.CallID) || w.used(p.CallID) {
			w.minted++
			old := p.CallID
			out[i].CallID = fmt.Sprintf("imported_call_%d", w.minted)
			w.notes.repair("missing or duplicate call id minted")
			w.renamed = append(w.renamed, [2]string{old, out[i].CallID})
		}
		seen[out[i].CallID] = true
		w.known = append(w.known, out[i].CallID)
	}
	return out
}

func (w *writer) used(id string) bool {
	for _, k := range w.known {
		if k == id {
			return true
		}
	}
	return false
}

// results answers the owed calls with the source's results, matched by id; a result for no owed
// call is left out, an owed call with none is answered interrupted.
func (w *writer) results(rs []Result) error {
	st := w.sess.Snapshot()
	owed := st.Owed()
	if len(owed) == 0 {
		w.notes.repair("tool result with no call before it dropped")
		return nil
	}
	byID := map[string]Result{}
	for _, r := range rs {
		id := r.CallID
		for _, rn := range w.renamed {
			if rn[0] == id && rn[0] != "" {
				id = rn[1]
			}
		}
		if _, dup := byID[id]; dup {
			w.notes.repair("duplicate tool result dropped")
			continue
		}
		byID[id] = r
	}
	var out []record.ToolResult
	matched := 0
	for _, id := range owed {
		r, ok := byID[id]
		if !ok {
			out = append(out, record.ToolResult{CallID: id, Content: Unanswered, IsError: true, Outcome: record.Interrupted})
			w.notes.repair("call with no result answered interrupted")
			continue
		}
		matched++
		outcome := record.OK
		if r.IsError {
			outcome = record.Failed
		}
		content := r.Content
		if content == "" {
			content = "(the tool's output was empty)"
		}
		out = append(out, record.ToolResult{CallID: id, Content: content, IsError: r.IsError, Outcome: outcome})
	}
	if extra := len(byID) - matched; extra > 0 {
		for i := 0; i < extra; i++ {
			w.notes.repair("tool result for no owed call dropped")
		}
	}
	return w.sess.Append(&record.ToolResults{Results: out})
}
