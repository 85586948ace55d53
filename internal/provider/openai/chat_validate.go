package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/provider"
)

// The Chat Completions request as the validator reads it: loosely typed where OpenAI accepts
// more than one shape, so that a wrong shape is named rather than failing the parse.
type chatBodyIn struct {
	Model    string          `json:"model"`
	Messages []chatMessageIn `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

type chatMessageIn struct {
	Role       string              `json:"role"`
	Content    valueIn[chatPartIn] `json:"content"`
	ToolCalls  []chatCallIn        `json:"tool_calls"`
	ToolCallID *string             `json:"tool_call_id"`
}

type chatCallIn struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type chatPartIn struct {
	Type     string `json:"type"`
	Text     textIn `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

// ValidateChat returns the first rule OpenAI's Chat Completions endpoint would refuse body for,
// in OpenAI's words where they are known, or nil. It checks every message's shape first, then
// the pairing of tool calls and tool messages, as OpenAI does. Where rein is stricter than
// OpenAI (an empty user message, arguments that are not an object) it is because another
// supported provider refuses what OpenAI lets through.
func ValidateChat(body []byte) *provider.Violation {
	var b chatBodyIn
	if err := json.Unmarshal(body, &b); err != nil {
		return violation(RuleInvalidJSON, "", "We could not parse the JSON body of your request: %v.", err)
	}
	if b.Model == "" {
		return violation(RuleMissingModel, "model", "you must provide a model parameter")
	}
	if len(b.Messages) == 0 {
		return violation(RuleEmptyMessages, "messages",
			"Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	if v := checkChatTools(&b); v != nil {
		return v
	}
	for i := range b.Messages {
		if v := checkChatMessage(i, &b.Messages[i]); v != nil {
			return v
		}
	}
	return checkChatPairing(b.Messages)
}

// checkChatTools checks the tools offered.
func checkChatTools(b *chatBodyIn) *provider.Violation {
	for i, t := range b.Tools {
		if t.Type != "function" {
			return violation(RuleBadToolCall, fmt.Sprintf("tools[%d].type", i),
				"Invalid value: '%s'. Supported values are: 'function' and 'custom'.", t.Type)
		}
		if v := checkName(fmt.Sprintf("tools[%d].function.name", i), t.Function.Name); v != nil {
			return v
		}
		if k := kind(t.Function.Parameters); k != "null" && k != "object" {
			return violation(RuleBadContent, fmt.Sprintf("tools[%d].function.parameters", i),
				"Invalid type for 'tools[%d].function.parameters': expected an object, but got %s instead.", i, k)
		}
	}
	return nil
}

// checkChatMessage checks one message's own shape.
func checkChatMessage(i int, m *chatMessageIn) *provider.Violation {
	path := fmt.Sprintf("messages[%d]", i)
	switch m.Role {
	case "system", "developer":
		return checkChatContent(path, &m.Content, false, "text")
	case "user":
		return checkChatContent(path, &m.Content, true, "text", "image_url", "input_audio", "file")
	case "assistant":
		if m.Content.Kind() != "null" {
			if v := checkChatContent(path, &m.Content, false, "text", "refusal"); v != nil {
				return v
			}
		}
		if len(m.ToolCalls) == 0 {
			if m.Content.Kind() == "null" {
				return violation(RuleEmptyContent, path+".content", "Invalid value for 'content': expected a string, got null.")
			}
			if silent(&m.Content) {
				return violation(RuleEmptyContent, path+".content",
					"An assistant message must have non-empty 'content' or 'tool_calls'.")
			}
		}
		for j, c := range m.ToolCalls {
			cp := fmt.Sprintf("%s.tool_calls[%d]", path, j)
			if c.Type != "function" {
				return violation(RuleBadToolCall, cp+".type",
					"Invalid value: '%s'. Supported values are: 'function' and 'custom'.", c.Type)
			}
			if c.ID == "" {
				return violation(RuleBadToolCall, cp+".id",
					"Invalid '%s.id': string too short. Expected a string with minimum length 1, but got an empty string instead.", cp)
			}
			if v := checkName(cp+".function.name", c.Function.Name); v != nil {
				return v
			}
			if v := checkArgs(cp+".function.arguments", c.Function.Arguments); v != nil {
				return v
			}
		}
	case "tool":
		if m.ToolCallID == nil {
			return violation(RuleBadToolCall, path+".tool_call_id",
				"Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.")
		}
		return checkChatContent(path, &m.Content, false, "text")
	case "function":
		// Deprecated, never sent by rein, still accepted by OpenAI.
	default:
		return violation(RuleBadRole, path+".role",
			"Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", m.Role)
	}
	return nil
}

// checkChatContent checks a content field: a string, or a non-empty array of parts of the given
// types. nonEmpty refuses an empty string too.
func checkChatContent(path string, c *valueIn[chatPartIn], nonEmpty bool, types ...string) *provider.Violation {
	cp := path + ".content"
	switch c.Kind() {
	case "null":
		return violation(RuleEmptyContent, cp, "Invalid value for 'content': expected a string, got null.")
	case "string":
		if nonEmpty && c.empty {
			return violation(RuleEmptyContent, cp,
				"Invalid '%s': string too short. Expected a string with minimum length 1, but got an empty string instead.", cp)
		}
		return nil
	case "array":
	default:
		return violation(RuleBadContent, cp,
			"Invalid type for '%s': expected one of a string or array of objects, but got %s instead.", cp, c.Kind())
	}
	if c.empty {
		return violation(RuleEmptyContent, cp,
			"Invalid '%s': empty array. Expected an array with minimum length 1, but got an empty array instead.", cp)
	}
	for j, p := range c.elems {
		pp := fmt.Sprintf("%s[%d]", cp, j)
		if !contains(types, p.Type) {
			return violation(RuleBadContent, pp+".type", "Invalid value: '%s'. Supported values are: %s.", p.Type, quoteList(types))
		}
		switch p.Type {
		case "text":
			if p.Text.Kind() != "string" {
				return violation(RuleBadContent, pp+".text", "Missing required parameter: '%s.text'.", pp)
			}
		case "image_url":
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return violation(RuleBadContent, pp+".image_url", "Missing required parameter: '%s.image_url.url'.", pp)
			}
		}
	}
	return nil
}

// silent reports whether content says nothing: an empty string, or parts that are all empty
// texts.
func silent(c *valueIn[chatPartIn]) bool {
	for _, p := range c.elems {
		if p.Type != "text" || !p.Text.empty {
			return false
		}
	}
	return c.empty || c.kind == "array"
}

// checkChatPairing checks that every assistant message with tool calls is followed at once by
// tool messages answering each call, that every tool message answers a call of that message,
// and that no call id is used twice in the request.
func checkChatPairing(msgs []chatMessageIn) *provider.Violation {
	callAt := map[string]int{}   // call id → message that made it
	resultAt := map[string]int{} // call id → tool message that answered it
	open := -1                   // the assistant message whose calls are being answered
	var owed []string            // its calls not yet answered, in order
	unanswered := func() *provider.Violation {
		return violation(RuleCallWithoutReply, fmt.Sprintf("messages[%d]", open),
			"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %s",
			strings.Join(owed, ", "))
	}
	for i, m := range msgs {
		if m.Role == "tool" {
			id := *m.ToolCallID
			path := fmt.Sprintf("messages[%d].tool_call_id", i)
			if open < 0 {
				return violation(RuleReplyWithoutCall, path,
					"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
			}
			if prev, ok := resultAt[id]; ok {
				return violation(RuleDuplicateCallID, path,
					"Invalid parameter: Duplicate value for 'tool_call_id' of '%s', in messages[%d] and messages[%d].", id, prev, i)
			}
			k := indexOf(owed, id)
			if k < 0 {
				return violation(RuleReplyWithoutCall, path,
					"Invalid parameter: 'tool_call_id' of '%s' not found in 'tool_calls' of previous message.", id)
			}
			owed = append(owed[:k], owed[k+1:]...)
			resultAt[id] = i
			continue
		}
		if open >= 0 && len(owed) > 0 {
			return unanswered()
		}
		open, owed = -1, owed[:0]
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		for j, c := range m.ToolCalls {
			if prev, ok := callAt[c.ID]; ok {
				return violation(RuleDuplicateCallID, fmt.Sprintf("messages[%d].tool_calls[%d].id", i, j),
					"Duplicate tool call id '%s', in messages[%d] and messages[%d].", c.ID, prev, i)
			}
			callAt[c.ID] = i
			owed = append(owed, c.ID)
		}
		open = i
	}
	if open >= 0 && len(owed) > 0 {
		return unanswered()
	}
	return nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func contains(list []string, s string) bool { return indexOf(list, s) >= 0 }

// quoteList renders 'a', 'b', and 'c' as OpenAI's messages list supported values.
func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = "'" + s + "'"
	}
	switch len(q) {
	case 1:
		return q[0]
	case 2:
		return q[0] + " and " + q[1]
	}
	return strings.Join(q[:len(q)-1], ", ") + ", and " + q[len(q)-1]
}
