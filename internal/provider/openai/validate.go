package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/internal/provider"
)

// Rules the validators share. Each Violation carries one of these as its Rule.
const (
	RuleInvalidJSON      = "invalid_json"
	RuleMissingModel     = "missing_model"
	RuleEmptyMessages    = "empty_messages"
	RuleBadRole          = "bad_role"
	RuleBadContent       = "bad_content"
	RuleEmptyContent     = "empty_content"
	RuleBadToolName      = "bad_tool_name"
	RuleBadArguments     = "bad_arguments"
	RuleBadToolCall      = "bad_tool_call"
	RuleCallWithoutReply = "tool_call_without_result"
	RuleReplyWithoutCall = "tool_result_without_call"
	RuleDuplicateCallID  = "duplicate_call_id"
	RuleBadItemType      = "bad_item_type"
	RuleOrphanReasoning  = "reasoning_without_following_item"
	RuleUnstoredItem     = "item_not_stored"
)

func violation(rule, path, format string, args ...any) *provider.Violation {
	return &provider.Violation{Rule: rule, Path: path, Message: fmt.Sprintf(format, args...)}
}

// checkName applies OpenAI's rule for function names, ^[a-zA-Z0-9_-]{1,64}$, in its words.
func checkName(path, name string) *provider.Violation {
	switch {
	case name == "":
		return violation(RuleBadToolName, path,
			"Invalid '%s': string too short. Expected a string with minimum length 1, but got an empty string instead.", path)
	case len(name) > 64:
		return violation(RuleBadToolName, path,
			"Invalid '%s': string too long. Expected a string with maximum length 64, but got a string with length %d instead.", path, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return violation(RuleBadToolName, path,
				"Invalid '%s': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", path)
		}
	}
	return nil
}

// checkArgs requires raw to be a JSON string whose content is a JSON object: rein only ever
// sends object arguments (DESIGN §6.1), and other providers refuse anything else.
func checkArgs(path string, raw json.RawMessage) *provider.Violation {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return violation(RuleBadArguments, path, "Invalid '%s': expected a string.", path)
	}
	if !isObject([]byte(s)) {
		return violation(RuleBadArguments, path, "Invalid '%s': the arguments must be a JSON object, got %s.", path, brief(s))
	}
	return nil
}

// isObject reports whether b is one valid JSON object.
func isObject(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// kind names the JSON type of raw: "null" for absent or null, else "string", "array", "object",
// "number" or "boolean".
func kind(raw json.RawMessage) string {
	b := bytes.TrimLeft(raw, " \t\r\n")
	if len(b) == 0 {
		return "null"
	}
	switch b[0] {
	case 'n':
		return "null"
	case '"':
		return "string"
	case '[':
		return "array"
	case '{':
		return "object"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}

// valueIn is a JSON value the validator needs only the kind of, whether it is empty, and, for an
// array, its elements as E. Decoding it neither copies nor unescapes a string, which keeps
// validation of long histories cheap.
type valueIn[E any] struct {
	kind  string // as kind() names it; "" when the field is absent
	empty bool   // an empty string or an empty array
	elems []E
}

func (v *valueIn[E]) UnmarshalJSON(b []byte) error {
	v.kind = kind(b)
	switch v.kind {
	case "string":
		v.empty = string(b) == `""` // the only JSON encoding of an empty string
	case "array":
		if err := json.Unmarshal(b, &v.elems); err != nil {
			return err
		}
		v.empty = len(v.elems) == 0
	}
	return nil
}

// Kind names the value's JSON type, "null" when absent.
func (v *valueIn[E]) Kind() string {
	if v.kind == "" {
		return "null"
	}
	return v.kind
}

// textIn is a string-valued field the validator only checks the presence of.
type textIn = valueIn[struct{}]

// brief quotes s for a message, cut short if long.
func brief(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return fmt.Sprintf("%q", s)
}
