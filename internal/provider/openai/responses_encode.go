package openai

import (
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// The Responses request, as rein writes it. Field order is the order of the bytes.
type respRequest struct {
	Model           string         `json:"model"`
	Instructions    string         `json:"instructions,omitempty"`
	Input           []respItem     `json:"input"`
	Tools           []respTool     `json:"tools,omitempty"`
	MaxOutputTokens int            `json:"max_output_tokens,omitempty"`
	Reasoning       *respReasoning `json:"reasoning,omitempty"`
	Store           bool           `json:"store"`
	Stream          bool           `json:"stream"`
}

type respReasoning struct {
	Effort  string `json:"effort"`
	Summary string `json:"summary"`
}

// respTool is a function tool. strict is sent as false on purpose: the Responses API defaults it
// to true, which refuses any schema not written for structured outputs.
type respTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// respItem is one input item: a message, a function call, or a function call's output.
type respItem struct {
	Type      string        `json:"type"`
	Role      string        `json:"role,omitempty"`
	Content   []respContent `json:"content,omitempty"`
	CallID    string        `json:"call_id,omitempty"`
	Name      string        `json:"name,omitempty"`
	Arguments *string       `json:"arguments,omitempty"`
	Output    *string       `json:"output,omitempty"`
}

type respContent struct {
	Type     string  `json:"type"`
	Text     *string `json:"text,omitempty"`
	ImageURL string  `json:"image_url,omitempty"`
	Detail   string  `json:"detail,omitempty"`
}

// emptySchema stands for a tool with no schema: the Responses API requires parameters.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// EncodeResponses renders req as the body of a streaming Responses request: the system prompt
// as instructions, the messages as input items, store:false. Thinking parts are dropped (see the
// package doc). The same request always encodes to the same bytes.
func EncodeResponses(req provider.Request) ([]byte, error) {
	w := respRequest{
		Model:           req.Model,
		Instructions:    req.System,
		Input:           make([]respItem, 0, len(req.Messages)+len(req.Messages)/2),
		MaxOutputTokens: req.MaxTokens,
		Stream:          true,
	}
	if req.Thinking > 0 {
		w.Reasoning = &respReasoning{Effort: effort(req.Thinking), Summary: "auto"}
	}
	for i, m := range req.Messages {
		var err error
		switch m.Role {
		case record.User:
			w.Input, err = appendRespUser(w.Input, m)
		case record.Assistant:
			w.Input, err = appendRespAssistant(w.Input, m)
		default:
			err = fmt.Errorf("unknown role %q", m.Role)
		}
		if err != nil {
			return nil, fmt.Errorf("encode responses message %d: %w", i, err)
		}
	}
	for _, t := range req.Tools {
		schema := t.Schema
		if len(schema) == 0 {
			schema = emptySchema
		}
		w.Tools = append(w.Tools, respTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema})
	}
	return marshal(w)
}

// appendRespUser renders a user message: its tool results as function_call_output items, first,
// then the rest as one user message.
func appendRespUser(out []respItem, m record.Message) ([]respItem, error) {
	var rest []respContent
	results := 0
	for _, p := range m.Parts {
		switch p.Type {
		case record.PartToolResult:
			out = append(out, respItem{Type: "function_call_output", CallID: p.CallID, Output: &p.Text})
			results++
		case record.PartText:
			rest = append(rest, respContent{Type: "input_text", Text: &p.Text})
		case record.PartImage:
			rest = append(rest, respContent{Type: "input_image", ImageURL: dataURL(p), Detail: "auto"})
		default:
			return nil, fmt.Errorf("a user message cannot carry a %s part", p.Type)
		}
	}
	if len(rest) > 0 || results == 0 {
		// An empty message is sent as it is (with no content), for the validator to name.
		out = append(out, respItem{Type: "message", Role: "user", Content: rest})
	}
	return out, nil
}

// appendRespAssistant renders an assistant message: its text as one output message, then each
// tool call as a function_call item.
func appendRespAssistant(out []respItem, m record.Message) ([]respItem, error) {
	var texts []string
	var calls []respItem
	for _, p := range m.Parts {
		switch p.Type {
		case record.PartText:
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		case record.PartToolCall:
			args := string(p.Args)
			calls = append(calls, respItem{Type: "function_call", CallID: p.CallID, Name: p.Name, Arguments: &args})
		case record.PartThinking, record.PartRedacted:
			// Not portable: see the package doc.
		default:
			return nil, fmt.Errorf("an assistant message cannot carry a %s part", p.Type)
		}
	}
	if len(texts) > 0 {
		t := joinTexts(texts)
		out = append(out, respItem{Type: "message", Role: "assistant",
			Content: []respContent{{Type: "output_text", Text: &t}}})
	}
	return append(out, calls...), nil
}
