package provider

import (
	"bytes"
	"encoding/json"
)

// A free-form call (a custom tool's on the Responses wire) carries text, not arguments. rein
// records it as the one argument object every wire takes, {"input": text}, so that the call stays
// valid when the history is sent to a provider without custom tools, and the text is kept exactly.

// FreeformSchema is the argument schema of a free-form tool where it is offered as a function.
var FreeformSchema = json.RawMessage(`{"type":"object","properties":{"input":{"type":"string","description":"The tool's input, as text in the format the description gives."}},"required":["input"],"additionalProperties":false}`)

// FreeformArgs is the argument object that records a free-form call's input.
func FreeformArgs(input string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Input string `json:"input"`
	}{input})
	return b
}

// FreeformInput reads a free-form call's input back from its arguments: ok is false unless args
// is an object holding exactly one member, input, a string.
func FreeformInput(args json.RawMessage) (input string, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil || len(m) != 1 {
		return "", false
	}
	raw, has := m["input"]
	if !has || len(bytes.TrimSpace(raw)) == 0 || bytes.TrimSpace(raw)[0] != '"' {
		return "", false
	}
	return input, json.Unmarshal(raw, &input) == nil
}

// Freeform lists the names of the tools of tools offered free-form (with a Grammar).
func Freeform(tools []Tool) map[string]bool {
	var names map[string]bool
	for _, t := range tools {
		if t.Grammar != "" {
			if names == nil {
				names = map[string]bool{}
			}
			names[t.Name] = true
		}
	}
	return names
}
