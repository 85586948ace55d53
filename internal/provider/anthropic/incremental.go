package anthropic

import (
	"encoding/json"
	"strings"
	"unicode"

	"github.com/reinhq/rein/internal/provider"
)

// NewValidator returns a validator for one conversation's successive requests: each verdict is
// exactly Validate's, and a request that repeats the last one's prefix costs what it adds
// (provider.Incremental).
func NewValidator() provider.Validator {
	return provider.NewIncremental(Validate, "messages", beginSequence)
}

// NewValidator is the package's NewValidator (provider.ConversationValidator).
func (c *Client) NewValidator() provider.Validator { return NewValidator() }

var _ provider.ConversationValidator = (*Client)(nil)

// sequence judges a request's messages one at a time by the rules Validate judges them by:
// each message's schema (validateSchema), and, in the order they arrive, the rules
// validateConversation and validateFinal relate messages by. A rule about the message after
// another (an assistant message's tool calls answered by the next) is judged when that message
// arrives; a rule about the last message, at End.
type sequence struct {
	thinking    bool            // thinking is enabled
	breakpoints int             // blocks and tools with cache_control, so far
	msgs        []seqMessage    // what the rules need of each message pushed
	seen        map[string]bool // tool_use ids across the messages pushed
}

// seqMessage is what the relating rules need of one message.
type seqMessage struct {
	user        bool
	blocks      int
	first       string   // the first block's type
	trailing    bool     // the last block is text ending in whitespace
	uses        []string // its tool_use ids
	breakpoints int
}

// beginSequence judges every rule outside the messages, on a body whose messages are empty, as
// Validate does (validateTop but for the messages, and the breakpoints outside them).
func beginSequence(skeleton []byte) (provider.Sequence, bool) {
	var req vRequest
	if json.Unmarshal(skeleton, &req) != nil {
		return nil, false
	}
	if req.Model == nil || req.MaxTokens == nil || *req.MaxTokens < 1 || req.Messages == nil || validateSettings(&req) != nil {
		return nil, false
	}
	return &sequence{
		thinking:    req.Thinking != nil && req.Thinking.Type == "enabled",
		breakpoints: countBreakpoints(&req, nil),
		seen:        map[string]bool{},
	}, true
}

func (s *sequence) Push(elem []byte) bool {
	var m vMessage
	if json.Unmarshal(elem, &m) != nil {
		return false
	}
	i := len(s.msgs)
	blocks, v := parseContent(i, m)
	if v != nil || validateSchema(i, m.Role, blocks) != nil {
		return false
	}
	cur := seqMessage{user: m.Role == "user", blocks: len(blocks)}
	var prev *seqMessage
	if i > 0 {
		prev = &s.msgs[i-1]
	}
	switch {
	case prev == nil && !cur.user:
		return false // the first message is the user's
	case prev != nil && prev.blocks == 0:
		return false // only the final assistant message may be empty
	case len(blocks) == 0 && cur.user:
		return false
	}
	if len(blocks) > 0 {
		cur.first = blocks[0].Type
		last := blocks[len(blocks)-1]
		cur.trailing = last.Type == "text" && strings.TrimRightFunc(*last.Text, unicode.IsSpace) != *last.Text
	}
	texts, blank := 0, 0
	var asked, answered map[string]bool // the previous message's tool_use ids; those answered here
	if cur.user && prev != nil && !prev.user && len(prev.uses) > 0 {
		asked = make(map[string]bool, len(prev.uses))
		for _, id := range prev.uses {
			asked[id] = true
		}
		answered = make(map[string]bool, len(prev.uses))
	}
	leading := 0 // tool_results answering the previous message before any other block
	opening := true
	for j := range blocks {
		b := &blocks[j]
		if len(b.CacheControl) > 0 && string(b.CacheControl) != "null" {
			cur.breakpoints++
		}
		if b.Type != "tool_result" {
			opening = false
		}
		switch b.Type {
		case "text":
			if *b.Text == "" {
				return false
			}
			texts++
			if strings.TrimFunc(*b.Text, unicode.IsSpace) == "" {
				blank++
			}
		case "tool_use":
			if cur.user || s.seen[*b.ID] {
				return false
			}
			s.seen[*b.ID] = true
			cur.uses = append(cur.uses, *b.ID)
		case "tool_result":
			if !cur.user || !asked[*b.ToolUseID] || answered[*b.ToolUseID] {
				return false
			}
			answered[*b.ToolUseID] = true
			if opening {
				leading++
			}
		}
	}
	if texts > 0 && texts == blank {
		return false
	}
	// The previous message's tool calls are each answered at the start of this one: the results
	// are distinct answers to those calls, so counting the leading ones is enough.
	if prev != nil && !prev.user && leading != len(prev.uses) {
		return false
	}
	s.breakpoints += cur.breakpoints
	s.msgs = append(s.msgs, cur)
	return true
}

func (s *sequence) Pop() {
	m := s.msgs[len(s.msgs)-1]
	for _, id := range m.uses {
		delete(s.seen, id)
	}
	s.breakpoints -= m.breakpoints
	s.msgs = s.msgs[:len(s.msgs)-1]
}

func (s *sequence) End() bool {
	last := len(s.msgs) - 1
	if last < 0 || s.breakpoints > maxCacheBreakpoints {
		return false
	}
	if !s.msgs[last].user && s.msgs[last].trailing {
		return false
	}
	if !s.thinking {
		return true
	}
	a := last
	for a >= 0 && s.msgs[a].user {
		a--
	}
	if a < 0 || a == last || s.msgs[a].blocks == 0 || s.msgs[a+1].blocks == 0 || s.msgs[a+1].first != "tool_result" {
		return true
	}
	return s.msgs[a].first == "thinking" || s.msgs[a].first == "redacted_thinking"
}
