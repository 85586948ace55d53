package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/reinhq/rein/internal/provider"
)

// The shapes Validate reads a request body into. They are looser than the wire shapes Encode
// writes, so that a body rein did not write can be judged too.
type (
	vRequest struct {
		Model     *string         `json:"model"`
		MaxTokens *int            `json:"max_tokens"`
		System    json.RawMessage `json:"system"`
		Messages  *[]vMessage     `json:"messages"`
		Tools     []vTool         `json:"tools"`
		Thinking  *vThinking      `json:"thinking"`
		// Temperature is never sent by rein; it is read to judge a body rein did not write.
		Temperature *float64 `json:"temperature"`
	}
	vMessage struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	vBlock struct {
		Type         string          `json:"type"`
		Text         *string         `json:"text"`
		Thinking     *string         `json:"thinking"`
		Signature    *string         `json:"signature"`
		Data         *string         `json:"data"`
		Source       *wireSource     `json:"source"`
		ID           *string         `json:"id"`
		Name         *string         `json:"name"`
		Input        json.RawMessage `json:"input"`
		ToolUseID    *string         `json:"tool_use_id"`
		Content      json.RawMessage `json:"content"`
		CacheControl json.RawMessage `json:"cache_control"`
	}
	vTool struct {
		Type         string          `json:"type"`
		Name         string          `json:"name"`
		InputSchema  json.RawMessage `json:"input_schema"`
		CacheControl json.RawMessage `json:"cache_control"`
	}
	vThinking struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	}
)

// validID reports whether s matches ^[a-zA-Z0-9_-]+$, the pattern of tool ids and (up to 64
// bytes long) tool names.
func validID(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

var (
	imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}
	// knownBlocks are the content block types this validator knows the rules of.
	knownBlocks = map[string]bool{
		"text": true, "image": true, "document": true, "tool_use": true, "tool_result": true,
		"thinking": true, "redacted_thinking": true,
		"server_tool_use": true, "web_search_tool_result": true, // websearch.go
	}
)

// maxCacheBreakpoints is how many blocks may carry cache_control in one request.
const maxCacheBreakpoints = 4

// Validate judges an Anthropic request body and returns the first rule the Messages API would
// refuse it for, or nil. Messages are the API's own words where they are known (the simulator
// answers with them); Rule is a stable name for each. It is a pure function of the bytes.
//
// Schema rules (fields, types, patterns) are judged over the whole body before the rules that
// relate messages to each other, as the API does.
func Validate(body []byte) *provider.Violation {
	var req vRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return &provider.Violation{Rule: "malformed", Message: "request body is not a valid Messages API request: " + err.Error()}
	}
	if v := validateTop(&req); v != nil {
		return v
	}
	msgs := *req.Messages
	parsed := make([][]vBlock, len(msgs))
	for i, m := range msgs {
		blocks, v := parseContent(i, m)
		if v != nil {
			return v
		}
		parsed[i] = blocks
		if v := validateSchema(i, m.Role, blocks); v != nil {
			return v
		}
	}
	return validateConversation(&req, msgs, parsed)
}

// validateTop judges the fields outside messages.
func validateTop(req *vRequest) *provider.Violation {
	switch {
	case req.Model == nil:
		return violation("model_missing", "model", "model: Field required")
	case req.MaxTokens == nil:
		return violation("max_tokens_missing", "max_tokens", "max_tokens: Field required")
	case *req.MaxTokens < 1:
		return violation("max_tokens_range", "max_tokens", "max_tokens: Input should be greater than or equal to 1")
	case req.Messages == nil:
		return violation("messages_missing", "messages", "messages: Field required")
	case len(*req.Messages) == 0:
		return violation("messages_empty", "messages", "messages: at least one message is required")
	}
	return validateSettings(req)
}

// validateSettings judges the fields beside model, max_tokens and messages: thinking, system and
// tools.
func validateSettings(req *vRequest) *provider.Violation {
	if t := req.Thinking; t != nil && t.Type == "enabled" {
		if t.BudgetTokens < 1024 {
			return violation("thinking_budget", "thinking.budget_tokens",
				"thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
		}
		if *req.MaxTokens <= t.BudgetTokens {
			return violation("thinking_budget", "max_tokens",
				"`max_tokens` must be greater than `thinking.budget_tokens`")
		}
		if req.Temperature != nil && *req.Temperature != 1 {
			return violation("thinking_temperature", "temperature",
				"`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking")
		}
	}
	if len(req.System) > 0 && !bytes.Equal(bytes.TrimSpace(req.System), []byte("null")) {
		var s string
		var blocks []vBlock
		switch {
		case json.Unmarshal(req.System, &s) == nil:
		case json.Unmarshal(req.System, &blocks) == nil:
			for j, b := range blocks {
				if b.Type != "text" || b.Text == nil {
					return violation("system_block", fmt.Sprintf("system.%d", j), fmt.Sprintf("system.%d: system blocks must be text blocks", j))
				}
				if *b.Text == "" {
					return violation("text_empty", fmt.Sprintf("system.%d", j), "system: text content blocks must be non-empty")
				}
			}
		default:
			return violation("system_block", "system", "system: Input should be a valid string or a list of text blocks")
		}
	}
	names := map[string]bool{}
	for i, t := range req.Tools {
		if name, ok := ClientToolNames[t.Type]; ok {
			if t.Name != name {
				return violation("tool_type_name", fmt.Sprintf("tools.%d.name", i),
					fmt.Sprintf("tools.%d.%s.name: Input should be '%s'", i, t.Type, name))
			}
			if names[t.Name] {
				return violation("tool_name_duplicate", fmt.Sprintf("tools.%d.name", i), "tools: Tool names must be unique.")
			}
			names[t.Name] = true
			continue
		}
		if t.Type != "" && t.Type != "custom" {
			continue // a server tool: its own rules
		}
		if !validID(t.Name) || len(t.Name) > 64 {
			return violation("tool_name", fmt.Sprintf("tools.%d.name", i),
				fmt.Sprintf("tools.%d.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", i))
		}
		if names[t.Name] {
			return violation("tool_name_duplicate", fmt.Sprintf("tools.%d.name", i), "tools: Tool names must be unique.")
		}
		names[t.Name] = true
		if !isObject(t.InputSchema) {
			return violation("tool_schema", fmt.Sprintf("tools.%d.input_schema", i),
				fmt.Sprintf("tools.%d.custom.input_schema: Input should be a valid dictionary", i))
		}
	}
	return nil
}

// parseContent reads a message's content, a string or a list of blocks. A string is returned as
// one text block.
func parseContent(i int, m vMessage) ([]vBlock, *provider.Violation) {
	c := bytes.TrimSpace(m.Content)
	switch {
	case len(c) == 0:
		return nil, violation("content_missing", fmt.Sprintf("messages.%d.content", i), fmt.Sprintf("messages.%d.content: Field required", i))
	case c[0] == '"':
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return nil, violation("malformed", fmt.Sprintf("messages.%d.content", i), err.Error())
		}
		if s == "" {
			return []vBlock{}, nil
		}
		return []vBlock{{Type: "text", Text: &s}}, nil
	case c[0] == '[':
		var blocks []vBlock
		if err := json.Unmarshal(c, &blocks); err != nil {
			return nil, violation("malformed", fmt.Sprintf("messages.%d.content", i), fmt.Sprintf("messages.%d.content: %v", i, err))
		}
		return blocks, nil
	}
	return nil, violation("malformed", fmt.Sprintf("messages.%d.content", i),
		fmt.Sprintf("messages.%d.content: Input should be a valid string or a list of content blocks", i))
}

// validateSchema judges one message's role and each block's own fields.
func validateSchema(i int, role string, blocks []vBlock) *provider.Violation {
	switch role {
	case "user", "assistant":
	case "system":
		return violation("system_role", fmt.Sprintf("messages.%d.role", i),
			"Unexpected role \"system\". The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role.")
	default:
		return violation("role", fmt.Sprintf("messages.%d.role", i),
			fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i))
	}
	for j := range blocks {
		b := &blocks[j]
		if b.Type == "text" && b.Text != nil {
			continue // the common case, judged without building a path
		}
		at := fmt.Sprintf("messages.%d.content.%d", i, j)
		if !knownBlocks[b.Type] {
			return violation("block_type", at+".type", fmt.Sprintf("%s.type: unknown content block type %q", at, b.Type))
		}
		field := func(name string) *provider.Violation {
			return violation("block_field", at+"."+name, fmt.Sprintf("%s.%s.%s: Field required", at, b.Type, name))
		}
		switch b.Type {
		case "text":
			if b.Text == nil {
				return field("text")
			}
		case "thinking":
			if b.Thinking == nil {
				return field("thinking")
			}
			if b.Signature == nil {
				return field("signature")
			}
		case "redacted_thinking":
			if b.Data == nil {
				return field("data")
			}
		case "server_tool_use", "web_search_tool_result":
			if v := validateServerBlock(at, b); v != nil {
				return v
			}
		case "image":
			if b.Source == nil {
				return field("source")
			}
			if b.Source.Type == "base64" && !imageTypes[b.Source.MediaType] {
				return violation("image_media_type", at+".source.media_type", fmt.Sprintf(
					"%s.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'", at))
			}
		case "tool_use":
			if b.ID == nil {
				return field("id")
			}
			if !validID(*b.ID) {
				return violation("tool_id_pattern", at+".id",
					fmt.Sprintf("%s.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'", at))
			}
			if b.Name == nil || *b.Name == "" {
				return violation("tool_use_name", at+".name", fmt.Sprintf("%s.tool_use.name: String should have at least 1 character", at))
			}
			if len(b.Input) == 0 {
				return field("input")
			}
			if !isObject(b.Input) {
				return violation("tool_input_not_object", at+".input", fmt.Sprintf("%s.tool_use.input: Input should be a valid dictionary", at))
			}
		case "tool_result":
			if b.ToolUseID == nil {
				return field("tool_use_id")
			}
			if !validID(*b.ToolUseID) {
				return violation("tool_id_pattern", at+".tool_use_id",
					fmt.Sprintf("%s.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'", at))
			}
			if v := validateResultContent(at, b.Content); v != nil {
				return v
			}
		}
	}
	return nil
}

// validateResultContent judges a tool_result's content: absent, a string, or a list of text and
// image blocks.
func validateResultContent(at string, raw json.RawMessage) *provider.Violation {
	c := bytes.TrimSpace(raw)
	if len(c) == 0 || c[0] == '"' || bytes.Equal(c, []byte("null")) {
		return nil
	}
	var blocks []vBlock
	if c[0] != '[' || json.Unmarshal(c, &blocks) != nil {
		return violation("tool_result_content", at+".content", at+".tool_result.content: Input should be a valid string or a list of content blocks")
	}
	for k, b := range blocks {
		switch {
		case b.Type == "text" && (b.Text == nil || *b.Text == ""):
			return violation("text_empty", fmt.Sprintf("%s.content.%d", at, k), "messages: text content blocks must be non-empty")
		case b.Type != "text" && b.Type != "image" && b.Type != "document" && b.Type != "search_result":
			return violation("tool_result_content", fmt.Sprintf("%s.content.%d", at, k),
				fmt.Sprintf("%s.tool_result.content.%d: tool results may hold text, image and document blocks", at, k))
		case b.Type == "image" && b.Source == nil:
			return violation("missing_field", fmt.Sprintf("%s.content.%d.source", at, k), fmt.Sprintf("%s.content.%d.image.source: Field required", at, k))
		case b.Type == "image" && b.Source.Type == "base64" && !imageTypes[b.Source.MediaType]:
			return violation("image_media_type", fmt.Sprintf("%s.content.%d.source.media_type", at, k), fmt.Sprintf(
				"%s.content.%d.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'", at, k))
		case b.Type == "image" && b.Source.Type == "base64" && b.Source.Data == "":
			return violation("image_data", fmt.Sprintf("%s.content.%d.source.data", at, k), fmt.Sprintf("%s.content.%d.image.source.base64.data: Field required", at, k))
		}
	}
	return nil
}

// validateConversation judges the rules that relate blocks and messages to each other.
func validateConversation(req *vRequest, msgs []vMessage, parsed [][]vBlock) *provider.Violation {
	if msgs[0].Role != "user" {
		return violation("first_not_user", "messages.0.role", `messages: first message must use the "user" role`)
	}
	last := len(msgs) - 1
	seen := map[string]bool{} // tool_use ids across the request
	breakpoints := countBreakpoints(req, parsed)
	for i, blocks := range parsed {
		role := msgs[i].Role
		if len(blocks) == 0 {
			if i == last && role == "assistant" {
				continue
			}
			return violation("content_empty", fmt.Sprintf("messages.%d", i),
				fmt.Sprintf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i))
		}
		texts, blank := 0, 0
		for j := range blocks {
			b := &blocks[j]
			at := func() string { return fmt.Sprintf("messages.%d.content.%d", i, j) }
			switch b.Type {
			case "text":
				if *b.Text == "" {
					return violation("text_empty", at(), "messages: text content blocks must be non-empty")
				}
				texts++
				if strings.TrimFunc(*b.Text, unicode.IsSpace) == "" {
					blank++
				}
			case "tool_use":
				if role != "assistant" {
					return violation("tool_use_role", at(), at()+": tool_use blocks may only appear in assistant messages")
				}
				if seen[*b.ID] {
					return violation("tool_use_duplicate", at(), at()+": `tool_use` ids must be unique")
				}
				seen[*b.ID] = true
			case "tool_result":
				if role != "user" {
					return violation("tool_result_role", at(), at()+": tool_result blocks may only appear in user messages")
				}
			}
		}
		if texts > 0 && texts == blank {
			return violation("text_whitespace", fmt.Sprintf("messages.%d", i), "messages: text content blocks must contain non-whitespace text")
		}
		if v := validateServerPairs(i, role, blocks); v != nil {
			return v
		}
		if role == "user" {
			if v := validateResults(i, msgs, parsed); v != nil {
				return v
			}
		}
		if role == "assistant" && i < last {
			if v := validateAnswered(i, msgs, parsed); v != nil {
				return v
			}
		}
	}
	if v := validateFinal(req, msgs, parsed); v != nil {
		return v
	}
	if breakpoints > maxCacheBreakpoints {
		return violation("cache_breakpoints", "", fmt.Sprintf("A maximum of %d blocks with cache_control may be provided. Found %d.", maxCacheBreakpoints, breakpoints))
	}
	return nil
}

// validateResults judges the tool_result blocks of user message i: each answers a tool_use of the
// message just before, once.
func validateResults(i int, msgs []vMessage, parsed [][]vBlock) *provider.Violation {
	asked := map[string]bool{}
	if i > 0 && msgs[i-1].Role == "assistant" {
		for _, b := range parsed[i-1] {
			if b.Type == "tool_use" {
				asked[*b.ID] = true
			}
		}
	}
	answered := map[string]bool{}
	for j, b := range parsed[i] {
		if b.Type != "tool_result" {
			continue
		}
		at := fmt.Sprintf("messages.%d.content.%d", i, j)
		id := *b.ToolUseID
		if !asked[id] {
			return violation("unexpected_tool_result", at, fmt.Sprintf(
				"%s: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", at, id))
		}
		if answered[id] {
			return violation("tool_result_duplicate", at, fmt.Sprintf("%s: tool_use id %s is answered by more than one tool_result block", at, id))
		}
		answered[id] = true
	}
	return nil
}

// validateAnswered judges assistant message i: every tool_use it holds is answered by a
// tool_result at the start of the next message.
func validateAnswered(i int, msgs []vMessage, parsed [][]vBlock) *provider.Violation {
	var ids []string
	for _, b := range parsed[i] {
		if b.Type == "tool_use" {
			ids = append(ids, *b.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	leading, later := map[string]bool{}, map[string]bool{}
	if msgs[i+1].Role == "user" {
		first := true
		for _, b := range parsed[i+1] {
			if b.Type != "tool_result" {
				first = false
				continue
			}
			if first {
				leading[*b.ToolUseID] = true
			} else {
				later[*b.ToolUseID] = true
			}
		}
	}
	var missing []string
	rule := "tool_use_without_result"
	for _, id := range ids {
		if !leading[id] {
			missing = append(missing, id)
			if later[id] {
				rule = "tool_result_not_first"
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return violation(rule, fmt.Sprintf("messages.%d", i), fmt.Sprintf(
		"messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
		i, strings.Join(missing, ", ")))
}

// validateFinal judges the rules about how a request ends: a final assistant message's trailing
// whitespace, and, with thinking enabled, the thinking block that must open the assistant message
// whose tool calls the final message answers.
func validateFinal(req *vRequest, msgs []vMessage, parsed [][]vBlock) *provider.Violation {
	last := len(msgs) - 1
	if msgs[last].Role == "assistant" {
		if n := len(parsed[last]); n > 0 {
			if b := parsed[last][n-1]; b.Type == "text" && strings.TrimRightFunc(*b.Text, unicode.IsSpace) != *b.Text {
				return violation("final_assistant_whitespace", fmt.Sprintf("messages.%d.content.%d", last, n-1),
					"messages: final assistant content cannot end with trailing whitespace")
			}
		}
	}
	if req.Thinking == nil || req.Thinking.Type != "enabled" {
		return nil
	}
	// The last assistant message, when the user messages after it open with its tool results: the
	// API merges those user messages into one turn, the tool loop still in progress.
	a := last
	for a >= 0 && msgs[a].Role == "user" {
		a--
	}
	if a < 0 || a == last || len(parsed[a]) == 0 || len(parsed[a+1]) == 0 || parsed[a+1][0].Type != "tool_result" {
		return nil
	}
	if t := parsed[a][0].Type; t != "thinking" && t != "redacted_thinking" {
		return violation("thinking_first", fmt.Sprintf("messages.%d.content.0", a), fmt.Sprintf(
			"messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.",
			a, t))
	}
	return nil
}

// countBreakpoints counts the blocks and tools that carry cache_control.
func countBreakpoints(req *vRequest, parsed [][]vBlock) int {
	n := 0
	var system []vBlock
	if json.Unmarshal(req.System, &system) == nil {
		for _, b := range system {
			if len(b.CacheControl) > 0 && string(b.CacheControl) != "null" {
				n++
			}
		}
	}
	for _, t := range req.Tools {
		if len(t.CacheControl) > 0 && string(t.CacheControl) != "null" {
			n++
		}
	}
	for _, blocks := range parsed {
		for _, b := range blocks {
			if len(b.CacheControl) > 0 && string(b.CacheControl) != "null" {
				n++
			}
		}
	}
	return n
}

func isObject(raw json.RawMessage) bool {
	c := bytes.TrimSpace(raw)
	return len(c) > 0 && c[0] == '{'
}

func violation(rule, path, msg string) *provider.Violation {
	return &provider.Violation{Rule: rule, Path: path, Message: msg}
}
