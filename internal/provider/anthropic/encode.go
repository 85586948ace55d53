package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// DefaultMaxTokens is the max_tokens sent when a request leaves it at 0; the API requires one.
const DefaultMaxTokens = 8192

// The wire shapes of a Messages API request. appendRequest writes them by hand in field order;
// the json tags say what encoding/json would write, and a test holds the two byte-identical.
type (
	wireRequest struct {
		Model     string        `json:"model"`
		MaxTokens int           `json:"max_tokens"`
		System    []wireBlock   `json:"system,omitempty"`
		Messages  []wireMessage `json:"messages"`
		Tools     []wireTool    `json:"tools,omitempty"`
		Thinking  *wireThinking `json:"thinking,omitempty"`
		Stream    bool          `json:"stream"`
	}
	wireMessage struct {
		Role    string      `json:"role"`
		Content []wireBlock `json:"content"`
	}
	// wireBlock is every content block type in one struct; each type sets only its own fields.
	wireBlock struct {
		Type      string          `json:"type"`
		Text      *string         `json:"text,omitempty"`
		Thinking  *string         `json:"thinking,omitempty"`
		Signature string          `json:"signature,omitempty"`
		Data      string          `json:"data,omitempty"`
		Source    *wireSource     `json:"source,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
		ToolUseID string          `json:"tool_use_id,omitempty"`
		Content   *string         `json:"content,omitempty"`
		// Blocks is a tool_result's content as a list (its text, then its images), written in
		// Content's place by appendBlocks (wire.go); encoding/json does not see it.
		Blocks []wireBlock `json:"-"`
		// Raw is a block sent exactly as it was received (a server tool's, websearch.go): written
		// whole in the block's place by appendBlocks; encoding/json does not see it.
		Raw          json.RawMessage   `json:"-"`
		IsError      bool              `json:"is_error,omitempty"`
		CacheControl *wireCacheControl `json:"cache_control,omitempty"`
	}
	wireSource struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	}
	wireCacheControl struct {
		Type string `json:"type"`
	}
	// wireTool is a custom tool (name, description, input_schema) or a client tool type
	// Anthropic defines (type and name alone).
	wireTool struct {
		Type string `json:"type,omitempty"`
		// Raw is a server tool's definition (web search), written whole in the tool's place.
		Raw         json.RawMessage `json:"-"`
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema,omitempty"`
	}
	wireThinking struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	}
)

var ephemeral = &wireCacheControl{Type: "ephemeral"}

// Encode renders a neutral request as the body of a streaming Messages API request. The same
// request always yields the same bytes.
//
// What it sends, and why:
//   - max_tokens is DefaultMaxTokens when the request leaves it at 0 (raised above the thinking
//     budget when one is asked for); the system prompt is one text block marked for caching, as is
//     the last block of each of the last two messages (DESIGN §5).
//   - Messages are sent as written, consecutive same-role messages included (the API merges them).
//   - Thinking without a signature cannot be sent back and is dropped; empty text blocks are
//     dropped; whitespace-only text blocks are dropped from a message none of whose text is more
//     than whitespace, which the API refuses. An assistant message left with nothing is dropped; a
//     user message never is (Validate then names what is wrong).
//   - A final assistant message's trailing whitespace is trimmed (DESIGN §6.6).
//
// Encode fails only on input no request could carry: an unknown part type or tool arguments or a
// schema that are not JSON. Everything else is judged by Validate.
func Encode(req provider.Request) ([]byte, error) {
	if body, ok := encodeStreaming(req); ok {
		return body, nil
	}
	return encodeWhole(req)
}

// encodeWhole is Encode by way of the whole request's wire shapes (build).
func encodeWhole(req provider.Request) ([]byte, error) {
	w, err := build(req)
	if err != nil {
		return nil, err
	}
	return appendRequest(make([]byte, 0, sizeHint(w)), w)
}

// memoFormat names this encoder's entries in a provider.Memo.
const memoFormat = "anthropic"

// heldBack is how many of a request's last messages (those that become wire messages) Encode
// builds as wire shapes: the final-message trim and the cache breakpoints on the last two touch
// no others.
const heldBack = 3

// encodeStreaming is Encode writing the messages before the last heldBack straight to the body,
// each through one reused block buffer, rather than building the wire shapes of a whole request
// of thousands of messages first; the last are built whole (build), where the rules about how a
// request ends apply. The bytes are encodeWhole's (TestEncodeStreamingIsWhole). It declines (false)
// a request too short to gain and any request that fails to encode, for encodeWhole to report
// the failure exactly as it always has.
func encodeStreaming(req provider.Request) ([]byte, bool) {
	var scratch []wireBlock
	cut, kept := len(req.Messages), 0
	for cut > 0 && kept < heldBack {
		m := req.Messages[cut-1]
		blocks, err := encodeParts(scratch[:0], cut-1, m)
		if err != nil {
			return nil, false
		}
		scratch = blocks
		cut--
		if len(blocks) > 0 || m.Role != record.Assistant {
			kept++
		}
	}
	if cut == 0 {
		return nil, false
	}
	last := req
	last.Messages = req.Messages[cut:]
	w, err := build(last)
	if err != nil || len(w.Messages) < 2 {
		return nil, false
	}
	// The messages the last request sent the same come from the memo, as they were.
	memo := req.Memo.Start(memoFormat, req.Messages[:cut])
	run, n := memo.Run()
	rest := req
	rest.Messages = req.Messages[memo.Same():]
	dst := appendHead(req.Memo.Buffer(len(run)+requestSizeHint(rest)), w)
	runStart := len(dst)
	dst = append(dst, run...)
	for i := memo.Same(); i < cut; i++ {
		m := req.Messages[i]
		blocks, err := encodeParts(scratch[:0], i, m)
		if err != nil {
			return nil, false
		}
		scratch = blocks
		if len(blocks) > 0 || m.Role != record.Assistant {
			if dst, err = appendMessage(dst, n, &wireMessage{Role: string(m.Role), Content: blocks}); err != nil {
				return nil, false
			}
			n++
		}
		memo.Mark(len(dst)-runStart, n)
	}
	memo.Finish(dst[runStart:])
	for i := range w.Messages {
		if dst, err = appendMessage(dst, n, &w.Messages[i]); err != nil {
			return nil, false
		}
		n++
	}
	dst, err = appendTail(dst, w)
	return dst, err == nil
}

// build renders req as wire shapes, applying the rules Encode describes.
func build(req provider.Request) (*wireRequest, error) {
	w := &wireRequest{Model: req.Model, MaxTokens: req.MaxTokens, Stream: true}
	if w.MaxTokens <= 0 {
		w.MaxTokens = DefaultMaxTokens
		if req.Thinking >= w.MaxTokens {
			w.MaxTokens = req.Thinking + DefaultMaxTokens
		}
	}
	if req.System != "" {
		w.System = []wireBlock{{Type: "text", Text: &req.System, CacheControl: ephemeral}}
	}
	for i, t := range req.Tools {
		if t.Type != "" {
			// A tool type Anthropic defines: the model knows its input.
			w.Tools = append(w.Tools, wireTool{Type: t.Type, Name: t.Name})
			continue
		}
		schema := t.Schema
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		} else if !json.Valid(schema) {
			return nil, fmt.Errorf("encode tools.%d (%s): input schema is not JSON", i, t.Name)
		}
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if req.WebSearch {
		w.Tools = append(w.Tools, wireTool{Raw: webSearchTool})
	}
	if req.Thinking > 0 {
		w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: req.Thinking}
	}
	w.Messages = make([]wireMessage, 0, len(req.Messages))
	parts := 0
	for _, m := range req.Messages {
		parts += len(m.Parts)
	}
	pool := make([]wireBlock, 0, parts) // every message's blocks, in one allocation
	for i, m := range req.Messages {
		blocks, err := encodeParts(pool[len(pool):len(pool):len(pool)+len(m.Parts)], i, m)
		pool = pool[:len(pool)+len(blocks)]
		if err != nil {
			return nil, err
		}
		if len(blocks) == 0 && m.Role == record.Assistant {
			continue
		}
		w.Messages = append(w.Messages, wireMessage{Role: string(m.Role), Content: blocks})
	}
	trimFinal(w)
	for i := max(0, len(w.Messages)-2); i < len(w.Messages); i++ {
		markLast(w.Messages[i].Content)
	}
	return w, nil
}

// encodeParts renders one message's parts as content blocks, appended to blocks, which has room
// for them all.
func encodeParts(blocks []wireBlock, i int, m record.Message) ([]wireBlock, error) {
	hasText := false // a text part with something other than whitespace
	for _, p := range m.Parts {
		if p.Type == record.PartText && strings.TrimFunc(p.Text, unicode.IsSpace) != "" {
			hasText = true
		}
	}
	var blank []wireBlock // whitespace-only text, kept aside in case a user message has nothing else
	for j := range m.Parts {
		p := &m.Parts[j] // blocks point into the request, which Encode never changes
		switch p.Type {
		case record.PartText:
			if p.Text == "" {
				continue
			}
			b := wireBlock{Type: "text", Text: &p.Text}
			if !hasText {
				blank = append(blank, b)
				continue
			}
			blocks = append(blocks, b)
		case record.PartThinking:
			if p.Signature == "" {
				continue // unsigned thinking (another provider's) cannot be sent back
			}
			blocks = append(blocks, wireBlock{Type: "thinking", Thinking: &p.Text, Signature: p.Signature})
		case record.PartRedacted:
			blocks = append(blocks, wireBlock{Type: "redacted_thinking", Data: p.Data})
		case record.PartImage:
			blocks = append(blocks, wireBlock{Type: "image", Source: &wireSource{Type: "base64", MediaType: p.MediaType, Data: p.Data}})
		case record.PartToolCall:
			args := p.Args
			if len(bytes.TrimSpace(args)) == 0 {
				args = json.RawMessage(`{}`)
			} else if !json.Valid(args) {
				return nil, fmt.Errorf("encode messages.%d.parts.%d: tool call %s arguments are not JSON", i, j, p.CallID)
			}
			blocks = append(blocks, wireBlock{Type: "tool_use", ID: p.CallID, Name: p.Name, Input: args})
		case record.PartServerTool:
			if p.Wire == record.WireAnthropic {
				blocks = append(blocks, wireBlock{Type: string(record.PartServerTool), Raw: json.RawMessage(p.Data)})
			}
		case record.PartToolResult:
			b := wireBlock{Type: "tool_result", ToolUseID: p.CallID, IsError: p.IsError}
			if len(p.Images) > 0 {
				b.Blocks = resultBlocks(p)
			} else if p.Text != "" {
				b.Content = &p.Text
			}
			blocks = append(blocks, b)
		default:
			return nil, fmt.Errorf("encode messages.%d.parts.%d: unknown part type %q", i, j, p.Type)
		}
	}
	if len(blocks) == 0 && m.Role != record.Assistant {
		blocks = append(blocks, blank...) // let Validate say what is wrong, in the API's words
	}
	return blocks, nil
}

// trimFinal trims the trailing whitespace of a final assistant message, which the API refuses,
// dropping a text block or a message the trim leaves empty.
func trimFinal(w *wireRequest) {
	for len(w.Messages) > 0 {
		last := &w.Messages[len(w.Messages)-1]
		if last.Role != string(record.Assistant) || len(last.Content) == 0 {
			return
		}
		b := &last.Content[len(last.Content)-1]
		if b.Type != "text" || b.Text == nil {
			return
		}
		t := strings.TrimRightFunc(*b.Text, unicode.IsSpace)
		if t != "" {
			b.Text = &t
			return
		}
		last.Content = last.Content[:len(last.Content)-1]
		if len(last.Content) == 0 {
			w.Messages = w.Messages[:len(w.Messages)-1]
		}
	}
}

// markLast puts a cache breakpoint on the last block of a message that can carry one (thinking
// blocks cannot).
func markLast(blocks []wireBlock) {
	for i := len(blocks) - 1; i >= 0; i-- {
		if blocks[i].Type != "thinking" && blocks[i].Type != "redacted_thinking" && blocks[i].Raw == nil {
			blocks[i].CacheControl = ephemeral
			return
		}
	}
}
