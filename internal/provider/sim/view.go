package sim

import (
	"encoding/json"
	"strings"
)

// view is what the simulator reads from a request, whatever its wire format: enough to pick a
// step, play the policy and estimate tokens. It is read leniently — the validator has already
// judged the request — and a field it cannot read is simply left empty.
type view struct {
	model        string
	stream       bool
	includeUsage bool // Chat: stream_options.include_usage
	// thinking: the request asks for thinking or reasoning (Anthropic thinking enabled, a Chat
	// reasoning_effort or reasoning object, a Responses reasoning object).
	thinking bool
	signs    bool // thinking comes with a signature of its own (Anthropic)
	// encrypted: a Responses request includes reasoning.encrypted_content, so reasoning items
	// carry it.
	encrypted bool
	tools     []string
	first     string   // the text of the first user message
	prompt    string   // the text of the last user prompt (a user message that is not only tool results)
	results   []result // tool results since that prompt, in order
	rounds    int      // assistant tool-call rounds since that prompt
	estimate  int      // input tokens: context bytes / 4, rounded up
}

type result struct {
	text    string
	isError bool
}

// userText records a user message's text: the first one, and a new prompt that opens an exchange.
func (v *view) userText(text string) {
	if v.first == "" {
		v.first = text
	}
	v.prompt = text
	v.results = nil
	v.rounds = 0
}

func (v *view) offers(names ...string) string {
	for _, t := range v.tools {
		for _, n := range names {
			if t == n {
				return t
			}
		}
	}
	return ""
}

func estimate(fields ...json.RawMessage) int {
	n := 0
	for _, f := range fields {
		n += len(f)
	}
	return (n + 3) / 4
}

// textOf reads content that is either a string or a list of blocks with "text" fields.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(bl.Text)
	}
	return b.String()
}

// readAnthropicWhole reads an Anthropic request by decoding all of it: the reference readAnthropic
// (fastread.go) must agree with, and its fallback.
func readAnthropicWhole(body []byte) view {
	var req struct {
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
		System   json.RawMessage `json:"system"`
		Messages json.RawMessage `json:"messages"`
		Tools    json.RawMessage `json:"tools"`
		Thinking *struct {
			Type string `json:"type"`
		} `json:"thinking"`
	}
	_ = json.Unmarshal(body, &req)
	v := view{model: req.Model, stream: req.Stream, estimate: estimate(req.System, req.Messages, req.Tools)}
	v.thinking = req.Thinking != nil && req.Thinking.Type != "" && req.Thinking.Type != "disabled"
	v.signs = true
	v.tools = functionNames(req.Tools)
	var msgs []anthropicMessage
	_ = json.Unmarshal(req.Messages, &msgs)
	for _, m := range msgs {
		v.anthropic(m)
	}
	return v
}

// anthropicMessage is a message of an Anthropic request as the view reads it.
type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// anthropicBlock is a content block as the view reads it.
type anthropicBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Content json.RawMessage `json:"content"`
	IsError bool            `json:"is_error"`
}

// anthropic reads the next message of the conversation into v.
func (v *view) anthropic(m anthropicMessage) {
	var blocks []anthropicBlock
	if json.Unmarshal(m.Content, &blocks) != nil {
		if m.Role == "user" {
			v.userText(textOf(m.Content))
		}
		return
	}
	var texts []string
	var results []result
	calls := false
	for _, b := range blocks {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "tool_result":
			results = append(results, result{text: textOf(b.Content), isError: b.IsError})
		case "tool_use":
			calls = true
		}
	}
	switch {
	case m.Role == "assistant" && calls:
		v.rounds++
	case m.Role == "user" && len(results) > 0:
		v.results = append(v.results, results...)
	case m.Role == "user":
		v.userText(strings.Join(texts, "\n"))
	}
}

func readChat(body []byte) view {
	var req struct {
		Model         string          `json:"model"`
		Stream        bool            `json:"stream"`
		Messages      json.RawMessage `json:"messages"`
		Tools         json.RawMessage `json:"tools"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		ReasoningEffort string          `json:"reasoning_effort"`
		Reasoning       json.RawMessage `json:"reasoning"`
	}
	_ = json.Unmarshal(body, &req)
	v := view{model: req.Model, stream: req.Stream, estimate: estimate(req.Messages, req.Tools)}
	v.thinking = req.ReasoningEffort != "" || present(req.Reasoning)
	v.includeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	v.tools = functionNames(req.Tools)
	var msgs []struct {
		Role      string            `json:"role"`
		Content   json.RawMessage   `json:"content"`
		ToolCalls []json.RawMessage `json:"tool_calls"`
	}
	_ = json.Unmarshal(req.Messages, &msgs)
	for _, m := range msgs {
		switch m.Role {
		case "user":
			v.userText(textOf(m.Content))
		case "assistant":
			if len(m.ToolCalls) > 0 {
				v.rounds++
			}
		case "tool":
			v.results = append(v.results, result{text: textOf(m.Content)})
		}
	}
	return v
}

func readResponses(body []byte) view {
	var req struct {
		Model        string          `json:"model"`
		Stream       bool            `json:"stream"`
		Instructions json.RawMessage `json:"instructions"`
		Input        json.RawMessage `json:"input"`
		Tools        json.RawMessage `json:"tools"`
		Reasoning    json.RawMessage `json:"reasoning"`
		Include      []string        `json:"include"`
	}
	_ = json.Unmarshal(body, &req)
	v := view{model: req.Model, stream: req.Stream, estimate: estimate(req.Instructions, req.Input, req.Tools)}
	v.thinking = present(req.Reasoning)
	for _, in := range req.Include {
		v.encrypted = v.encrypted || in == "reasoning.encrypted_content"
	}
	v.tools = functionNames(req.Tools)
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		v.userText(s)
		return v
	}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Output  json.RawMessage `json:"output"`
	}
	_ = json.Unmarshal(req.Input, &items)
	lastWasCall := false
	for _, it := range items {
		isCall := it.Type == "function_call" || it.Type == "custom_tool_call"
		switch {
		case isCall && !lastWasCall:
			v.rounds++
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
			v.results = append(v.results, result{text: textOf(it.Output)})
		case (it.Type == "" || it.Type == "message") && it.Role == "user":
			v.userText(textOf(it.Content))
		}
		lastWasCall = isCall
	}
	return v
}

// functionNames reads the names of the tools offered, in the Chat shape
// ({"type":"function","function":{"name":...}}) and in the Anthropic and Responses shape ({"name":...}).
func functionNames(raw json.RawMessage) []string {
	var tools []struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	_ = json.Unmarshal(raw, &tools)
	var names []string
	for _, t := range tools {
		if t.Function.Name != "" {
			names = append(names, t.Function.Name)
		} else if t.Name != "" {
			names = append(names, t.Name)
		} else if t.Type != "" {
			names = append(names, t.Type) // a built-in tool named by its type alone (Responses' web_search)
		}
	}
	return names
}

// present reports whether a field is set to something other than null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}
