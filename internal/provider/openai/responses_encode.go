package openai

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// respOpen and respClose are the fields of a Responses request before its input and after it.
// The input holds respItem values and, for reasoning sent back, the items as received
// (json.RawMessage).
type respOpen struct {
	Model        string `json:"model"`
	Instructions string `json:"instructions,omitempty"`
}

type respClose struct {
	Tools           []any          `json:"tools,omitempty"`
	MaxOutputTokens int            `json:"max_output_tokens,omitempty"`
	Reasoning       *respReasoning `json:"reasoning,omitempty"`
	Include         []string       `json:"include,omitempty"`
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

// respCustomTool is a free-form custom tool: the model writes its input as text in a grammar.
type respCustomTool struct {
	Type        string      `json:"type"`
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Format      *respFormat `json:"format,omitempty"`
}

type respFormat struct {
	Type       string `json:"type"`
	Syntax     string `json:"syntax"`
	Definition string `json:"definition"`
}

// respItem is one input item: a message, a function call or a custom tool call, or the output
// of one.
type respItem struct {
	Type      string        `json:"type"`
	Role      string        `json:"role,omitempty"`
	Content   []respContent `json:"content,omitempty"`
	CallID    string        `json:"call_id,omitempty"`
	Name      string        `json:"name,omitempty"`
	Arguments *string       `json:"arguments,omitempty"`
	Input     *string       `json:"input,omitempty"`
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
// as instructions, the messages as input items, store:false. With a reasoning effort asked for
// (or a thinking budget, mapped to one), or for a model known to reason, the request asks for
// each reasoning item's encrypted content, and reasoning items received that way are sent back
// where they stood, byte for byte; any other thinking is dropped (see the package doc). The same
// request always encodes to the same bytes.
func EncodeResponses(req provider.Request) ([]byte, error) {
	w := respFields(req)
	// Calls of a tool offered free-form go as custom tool calls, and their results as custom tool
	// call outputs; any other call (one made before a fork, say) stays a function call. Which
	// tools are offered so is part of what a message's items depend on.
	c := customCalls{tools: provider.Freeform(req.Tools)}
	l := listBody{open: respOpen{Model: req.Model, Instructions: req.System}, name: "input", close: w, format: c.format()}
	return l.encode(req.Messages, req.Memo, func(same int) { c.skipped(req.Messages[:same], req.Messages[same:]) },
		func(out []any, i int, m record.Message) ([]any, error) {
			var err error
			switch m.Role {
			case record.User:
				out, err = appendRespUser(out, m, &c)
			case record.Assistant:
				out, err = appendRespAssistant(out, m, &c)
			default:
				err = fmt.Errorf("unknown role %q", m.Role)
			}
			if err != nil {
				return nil, fmt.Errorf("encode responses message %d: %w", i, err)
			}
			return out, nil
		})
}

// respFields renders the fields of req's Responses request after its input.
func respFields(req provider.Request) respClose {
	w := respClose{MaxOutputTokens: req.MaxTokens, Stream: true}
	switch {
	case req.Effort != "":
		w.Reasoning = &respReasoning{Effort: req.Effort, Summary: "auto"}
	case req.Thinking > 0:
		w.Reasoning = &respReasoning{Effort: effort(req.Thinking), Summary: "auto"}
	}
	if w.Reasoning != nil || ReasoningModel(req.Model) {
		w.Include = []string{"reasoning.encrypted_content"}
	}
	if req.WebSearch {
		w.Tools = append(w.Tools, webSearchTool)
	}
	for _, t := range req.Tools {
		if t.Grammar != "" {
			w.Tools = append(w.Tools, respCustomTool{Type: "custom", Name: t.Name, Description: t.Description,
				Format: &respFormat{Type: "grammar", Syntax: "lark", Definition: t.Grammar}})
			continue
		}
		schema := t.Schema
		if len(schema) == 0 {
			schema = emptySchema
		}
		w.Tools = append(w.Tools, respTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema})
	}
	return w
}

// ReasoningModel reports whether model is one of OpenAI's reasoning models (the o-series and
// GPT-5, save its chat variants), which reason whether or not an effort is asked for.
func ReasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:] // openai/gpt-5 as a router names it
	}
	switch {
	case strings.Contains(m, "-chat"):
		return false
	case strings.HasPrefix(m, "gpt-5"), strings.HasPrefix(m, "codex"),
		len(m) >= 2 && m[0] == 'o' && '1' <= m[1] && m[1] <= '9':
		return true
	}
	return false
}

// appendRespUser renders a user message: its tool results as function_call_output items, first,
// then the rest as one user message.
func appendRespUser(out []any, m record.Message, c *customCalls) ([]any, error) {
	var rest []respContent
	results := 0
	for _, p := range m.Parts {
		switch p.Type {
		case record.PartToolResult:
			typ := "function_call_output"
			if c.ids[p.CallID] {
				typ = "custom_tool_call_output"
			}
			if len(p.Images) > 0 && typ == "function_call_output" {
				out = append(out, outputWithImages(&p))
			} else {
				out = append(out, respItem{Type: typ, CallID: p.CallID, Output: &p.Text})
			}
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

// appendRespAssistant renders an assistant message in the order its parts came: its reasoning
// items as received, its text as output messages (adjacent text parts joined into one), its tool
// calls as function_call items.
//
// A reasoning item goes only where the API takes it: right before the message or function call
// that followed it, which the API requires. One that nothing of its message follows (the rest
// was cut off or dropped) is not sent: it would be refused. Thinking without a reasoning item
// (Anthropic's, or reasoning a server sent without its encrypted content) cannot be sent back.
func appendRespAssistant(out []any, m record.Message, c *customCalls) ([]any, error) {
	var texts []string
	flush := func() {
		if len(texts) > 0 {
			t := joinTexts(texts)
			out = append(out, respItem{Type: "message", Role: "assistant",
				Content: []respContent{{Type: "output_text", Text: &t}}})
			texts = nil
		}
	}
	for i, p := range m.Parts {
		switch p.Type {
		case record.PartText:
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		case record.PartToolCall:
			flush()
			if input, ok := c.custom(p); ok {
				out = append(out, respItem{Type: "custom_tool_call", CallID: p.CallID, Name: p.Name, Input: &input})
				continue
			}
			args := string(p.Args)
			out = append(out, respItem{Type: "function_call", CallID: p.CallID, Name: p.Name, Arguments: &args})
		case record.PartThinking:
			if p.Data == "" || !followed(m.Parts[i+1:]) {
				continue
			}
			if !isObject([]byte(p.Data)) {
				return nil, fmt.Errorf("part %d: the reasoning item kept is not a JSON object", i)
			}
			flush()
			out = append(out, json.RawMessage(p.Data))
		case record.PartRedacted:
			// Anthropic's: not portable (see the package doc).
		case record.PartServerTool:
			if p.Wire == record.WireResponses { // websearch.go; another wire's is not sent
				flush()
				out = append(out, json.RawMessage(p.Data))
			}
		default:
			return nil, fmt.Errorf("an assistant message cannot carry a %s part", p.Type)
		}
	}
	flush()
	return out, nil
}

// followed reports whether the parts after a reasoning item begin, once the parts that are not
// sent are passed over, with one that is sent as a message or a function call.
func followed(rest []record.Part) bool {
	for _, p := range rest {
		switch p.Type {
		case record.PartText:
			if p.Text != "" {
				return true
			}
		case record.PartToolCall:
			return true
		case record.PartServerTool:
			if p.Wire == record.WireResponses {
				return true
			}
		case record.PartThinking:
			if p.Data != "" {
				return false // another reasoning item
			}
		}
	}
	return false
}

// customCalls tracks, while a request is encoded, which calls go as custom tool calls: those of
// the tools offered free-form whose arguments are a free-form input.
type customCalls struct {
	tools map[string]bool
	ids   map[string]bool
}

// format names, for a provider.Memo, the messages' encoding with these tools offered free-form.
func (c *customCalls) format() string {
	names := slices.Sorted(maps.Keys(c.tools))
	return "responses, free-form: " + strings.Join(names, "\x00")
}

// skipped learns, of the messages memo holds (which are not rendered), the calls that the results
// in rest answer and that went as custom tool calls: rendering rest needs to know them. A call
// id made more than once counts as custom if any of its calls went so, as rendering every message
// would count it.
func (c *customCalls) skipped(memo, rest []record.Message) {
	if len(c.tools) == 0 || len(memo) == 0 {
		return
	}
	want := map[string]bool{}
	for _, m := range rest {
		for _, p := range m.Parts {
			if p.Type == record.PartToolResult {
				want[p.CallID] = true
			}
		}
	}
	for i := len(memo) - 1; i >= 0 && len(want) > 0; i-- {
		for _, p := range memo[i].Parts {
			if p.Type == record.PartToolCall && want[p.CallID] && c.tools[p.Name] {
				if _, ok := c.custom(p); ok {
					delete(want, p.CallID)
				}
			}
		}
	}
}

// custom reports whether call p goes as a custom tool call, and its input.
func (c *customCalls) custom(p record.Part) (string, bool) {
	if !c.tools[p.Name] {
		return "", false
	}
	input, ok := provider.FreeformInput(p.Args)
	if !ok {
		return "", false
	}
	if c.ids == nil {
		c.ids = map[string]bool{}
	}
	c.ids[p.CallID] = true
	return input, true
}
