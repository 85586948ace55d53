package openai

import (
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/internal/provider"
)

// The Responses request as the validator reads it.
type respBodyIn struct {
	Model string              `json:"model"`
	Store *bool               `json:"store"` // absent means true
	Input valueIn[respItemIn] `json:"input"`
	Tools []struct {
		Type       string          `json:"type"`
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
		Format     json.RawMessage `json:"format"`
	} `json:"tools"`
}

type respItemIn struct {
	Type      string              `json:"type"`
	ID        string              `json:"id"`
	Role      string              `json:"role"`
	Content   valueIn[respPartIn] `json:"content"`
	CallID    *string             `json:"call_id"`
	Name      string              `json:"name"`
	Arguments json.RawMessage     `json:"arguments"`
	Input     json.RawMessage     `json:"input"` // a custom tool call's
	Output    valueIn[respPartIn] `json:"output"`
	Status    string              `json:"status"` // a web_search_call's
	// A reasoning item's.
	Summary          textIn  `json:"summary"`
	EncryptedContent *string `json:"encrypted_content"`
}

type respPartIn struct {
	Type     string `json:"type"`
	Text     textIn `json:"text"`
	ImageURL string `json:"image_url"`
	FileID   string `json:"file_id"`
}

// The item types rein's validator knows. OpenAI knows more (built-in tool calls and their
// outputs, item references), none of which rein sends.
var respItemTypes = []string{"message", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output", "reasoning", "web_search_call"}

// ValidateResponses returns the first rule the Responses API would refuse body for, in OpenAI's
// words where they are known, or nil. Every item's shape is checked first, then where reasoning
// items stand, then the pairing of function calls and their outputs.
func ValidateResponses(body []byte) *provider.Violation {
	var b respBodyIn
	if err := json.Unmarshal(body, &b); err != nil {
		return violation(RuleInvalidJSON, "", "We could not parse the JSON body of your request: %v.", err)
	}
	if b.Model == "" {
		return violation(RuleMissingModel, "model", "Missing required parameter: 'model'.")
	}
	if v := checkRespTools(&b); v != nil {
		return v
	}
	return checkRespInput(&b)
}

// checkRespTools checks the function tools offered.
func checkRespTools(b *respBodyIn) *provider.Violation {
	for i, t := range b.Tools {
		if t.Type == "custom" {
			if v := checkCustomTool(i, t.Name, t.Format); v != nil {
				return v
			}
			continue
		}
		if t.Type != "function" {
			continue
		}
		if v := checkName(fmt.Sprintf("tools[%d].name", i), t.Name); v != nil {
			return v
		}
		if kind(t.Parameters) != "object" {
			return violation(RuleBadContent, fmt.Sprintf("tools[%d].parameters", i),
				"Invalid type for 'tools[%d].parameters': expected an object, but got %s instead.", i, kind(t.Parameters))
		}
	}
	return nil
}

// checkRespInput checks the input: its shape, each item's, and how the items relate.
func checkRespInput(b *respBodyIn) *provider.Violation {
	items := b.Input.elems
	switch b.Input.Kind() {
	case "string":
		if b.Input.empty {
			return violation(RuleEmptyMessages, "input",
				"Invalid 'input': string too short. Expected a string with minimum length 1, but got an empty string instead.")
		}
		return nil
	case "array":
	case "null":
		return violation(RuleEmptyMessages, "input", "Missing required parameter: 'input'.")
	default:
		return violation(RuleBadContent, "input",
			"Invalid type for 'input': expected one of a string or array of input items, but got %s instead.", b.Input.Kind())
	}
	if len(items) == 0 {
		return violation(RuleEmptyMessages, "input",
			"Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	for i := range items {
		if v := checkRespItem(i, &items[i]); v != nil {
			return v
		}
	}
	if v := checkRespReasoning(items, b.Store == nil || *b.Store); v != nil {
		return v
	}
	return checkRespPairing(items)
}

// checkRespItem checks one input item's own shape.
func checkRespItem(i int, it *respItemIn) *provider.Violation {
	path := fmt.Sprintf("input[%d]", i)
	typ := it.Type
	if typ == "" && it.Role != "" {
		typ = "message" // the easy input message form
	}
	switch typ {
	case "message":
		return checkRespMessage(path, it)
	case "function_call":
		if v := checkCallID(path, it.CallID); v != nil {
			return v
		}
		if v := checkName(path+".name", it.Name); v != nil {
			return v
		}
		return checkArgs(path+".arguments", it.Arguments)
	case "custom_tool_call":
		if v := checkCallID(path, it.CallID); v != nil {
			return v
		}
		if v := checkName(path+".name", it.Name); v != nil {
			return v
		}
		if kind(it.Input) != "string" {
			return violation(RuleBadToolCall, path+".input", "Missing required parameter: '%s.input'.", path)
		}
	case "function_call_output", "custom_tool_call_output":
		if v := checkCallID(path, it.CallID); v != nil {
			return v
		}
		if k := it.Output.Kind(); k != "string" && k != "array" {
			return violation(RuleBadContent, path+".output", "Missing required parameter: '%s.output'.", path)
		}
		return checkOutputParts(path+".output", it.Output.elems)
	case "web_search_call":
		return checkWebSearchCall(path, it)
	case "reasoning":
		if it.ID == "" {
			return violation(RuleBadContent, path+".id", "Missing required parameter: '%s.id'.", path)
		}
		if it.Summary.Kind() != "array" {
			return violation(RuleBadContent, path+".summary", "Missing required parameter: '%s.summary'.", path)
		}
	default:
		return violation(RuleBadItemType, path+".type", "Invalid value: '%s'. Supported values are: %s.", it.Type, quoteList(respItemTypes))
	}
	return nil
}

func checkCallID(path string, id *string) *provider.Violation {
	switch {
	case id == nil:
		return violation(RuleBadToolCall, path+".call_id", "Missing required parameter: '%s.call_id'.", path)
	case *id == "":
		return violation(RuleBadToolCall, path+".call_id",
			"Invalid '%s.call_id': string too short. Expected a string with minimum length 1, but got an empty string instead.", path)
	}
	return nil
}

// checkRespMessage checks a message item: a known role, and content that says something, made
// of parts that role may carry.
func checkRespMessage(path string, it *respItemIn) *provider.Violation {
	var types []string
	switch it.Role {
	case "user", "system", "developer":
		types = []string{"input_text", "input_image", "input_file"}
	case "assistant":
		types = []string{"output_text", "refusal"}
	default:
		return violation(RuleBadRole, path+".role",
			"Invalid value: '%s'. Supported values are: 'assistant', 'system', 'developer', and 'user'.", it.Role)
	}
	cp := path + ".content"
	switch it.Content.Kind() {
	case "string":
		if it.Content.empty {
			return violation(RuleEmptyContent, cp,
				"Invalid '%s': string too short. Expected a string with minimum length 1, but got an empty string instead.", cp)
		}
		return nil
	case "array":
	case "null":
		return violation(RuleEmptyContent, cp, "Missing required parameter: '%s'.", cp)
	default:
		return violation(RuleBadContent, cp,
			"Invalid type for '%s': expected one of a string or array of input items, but got %s instead.", cp, it.Content.Kind())
	}
	parts := it.Content.elems
	if len(parts) == 0 {
		return violation(RuleEmptyContent, cp,
			"Invalid '%s': empty array. Expected an array with minimum length 1, but got an empty array instead.", cp)
	}
	said := false
	for j, p := range parts {
		pp := fmt.Sprintf("%s[%d]", cp, j)
		if !contains(types, p.Type) {
			return violation(RuleBadContent, pp+".type", "Invalid value: '%s'. Supported values are: %s.", p.Type, quoteList(types))
		}
		switch p.Type {
		case "input_text", "output_text":
			if p.Text.Kind() != "string" {
				return violation(RuleBadContent, pp+".text", "Missing required parameter: '%s.text'.", pp)
			}
			said = said || !p.Text.empty
		case "input_image":
			if p.ImageURL == "" && p.FileID == "" {
				return violation(RuleBadContent, pp, "Missing required parameter: '%s.image_url'.", pp)
			}
			said = true
		default:
			said = true
		}
	}
	if !said {
		return violation(RuleEmptyContent, cp, "A message must have non-empty content.")
	}
	return nil
}

// checkRespReasoning checks where reasoning items stand, by the two rules OpenAI refuses them
// for. A reasoning item is the model's thinking before one of its own output items, and must be
// followed at once by that item: an assistant message or a function call (input[i+1]). Where the
// request may refer to stored items (store is not false) the API pairs the two by id, so the
// following item must carry its own; with store false it judges what is sent, and a reasoning
// item must then carry its encrypted content, which is all the API has of it.
func checkRespReasoning(items []respItemIn, stored bool) *provider.Violation {
	for i, it := range items {
		if it.Type != "reasoning" {
			continue
		}
		if !stored && (it.EncryptedContent == nil || *it.EncryptedContent == "") {
			return violation(RuleUnstoredItem, fmt.Sprintf("input[%d]", i),
				"Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", it.ID)
		}
		ok := false
		if i+1 < len(items) {
			next := &items[i+1]
			typ := next.Type
			if typ == "" && next.Role != "" {
				typ = "message"
			}
			ok = typ == "function_call" || typ == "custom_tool_call" || typ == "web_search_call" || typ == "message" && next.Role == "assistant"
			ok = ok && (!stored || next.ID != "")
		}
		if !ok {
			return violation(RuleOrphanReasoning, fmt.Sprintf("input[%d]", i),
				"Item '%s' of type 'reasoning' was provided without its required following item.", it.ID)
		}
	}
	return nil
}

// checkRespPairing checks that every function call has exactly one output after it, that every
// output answers an earlier call, and that no call id is used twice.
func checkRespPairing(items []respItemIn) *provider.Violation {
	callAt := map[string]int{}
	outputAt := map[string]int{}
	custom := map[string]bool{} // the calls that are custom tool calls
	var order []string
	for i, it := range items {
		switch it.Type {
		case "function_call", "custom_tool_call":
			id := *it.CallID
			custom[id] = it.Type == "custom_tool_call"
			if prev, ok := callAt[id]; ok {
				return violation(RuleDuplicateCallID, fmt.Sprintf("input[%d].call_id", i),
					"Duplicate function call with call_id %s, in input[%d] and input[%d].", id, prev, i)
			}
			callAt[id] = i
			order = append(order, id)
		case "function_call_output", "custom_tool_call_output":
			id := *it.CallID
			path := fmt.Sprintf("input[%d].call_id", i)
			if prev, ok := outputAt[id]; ok {
				return violation(RuleDuplicateCallID, path,
					"Duplicate function call output with call_id %s, in input[%d] and input[%d].", id, prev, i)
			}
			if _, ok := callAt[id]; !ok {
				return violation(RuleReplyWithoutCall, path, "No tool call found for function call output with call_id %s.", id)
			}
			// A custom tool call is answered by a custom tool call output, a function call by a
			// function call output.
			if wantCustom := it.Type == "custom_tool_call_output"; custom[id] != wantCustom {
				want := "function_call_output"
				if custom[id] {
					want = "custom_tool_call_output"
				}
				return violation(RuleReplyWithoutCall, fmt.Sprintf("input[%d].type", i),
					"No tool call found for %s with call_id %s: the call in input[%d] is answered by a %s.", it.Type, id, callAt[id], want)
			}
			outputAt[id] = i
		}
	}
	for _, id := range order {
		if _, ok := outputAt[id]; !ok {
			return violation(RuleCallWithoutReply, fmt.Sprintf("input[%d]", callAt[id]), "No tool output found for function call %s.", id)
		}
	}
	return nil
}

// checkCustomTool checks a custom tool's definition: a name, and a format that is text or a
// grammar in Lark or regex syntax with its definition.
func checkCustomTool(i int, name string, format json.RawMessage) *provider.Violation {
	if v := checkName(fmt.Sprintf("tools[%d].name", i), name); v != nil {
		return v
	}
	if kind(format) == "null" {
		return nil
	}
	var f struct {
		Type       string  `json:"type"`
		Syntax     string  `json:"syntax"`
		Definition *string `json:"definition"`
	}
	path := fmt.Sprintf("tools[%d].format", i)
	if json.Unmarshal(format, &f) != nil {
		return violation(RuleBadContent, path, "Invalid type for '%s': expected an object, but got %s instead.", path, kind(format))
	}
	switch f.Type {
	case "text":
	case "grammar":
		if f.Syntax != "lark" && f.Syntax != "regex" {
			return violation(RuleBadContent, path+".syntax", "Invalid value: '%s'. Supported values are: 'lark' and 'regex'.", f.Syntax)
		}
		if f.Definition == nil || *f.Definition == "" {
			return violation(RuleBadContent, path+".definition", "Missing required parameter: '%s.definition'.", path)
		}
	default:
		return violation(RuleBadContent, path+".type", "Invalid value: '%s'. Supported values are: 'text' and 'grammar'.", f.Type)
	}
	return nil
}
