package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// chatReasoning is OpenRouter's reasoning setting: an effort or a budget in tokens, not both.
type chatReasoning struct {
	Effort    string `json:"effort,omitempty"`
	MaxTokens int    `json:"max_tokens,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// chatMessage is one wire message. Content is a string, a []chatContent, or nil (null).
type chatMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatContent struct {
	Type     string        `json:"type"`
	Text     *string       `json:"text,omitempty"`
	ImageURL *chatImageURL `json:"image_url,omitempty"`
}

type chatImageURL struct {
	URL string `json:"url"`
}

type chatToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function chatCallFunction `json:"function"`
}

type chatCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// EncodeChat renders req as the body of a streaming Chat Completions request in OpenAI's current
// shape. The same request always encodes to the same bytes.
func EncodeChat(req provider.Request) ([]byte, error) {
	return Compat{}.EncodeChat(req)
}

// EncodeChat renders req as EncodeChat does, adapted to the servers c describes. With req.Memo,
// the messages its last request sent the same are taken from it as they were (listBody).
func (c Compat) EncodeChat(req provider.Request) ([]byte, error) {
	open, close := c.chatFields(req)
	l := listBody{open: open, name: "messages", close: close, format: "chat"}
	if req.System != "" {
		l.fixed = []any{chatMessage{Role: "system", Content: req.System}}
		l.format = "chat after a system message"
	}
	var scratch []chatMessage
	return l.encode(req.Messages, req.Memo, nil, func(out []any, i int, m record.Message) ([]any, error) {
		var err error
		switch m.Role {
		case record.User:
			scratch, err = appendChatUser(scratch[:0], m)
		case record.Assistant:
			scratch, err = appendChatAssistant(scratch[:0], m)
		default:
			err = fmt.Errorf("unknown role %q", m.Role)
		}
		if err != nil {
			return nil, fmt.Errorf("encode chat message %d: %w", i, err)
		}
		for _, wm := range scratch {
			out = append(out, wm)
		}
		return out, nil
	})
}

// chatOpen and chatClose are the fields of a Chat request before its messages and after them.
type chatOpen struct {
	Model string `json:"model"`
}

type chatClose struct {
	Tools               []chatTool     `json:"tools,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	MaxTokens           int            `json:"max_tokens,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
	Reasoning           *chatReasoning `json:"reasoning,omitempty"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
}

// chatFields renders the fields of req's Chat request besides its messages.
func (c Compat) chatFields(req provider.Request) (chatOpen, chatClose) {
	w := chatClose{Stream: true, StreamOptions: &streamOptions{IncludeUsage: true}}
	if c.MaxTokens {
		w.MaxTokens = req.MaxTokens
	} else {
		w.MaxCompletionTokens = req.MaxTokens
	}
	switch {
	case c.Reasoning && req.Effort != "":
		w.Reasoning = &chatReasoning{Effort: req.Effort}
	case c.Reasoning && req.Thinking > 0:
		w.Reasoning = &chatReasoning{MaxTokens: req.Thinking}
	case req.Effort != "":
		w.ReasoningEffort = req.Effort
	case req.Thinking > 0:
		w.ReasoningEffort = effort(req.Thinking)
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, chatTool{Type: "function", Function: chatFunction{
			Name: t.Name, Description: t.Description, Parameters: t.Schema,
		}})
	}
	return chatOpen{Model: req.Model}, w
}

// appendChatUser renders a user message: each tool result as its own tool message, first, then
// the rest of the message as one user message.
func appendChatUser(out []chatMessage, m record.Message) ([]chatMessage, error) {
	var rest []chatContent
	results := 0
	for _, p := range m.Parts {
		switch p.Type {
		case record.PartToolResult:
			content := p.Text
			if len(p.Images) > 0 {
				content += chatImageNote(&p)
				rest = append(rest, chatImages(&p)...)
			}
			out = append(out, chatMessage{Role: "tool", Content: content, ToolCallID: p.CallID})
			results++
		case record.PartText:
			rest = append(rest, chatContent{Type: "text", Text: &p.Text})
		case record.PartImage:
			rest = append(rest, chatContent{Type: "image_url", ImageURL: &chatImageURL{URL: dataURL(p)}})
		default:
			return nil, fmt.Errorf("a user message cannot carry a %s part", p.Type)
		}
	}
	switch {
	case len(rest) == 1 && rest[0].Type == "text":
		out = append(out, chatMessage{Role: "user", Content: *rest[0].Text})
	case len(rest) > 0:
		out = append(out, chatMessage{Role: "user", Content: rest})
	case results == 0:
		// An empty user message is sent as it is, for the validator to name.
		out = append(out, chatMessage{Role: "user", Content: ""})
	}
	return out, nil
}

// appendChatAssistant renders an assistant message: its text joined, its tool calls, and no
// thinking. A message left with neither is omitted.
func appendChatAssistant(out []chatMessage, m record.Message) ([]chatMessage, error) {
	var texts []string
	var calls []chatToolCall
	for _, p := range m.Parts {
		switch p.Type {
		case record.PartText:
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		case record.PartToolCall:
			calls = append(calls, chatToolCall{ID: p.CallID, Type: "function",
				Function: chatCallFunction{Name: p.Name, Arguments: string(p.Args)}})
		case record.PartThinking, record.PartRedacted:
			// Not portable: see the package doc.
		case record.PartServerTool:
			// Another API's own web search: Chat Completions has none to take it (websearch.go).
		default:
			return nil, fmt.Errorf("an assistant message cannot carry a %s part", p.Type)
		}
	}
	if len(texts) == 0 && len(calls) == 0 {
		return out, nil
	}
	msg := chatMessage{Role: "assistant", ToolCalls: calls}
	if len(texts) > 0 {
		msg.Content = joinTexts(texts)
	}
	return append(out, msg), nil
}

// joinTexts joins an assistant message's separate text blocks. They were separate paragraphs
// where they came from, so a blank line keeps them apart.
func joinTexts(texts []string) string {
	if len(texts) == 1 {
		return texts[0]
	}
	return strings.Join(texts, "\n\n")
}

// dataURL renders an image part as a data URL.
func dataURL(p record.Part) string {
	return "data:" + p.MediaType + ";base64," + p.Data
}

// effort maps a thinking budget in tokens to OpenAI's reasoning effort.
func effort(budget int) string {
	switch {
	case budget < 4096:
		return "low"
	case budget < 16384:
		return "medium"
	}
	return "high"
}

// marshal encodes v without HTML escaping (which would only bloat prompts full of code) and
// without a trailing newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("marshal request: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
