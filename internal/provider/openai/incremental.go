package openai

import (
	"encoding/json"
	"slices"

	"github.com/reinhq/rein/internal/provider"
)

// NewChatValidator returns a validator for one conversation's successive Chat Completions
// requests: each verdict is exactly ValidateChat's, and a request that repeats the last one's
// prefix costs what it adds (provider.Incremental).
func NewChatValidator() provider.Validator {
	return provider.NewIncremental(ValidateChat, "messages", beginChat)
}

// NewResponsesValidator is NewChatValidator for the Responses API: each verdict is exactly
// ValidateResponses's.
func NewResponsesValidator() provider.Validator {
	return provider.NewIncremental(ValidateResponses, "input", beginResponses)
}

// NewValidator is NewChatValidator (provider.ConversationValidator).
func (m *Chat) NewValidator() provider.Validator { return NewChatValidator() }

// NewValidator is NewResponsesValidator (provider.ConversationValidator).
func (m *Responses) NewValidator() provider.Validator { return NewResponsesValidator() }

var (
	_ provider.ConversationValidator = (*Chat)(nil)
	_ provider.ConversationValidator = (*Responses)(nil)
)

// chatSequence judges a Chat Completions request's messages one at a time: each by
// checkChatMessage, and their pairing as checkChatPairing walks it, with what each message
// changed kept so that it can be undone.
type chatSequence struct {
	n        int
	callAt   map[string]bool // call ids made
	resultAt map[string]bool // call ids answered
	open     bool            // an assistant message's calls are being answered
	owed     []string        // its calls not yet answered, in order
	undo     []chatUndo
}

// chatUndo is what one message changed in a chatSequence.
type chatUndo struct {
	open   bool
	owed   []string // owed before the message
	calls  []string // call ids the message added
	result *string  // the call id it answered
}

func beginChat(skeleton []byte) (provider.Sequence, bool) {
	var b chatBodyIn
	if json.Unmarshal(skeleton, &b) != nil || b.Model == "" || checkChatTools(&b) != nil {
		return nil, false
	}
	return &chatSequence{callAt: map[string]bool{}, resultAt: map[string]bool{}}, true
}

func (s *chatSequence) Push(elem []byte) bool {
	var m chatMessageIn
	if json.Unmarshal(elem, &m) != nil || checkChatMessage(s.n, &m) != nil {
		return false
	}
	u := chatUndo{open: s.open, owed: slices.Clone(s.owed)}
	if m.Role == "tool" {
		id := *m.ToolCallID
		k := indexOf(s.owed, id)
		if !s.open || s.resultAt[id] || k < 0 {
			return false
		}
		s.owed = slices.Delete(s.owed, k, k+1)
		s.resultAt[id] = true
		u.result = &id
	} else {
		if s.open && len(s.owed) > 0 {
			return false
		}
		s.open, s.owed = false, s.owed[:0]
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			for _, c := range m.ToolCalls {
				if s.callAt[c.ID] {
					return false
				}
				s.callAt[c.ID] = true
				u.calls = append(u.calls, c.ID)
				s.owed = append(s.owed, c.ID)
			}
			s.open = true
		}
	}
	s.undo = append(s.undo, u)
	s.n++
	return true
}

func (s *chatSequence) Pop() {
	u := s.undo[len(s.undo)-1]
	s.undo = s.undo[:len(s.undo)-1]
	s.n--
	for _, id := range u.calls {
		delete(s.callAt, id)
	}
	if u.result != nil {
		delete(s.resultAt, *u.result)
	}
	s.open, s.owed = u.open, u.owed
}

func (s *chatSequence) End() bool {
	return s.n > 0 && !(s.open && len(s.owed) > 0)
}

// respSequence judges a Responses request's input items one at a time: each by checkRespItem,
// where reasoning items stand as checkRespReasoning judges it, and the pairing of calls and
// outputs as checkRespPairing does.
type respSequence struct {
	stored     bool
	items      []respUndo
	callAt     map[string]bool
	outputAt   map[string]bool
	unanswered int // calls without an output yet
}

// respUndo is what one item changed in a respSequence, and whether it is a reasoning item.
type respUndo struct {
	reasoning bool
	call      *string // the call id it made
	output    *string // the call id it answered
}

func beginResponses(skeleton []byte) (provider.Sequence, bool) {
	var b respBodyIn
	if json.Unmarshal(skeleton, &b) != nil || b.Model == "" || checkRespTools(&b) != nil || b.Input.Kind() != "array" {
		return nil, false
	}
	return &respSequence{stored: b.Store == nil || *b.Store, callAt: map[string]bool{}, outputAt: map[string]bool{}}, true
}

func (s *respSequence) Push(elem []byte) bool {
	var it respItemIn
	if json.Unmarshal(elem, &it) != nil || checkRespItem(len(s.items), &it) != nil {
		return false
	}
	if n := len(s.items); n > 0 && s.items[n-1].reasoning {
		typ := it.Type
		if typ == "" && it.Role != "" {
			typ = "message"
		}
		ok := typ == "function_call" || typ == "message" && it.Role == "assistant"
		if !ok || s.stored && it.ID == "" {
			return false
		}
	}
	u := respUndo{reasoning: it.Type == "reasoning"}
	if u.reasoning && !s.stored && (it.EncryptedContent == nil || *it.EncryptedContent == "") {
		return false
	}
	switch it.Type {
	case "function_call":
		id := *it.CallID
		if s.callAt[id] {
			return false
		}
		s.callAt[id] = true
		s.unanswered++
		u.call = &id
	case "function_call_output":
		id := *it.CallID
		if s.outputAt[id] || !s.callAt[id] {
			return false
		}
		s.outputAt[id] = true
		s.unanswered--
		u.output = &id
	}
	s.items = append(s.items, u)
	return true
}

func (s *respSequence) Pop() {
	u := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	if u.call != nil {
		delete(s.callAt, *u.call)
		s.unanswered--
	}
	if u.output != nil {
		delete(s.outputAt, *u.output)
		s.unanswered++
	}
}

func (s *respSequence) End() bool {
	n := len(s.items)
	return n > 0 && !s.items[n-1].reasoning && s.unanswered == 0
}
