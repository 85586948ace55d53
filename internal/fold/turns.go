package fold

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/reinhq/rein/internal/record"
)

// judgeNewTurn checks the id a record opens a turn under: one more than the highest ever.
func (s *State) judgeNewTurn(seq int64, what string, id int64) error {
	switch {
	case id <= s.high:
		return refuse(seq, "names turn %d, which the log had already moved past (the next turn is %d)", id, s.high+1)
	case id != s.high+1:
		return refuse(seq, "names turn %d, skipping ahead: the next turn is %d", id, s.high+1)
	}
	if s.phase == AwaitingToolResults {
		return refuse(seq, "is foreign protocol data: %s arrived while tool results were owed for turn %d (%s); was record.jsonl edited by hand?", what, s.newest(), strings.Join(s.owed, ", "))
	}
	return nil
}

func (s *State) judgeUserPrompt(seq int64, b *record.UserPrompt) error {
	if err := s.judgeNewTurn(seq, "a prompt", b.Turn); err != nil {
		return err
	}
	if strings.TrimSpace(b.Text) == "" && len(b.Attachments) == 0 {
		return refuse(seq, "is an empty prompt: a prompt needs text or an attachment")
	}
	if err := s.judgeDelivery(seq, b.Submission, record.KindUserPrompt); err != nil {
		return err
	}
	for i, a := range b.Attachments {
		if a.Text == "" && a.Data == "" {
			return refuse(seq, "has attachment %d (%q) with no content", i+1, a.Name)
		}
	}
	return nil
}

func (s *State) judgeSteering(seq int64, b *record.Steering) error {
	if strings.TrimSpace(b.Text) == "" {
		return refuse(seq, "is empty steering: steering needs text")
	}
	if err := s.judgeDelivery(seq, b.Submission, record.KindSteering); err != nil {
		return err
	}
	switch {
	case s.phase.awaitingAssistant():
		return nil
	case s.phase == ReadyForUser && (b.Source == "nudge" || b.Source == "hook") && s.turns.len() > 0 && !s.turns.at(s.turns.len()-1).Withdrawn:
		return nil
	case s.phase == AwaitingToolResults:
		return refuse(seq, "is foreign protocol data: steering arrived while tool results were owed for turn %d; was record.jsonl edited by hand?", s.newest())
	}
	return refuse(seq, "is foreign protocol data: steering arrived while the session was ready for your next prompt; was record.jsonl edited by hand?")
}

func (s *State) judgeImport(seq int64, b *record.Import) error {
	if err := s.judgeNewTurn(seq, "an imported turn", b.Turn); err != nil {
		return err
	}
	m := b.Message
	if m.Role != record.User && m.Role != record.Assistant {
		return refuse(seq, "imports a message with role %q: only user and assistant messages enter the context", m.Role)
	}
	for _, p := range m.Parts {
		if p.Type == record.PartToolCall || p.Type == record.PartToolResult {
			return refuse(seq, "imports a %s part: an imported turn can neither owe nor answer a tool call", p.Type)
		}
	}
	if err := checkMessage(m); err != "" {
		return refuse(seq, "imports a message that %s", err)
	}
	if m.Role == record.Assistant && len(s.Frontier()) == 0 {
		return refuse(seq, "imports an assistant message into an empty context: the context opens with a user message")
	}
	return nil
}

func (s *State) judgeAssistant(seq int64, b *record.AssistantMessage) error {
	if !s.phase.awaitingAssistant() {
		if s.phase == AwaitingToolResults {
			return refuse(seq, "is foreign protocol data: an assistant message arrived while tool results were owed for turn %d; was record.jsonl edited by hand?", s.newest())
		}
		return refuse(seq, "is foreign protocol data: an assistant message arrived while the session was ready for your next prompt; was record.jsonl edited by hand?")
	}
	if err := s.judgeNewTurn(seq, "an assistant message", b.Turn); err != nil {
		return err
	}
	m := record.Message{Role: record.Assistant, Parts: b.Parts}
	if err := checkMessage(m); err != "" {
		return refuse(seq, "is an assistant message that %s", err)
	}
	ids := map[string]bool{}
	for _, p := range b.Parts {
		switch p.Type {
		case record.PartToolResult, record.PartImage:
			return refuse(seq, "is an assistant message with a %s part, which only a user message may carry", p.Type)
		case record.PartToolCall:
			if s.usedCall(p.CallID) || ids[p.CallID] {
				return refuse(seq, "repeats tool-call id %q: call ids are unique within a session", p.CallID)
			}
			ids[p.CallID] = true
		}
	}
	return nil
}

// checkMessage returns why a message could not be sent to every provider, or "".
func checkMessage(m record.Message) string {
	if len(m.Parts) == 0 {
		return "has no content"
	}
	substantive := false
	for i, p := range m.Parts {
		switch p.Type {
		case record.PartText:
			if p.Text == "" {
				return fmt.Sprintf("has an empty text part (part %d)", i+1)
			}
			if strings.TrimSpace(p.Text) != "" {
				substantive = true
			}
		case record.PartThinking:
			if m.Role != record.Assistant {
				return "carries thinking in a user message"
			}
		case record.PartRedacted:
			if m.Role != record.Assistant || p.Data == "" {
				return "carries redacted thinking it cannot send back"
			}
		case record.PartToolCall:
			if p.CallID == "" || !validCallID(p.CallID) {
				return fmt.Sprintf("has a tool call with id %q: ids are non-empty letters, digits, _ and -", p.CallID)
			}
			if !validToolName(p.Name) {
				return fmt.Sprintf("calls a tool named %q: names are 1–64 letters, digits, _ and -", p.Name)
			}
			if !isObject(p.Args) {
				return fmt.Sprintf("calls %s with arguments that are not a JSON object", p.Name)
			}
			substantive = true
		case record.PartToolResult:
			if p.CallID == "" {
				return "has a tool result with no call id"
			}
			if why := checkImages(p.Images); why != "" {
				return "has a tool result with " + why
			}
			substantive = true
		case record.PartImage:
			if p.Data == "" || p.MediaType == "" {
				return "has an image with no data or media type"
			}
			substantive = true
		case record.PartServerTool:
			if why := checkServerTool(m.Role, p); why != "" {
				return why
			}
		default:
			return fmt.Sprintf("has a part of unknown type %q", p.Type)
		}
	}
	if !substantive {
		return "has no text, tool call or attachment: an empty message is refused by providers"
	}
	return ""
}

func isObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return json.Valid(raw)
		}
		return false
	}
	return false
}

func validCallID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func validToolName(n string) bool {
	return len(n) <= 64 && validCallID(n)
}

func (s *State) judgeToolResults(seq int64, b *record.ToolResults) error {
	if s.phase != AwaitingToolResults {
		return refuse(seq, "is foreign protocol data: tool results arrived while %s; was record.jsonl edited by hand?", s.phaseWords())
	}
	owed := map[string]bool{}
	for _, id := range s.owed {
		owed[id] = true
	}
	got := map[string]bool{}
	for _, r := range b.Results {
		switch {
		case got[r.CallID]:
			return refuse(seq, "answers tool call %q twice", r.CallID)
		case !owed[r.CallID]:
			return refuse(seq, "answers tool call %q, which no call of turn %d asked for", r.CallID, s.newest())
		case !r.Outcome.Valid():
			return refuse(seq, "gives tool call %q the outcome %q, which is not one of ok, error, denied, not_executed, interrupted, timed_out", r.CallID, r.Outcome)
		case r.Content == "":
			return refuse(seq, "answers tool call %q with empty content: an empty result is refused by providers", r.CallID)
		}
		if why := checkImages(r.Images); why != "" {
			return refuse(seq, "answers tool call %q with %s", r.CallID, why)
		}
		got[r.CallID] = true
	}
	var missing []string
	for _, id := range s.owed {
		if !got[id] {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return refuse(seq, "leaves tool calls unanswered (%s): results answer the whole batch at once", strings.Join(missing, ", "))
	}
	return nil
}

func (s *State) phaseWords() string {
	switch s.phase {
	case ReadyForUser:
		return "the session was ready for your next prompt"
	case AwaitingToolResults:
		return fmt.Sprintf("tool results were owed for turn %d", s.newest())
	}
	return "a reply was due"
}

// addTurn appends a new row and marks the edit (the provider's last usage no longer measures
// the context).
func (s *State) addTurn(t Turn) {
	t.Under = -1
	t.Bytes, t.Discount = messagesSize(t.Messages), imageDiscount(t.Messages)
	if !t.Withdrawn {
		s.front.push(Item{From: t.ID, To: t.ID, Residue: -1, Turn: s.turns.len()})
	}
	s.turns.push(t)
	if t.ID > s.high {
		s.high = t.ID
	}
}

func (s *State) applyUserPrompt(seq int64, b *record.UserPrompt) {
	m := PromptMessage(b)
	s.addTurn(Turn{ID: b.Turn, Role: record.User, Kind: Own, Label: label(b.Text), Messages: []record.Message{m}, Seqs: []int64{seq}})
	s.phase = AwaitingAssistantAfterUser
	s.takeUp()
	s.inFlight = true
	s.deliver(b.Submission, seq)
}

// PromptMessage renders a prompt as the user message it is sent as: its text, then each
// attachment (text inline under its name, images as image parts).
func PromptMessage(b *record.UserPrompt) record.Message {
	m := record.Message{Role: record.User}
	if b.Text != "" {
		m.Parts = append(m.Parts, record.Part{Type: record.PartText, Text: b.Text})
	}
	for _, a := range b.Attachments {
		if a.Text != "" {
			m.Parts = append(m.Parts, record.Part{Type: record.PartText, Text: "Attached " + a.Name + ":\n" + a.Text})
		} else {
			m.Parts = append(m.Parts, record.Part{Type: record.PartImage, MediaType: a.MediaType, Data: a.Data})
		}
	}
	return m
}

func (s *State) applySteering(seq int64, b *record.Steering) {
	t := s.turns.ptr(s.turns.len() - 1)
	t.Messages = appendUserText(t.Messages, b.Text)
	t.Seqs = append(t.Seqs[:len(t.Seqs):len(t.Seqs)], seq)
	t.Bytes, t.Discount = messagesSize(t.Messages), imageDiscount(t.Messages)
	s.phase = AwaitingAssistantAfterUser
	s.deliver(b.Submission, seq)
}

// appendUserText extends a turn's messages with a user-voice line: a text part on its last
// message when that is a user message, else a new user message. It never modifies msgs in place.
func appendUserText(msgs []record.Message, text string) []record.Message {
	out := make([]record.Message, len(msgs), len(msgs)+1)
	copy(out, msgs)
	if n := len(out); n > 0 && out[n-1].Role == record.User {
		last := out[n-1]
		parts := make([]record.Part, len(last.Parts), len(last.Parts)+1)
		copy(parts, last.Parts)
		last.Parts = append(parts, record.Part{Type: record.PartText, Text: text})
		out[n-1] = last
		return out
	}
	return append(out, record.Message{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: text}}})
}

func (s *State) applyImport(seq int64, b *record.Import) {
	s.addTurn(Turn{ID: b.Turn, Role: b.Message.Role, Kind: Imported, Label: messageLabel(b.Message), Messages: []record.Message{b.Message}, Seqs: []int64{seq}})
	s.phase = AwaitingAssistantAfterUser
	if !s.inFlight {
		s.takeUp()
	}
	s.inFlight = true
}

func (s *State) applyAssistant(seq int64, b *record.AssistantMessage) {
	m := record.Message{Role: record.Assistant, Parts: b.Parts}
	s.addTurn(Turn{ID: b.Turn, Role: record.Assistant, Kind: Own, Label: messageLabel(m), Messages: []record.Message{m}, Seqs: []int64{seq}})
	s.owed = nil
	s.started = table[string, bool]{}
	s.finished = table[string, record.ToolResult]{}
	for _, p := range b.Parts {
		if p.Type == record.PartToolCall {
			s.owed = append(s.owed, p.CallID)
			s.calls.put(keyOfCall(p.CallID))
		}
	}
	if len(s.owed) > 0 {
		s.phase = AwaitingToolResults
	} else {
		s.phase = ReadyForUser
	}
	s.meta.LastUsage, s.meta.UsageStale = b.Usage, false
}

func (s *State) applyToolResults(seq int64, b *record.ToolResults) {
	t := s.turns.ptr(s.turns.len() - 1)
	m := ResultsMessage(b)
	msgs := make([]record.Message, len(t.Messages), len(t.Messages)+1)
	copy(msgs, t.Messages)
	t.Messages = append(msgs, m)
	t.Seqs = append(t.Seqs[:len(t.Seqs):len(t.Seqs)], seq)
	t.Bytes, t.Discount = messagesSize(t.Messages), imageDiscount(t.Messages)
	s.owed = nil
	s.started = table[string, bool]{}
	s.finished = table[string, record.ToolResult]{}
	s.unpark()
	s.phase = AwaitingAssistantAfterToolResults
}

// ResultsMessage renders a tool batch's results as the user message they are sent as.
func ResultsMessage(b *record.ToolResults) record.Message {
	m := record.Message{Role: record.User, Parts: make([]record.Part, 0, len(b.Results))}
	for _, r := range b.Results {
		m.Parts = append(m.Parts, record.Part{Type: record.PartToolResult, CallID: r.CallID, Text: r.Content, IsError: r.IsError, Outcome: r.Outcome, Images: r.Images})
	}
	return m
}

// CallName returns the tool name of a call the newest turn made (an owed call), or "".
func (s *State) CallName(callID string) string {
	if n := s.turns.len(); n > 0 {
		for _, m := range s.turns.at(n - 1).Messages {
			for _, p := range m.Parts {
				if p.Type == record.PartToolCall && p.CallID == callID {
					return p.Name
				}
			}
		}
	}
	return ""
}

// callKey stands for a tool call id in the session's set of them: 128 bits of keyed hash, 16 bytes
// however long the id, where a set of the ids themselves kept every id of a long session. Two ids
// share a key by chance alone, with odds of about n²/2¹²⁹ for n calls, and no input can aim at it:
// the keys' seeds are drawn afresh by every process.
type callKey [2]uint64

var callSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func keyOfCall(id string) callKey {
	return callKey{maphash.String(callSeeds[0], id), maphash.String(callSeeds[1], id)}
}

// usedCall reports whether a call with this id was recorded in this session.
func (s *State) usedCall(id string) bool { return s.calls.has(keyOfCall(id)) }

const labelMax = 50

// label is the opening line of a text, clipped to about 50 characters.
//
// The label is a copy, never a slice of text: a turn keeps its label for the session's life, long
// after it has left the context and released its messages, and a slice would keep the whole text
// (a pasted file, a long prompt) alive with it.
func label(text string) string {
	whole := len(text)
	text = strings.TrimSpace(text)
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = strings.TrimSpace(text[:i])
	}
	l := clip(text, labelMax)
	if len(l) < whole && len(text) <= labelMax { // clip copies what it cuts
		l = strings.Clone(l)
	}
	return l
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// messageLabel labels a message: its first non-empty text line, else its first tool call's
// description (or name).
func messageLabel(m record.Message) string {
	for _, p := range m.Parts {
		if p.Type == record.PartText && strings.TrimSpace(p.Text) != "" {
			return label(p.Text)
		}
	}
	for _, p := range m.Parts {
		if p.Type == record.PartToolCall {
			var a struct {
				Description string `json:"description"`
			}
			if json.Unmarshal(p.Args, &a) == nil && strings.TrimSpace(a.Description) != "" {
				return label(a.Description)
			}
			return p.Name
		}
	}
	for _, p := range m.Parts {
		if p.Type == record.PartThinking {
			return label(p.Text)
		}
	}
	return ""
}

// TurnMessages rebuilds a turn's messages from the protocol records that made it (its opening
// record, then any steering and tool results), by the same functions the fold applies them with.
// It is how a departed turn is read back from the record.
func TurnMessages(bodies []record.Payload) []record.Message {
	var msgs []record.Message
	for _, b := range bodies {
		switch b := b.(type) {
		case *record.UserPrompt:
			msgs = append(msgs, PromptMessage(b))
		case *record.Import:
			msgs = append(msgs, b.Message)
		case *record.AssistantMessage:
			msgs = append(msgs, record.Message{Role: record.Assistant, Parts: b.Parts})
		case *record.Steering:
			msgs = appendUserText(msgs, b.Text)
		case *record.ToolResults:
			msgs = append(msgs, ResultsMessage(b))
		}
	}
	return msgs
}
