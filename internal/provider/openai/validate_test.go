package openai

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider"
)

// validatorCase is one request body and the rule it breaks ("" when it must be accepted). want,
// when set, is a piece of the message the violation must carry.
type validatorCase struct {
	name string
	body string
	rule string
	want string
}

func runValidator(t *testing.T, validate func([]byte) *provider.Violation, cases []validatorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := validate([]byte(tc.body))
			if tc.rule == "" {
				if v != nil {
					t.Fatalf("refused: %v", v)
				}
				return
			}
			if v == nil {
				t.Fatalf("accepted; want rule %s", tc.rule)
			}
			if v.Rule != tc.rule {
				t.Errorf("rule = %s (%v), want %s", v.Rule, v, tc.rule)
			}
			if !strings.Contains(v.Error(), tc.want) {
				t.Errorf("message = %q, want it to contain %q", v.Error(), tc.want)
			}
		})
	}
}

func chatBody(messages string) string {
	return `{"model":"gpt-4.1","messages":[` + messages + `],"stream":true}`
}

const (
	cUser   = `{"role":"user","content":"hi"}`
	cCall   = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_x","type":"function","function":{"name":"ls","arguments":"{}"}}]}`
	cCall2  = `{"role":"assistant","content":"two","tool_calls":[{"id":"call_x","type":"function","function":{"name":"ls","arguments":"{}"}},{"id":"call_y","type":"function","function":{"name":"pwd","arguments":"{\"a\":1}"}}]}`
	cResX   = `{"role":"tool","tool_call_id":"call_x","content":"ok"}`
	cResY   = `{"role":"tool","tool_call_id":"call_y","content":"ok"}`
	cAnswer = `{"role":"assistant","content":"done"}`
)

func callWith(field string) string {
	return `{"role":"assistant","content":null,"tool_calls":[{"id":"call_x","type":"function","function":` + field + `}]}`
}

func TestValidateChat(t *testing.T) {
	j := func(ms ...string) string { return chatBody(strings.Join(ms, ",")) }
	cases := []validatorCase{
		{"accepted: a plain exchange", j(`{"role":"system","content":"s"}`, cUser, cAnswer, cUser), "", ""},
		{"accepted: parallel calls answered in any order", j(cUser, cCall2, cResY, cResX, cUser), "", ""},
		{"accepted: multipart user content", j(`{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}`), "", ""},
		{"accepted: a tool message with empty content", j(cUser, cCall, `{"role":"tool","tool_call_id":"call_x","content":""}`), "", ""},

		{"not JSON", `{"model":`, RuleInvalidJSON, "could not parse"},
		{"no model", `{"messages":[` + cUser + `]}`, RuleMissingModel, "model"},
		{"no messages", chatBody(""), RuleEmptyMessages, "empty array"},
		{"bad role", j(`{"role":"human","content":"hi"}`), RuleBadRole, "Invalid value: 'human'"},
		{"empty user string", j(`{"role":"user","content":""}`), RuleEmptyContent, "string too short"},
		{"empty user array", j(`{"role":"user","content":[]}`), RuleEmptyContent, "empty array"},
		{"null user content", j(`{"role":"user","content":null}`), RuleEmptyContent, "expected a string, got null"},
		{"numeric content", j(`{"role":"user","content":7}`), RuleBadContent, "but got number"},
		{"bad part type", j(`{"role":"user","content":[{"type":"video","text":"x"}]}`), RuleBadContent, "Invalid value: 'video'"},
		{"assistant with nothing", j(cUser, `{"role":"assistant","content":null}`), RuleEmptyContent, "expected a string, got null"},
		{"assistant with empty text", j(cUser, `{"role":"assistant","content":""}`, cUser), RuleEmptyContent, "non-empty"},
		{"bad tool name", j(cUser, `{"role":"assistant","content":null,"tool_calls":[{"id":"call_x","type":"function","function":{"name":"read file","arguments":"{}"}}]}`, cResX),
			RuleBadToolName, "does not match pattern"},
		{"tool name too long", j(cUser, callWith(`{"name":"`+strings.Repeat("a", 65)+`","arguments":"{}"}`), cResX), RuleBadToolName, "maximum length 64"},
		{"bad name in tools", `{"model":"m","messages":[` + cUser + `],"tools":[{"type":"function","function":{"name":"a.b"}}]}`, RuleBadToolName, "tools[0].function.name"},
		{"arguments an array", j(cUser, callWith(`{"name":"ls","arguments":"[1]"}`), cResX), RuleBadArguments, "JSON object"},
		{"arguments cut off", j(cUser, callWith(`{"name":"ls","arguments":"{\"a\":"}`), cResX), RuleBadArguments, "JSON object"},
		{"arguments not a string", j(cUser, callWith(`{"name":"ls","arguments":{}}`), cResX), RuleBadArguments, "expected a string"},
		{"call without id", j(cUser, `{"role":"assistant","tool_calls":[{"id":"","type":"function","function":{"name":"ls","arguments":"{}"}}]}`), RuleBadToolCall, "string too short"},
		{"call never answered", j(cUser, cCall, cUser), RuleCallWithoutReply,
			"An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_x"},
		{"call last, unanswered", j(cUser, cCall2, cResX), RuleCallWithoutReply, "did not have response messages: call_y"},
		{"result after a user message", j(cUser, cCall, cUser, cResX), RuleCallWithoutReply, "call_x"},
		{"tool message with no call", j(cUser, cResX), RuleReplyWithoutCall,
			"messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."},
		{"tool message for another call", j(cUser, cCall, `{"role":"tool","tool_call_id":"call_z","content":"ok"}`), RuleReplyWithoutCall, "'call_z' not found"},
		{"tool message without id", j(cUser, cCall, `{"role":"tool","content":"ok"}`), RuleBadToolCall, "tool_call_id"},
		{"duplicate result", j(cUser, cCall2, cResX, cResX, cResY), RuleDuplicateCallID, "Duplicate value for 'tool_call_id' of 'call_x'"},
		{"duplicate call id", j(cUser, cCall, cResX, cCall, cResX), RuleDuplicateCallID, "call_x"},
	}
	runValidator(t, ValidateChat, cases)
}

func respBody(items string) string {
	return `{"model":"gpt-4.1","input":[` + items + `],"store":false,"stream":true}`
}

const (
	rUser   = `{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}`
	rText   = `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}`
	rCallX  = `{"type":"function_call","call_id":"call_x","name":"ls","arguments":"{}"}`
	rCallY  = `{"type":"function_call","call_id":"call_y","name":"pwd","arguments":"{}"}`
	rOutX   = `{"type":"function_call_output","call_id":"call_x","output":"ok"}`
	rOutY   = `{"type":"function_call_output","call_id":"call_y","output":"ok"}`
	rEasyIn = `{"role":"user","content":"hello"}`
	rReason = `{"type":"reasoning","id":"rs_1","encrypted_content":"gAAAA","summary":[]}`
)

func TestValidateResponses(t *testing.T) {
	j := func(items ...string) string { return respBody(strings.Join(items, ",")) }
	cases := []validatorCase{
		{"accepted: text and calls", j(rUser, rText, rCallX, rCallY, rOutY, rOutX, rUser), "", ""},
		{"accepted: easy input message", j(rEasyIn), "", ""},
		{"accepted: string input", `{"model":"m","input":"hello"}`, "", ""},
		{"accepted: image", j(`{"type":"message","role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,AA==","detail":"auto"}]}`), "", ""},

		{"not JSON", `[`, RuleInvalidJSON, "could not parse"},
		{"no model", `{"input":[` + rUser + `]}`, RuleMissingModel, "model"},
		{"empty input", respBody(""), RuleEmptyMessages, "empty array"},
		{"no input", `{"model":"m"}`, RuleEmptyMessages, "input"},
		{"bad item type", j(rUser, `{"type":"tool_result","call_id":"c"}`), RuleBadItemType, "Invalid value: 'tool_result'"},
		{"bad role", j(`{"type":"message","role":"tool","content":"x"}`), RuleBadRole, "'tool'"},
		{"output_text from the user", j(`{"type":"message","role":"user","content":[{"type":"output_text","text":"x"}]}`), RuleBadContent, "Supported values are: 'input_text'"},
		{"input_text from the assistant", j(rUser, `{"type":"message","role":"assistant","content":[{"type":"input_text","text":"x"}]}`), RuleBadContent, "'output_text' and 'refusal'"},
		{"empty user message", j(`{"type":"message","role":"user","content":[]}`), RuleEmptyContent, "empty array"},
		{"empty user text", j(`{"type":"message","role":"user","content":[{"type":"input_text","text":""}]}`), RuleEmptyContent, "non-empty"},
		{"user message without content", j(`{"type":"message","role":"user"}`), RuleEmptyContent, "content"},
		{"bad function name", j(rUser, `{"type":"function_call","call_id":"call_x","name":"a b","arguments":"{}"}`, rOutX), RuleBadToolName, "pattern"},
		{"arguments a string", j(rUser, `{"type":"function_call","call_id":"call_x","name":"ls","arguments":"\"x\""}`, rOutX), RuleBadArguments, "JSON object"},
		{"call without call_id", j(rUser, `{"type":"function_call","name":"ls","arguments":"{}"}`), RuleBadToolCall, "call_id"},
		{"output without output", j(rUser, rCallX, `{"type":"function_call_output","call_id":"call_x"}`), RuleBadContent, "output"},
		{"call never answered", j(rUser, rCallX, rUser), RuleCallWithoutReply, "No tool output found for function call call_x."},
		{"output with no call", j(rUser, rOutX), RuleReplyWithoutCall, "No tool call found for function call output with call_id call_x."},
		{"output before its call", j(rUser, rOutX, rCallX), RuleReplyWithoutCall, "call_id call_x"},
		{"duplicate call", j(rUser, rCallX, rOutX, rCallX, rOutX), RuleDuplicateCallID, "call_x"},
		{"duplicate output", j(rUser, rCallX, rOutX, rOutX), RuleDuplicateCallID, "call_x"},
		{"bad tool name in tools", `{"model":"m","input":[` + rUser + `],"tools":[{"type":"function","name":"","parameters":{}}]}`, RuleBadToolName, "string too short"},

		// Reasoning items sent back (store false): each before the item it preceded.
		{"accepted: reasoning before a call", j(rUser, rReason, rCallX, rOutX), "", ""},
		{"accepted: reasoning before a message", j(rUser, rReason, rText, rUser), "", ""},
		{"accepted: reasoning before an easy assistant message", j(rUser, rReason, `{"role":"assistant","content":"ok"}`, rUser), "", ""},
		{"reasoning without id", j(rUser, `{"type":"reasoning","encrypted_content":"gAAAA","summary":[]}`, rText), RuleBadContent, "'input[1].id'"},
		{"reasoning without summary", j(rUser, `{"type":"reasoning","id":"rs_1","encrypted_content":"gAAAA"}`, rText), RuleBadContent, "'input[1].summary'"},
		{"reasoning last", j(rUser, rReason), RuleOrphanReasoning, "Item 'rs_1' of type 'reasoning' was provided without its required following item."},
		{"reasoning before a user message", j(rUser, rReason, rUser), RuleOrphanReasoning, "without its required following item"},
		{"reasoning before an output", j(rUser, rCallX, rReason, rOutX), RuleOrphanReasoning, "rs_1"},
		{"reasoning before reasoning", j(rUser, rReason, rReason, rText), RuleOrphanReasoning, "rs_1"},
		{"reasoning without its content, store false", j(rUser, `{"type":"reasoning","id":"rs_2","summary":[]}`, rText), RuleUnstoredItem,
			"Item with id 'rs_2' not found. Items are not persisted when `store` is set to false."},
		// Stored (store absent or true): the API pairs a reasoning item with the next one by id.
		{"stored: following item without its id", `{"model":"m","input":[` + rUser + `,` + rReason + `,` + rText + `]}`, RuleOrphanReasoning, "rs_1"},
		{"accepted: stored, following item with its id", `{"model":"m","store":true,"input":[` + rUser + `,{"type":"reasoning","id":"rs_3","summary":[]},{"id":"msg_3","type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}]}`, "", ""},
	}
	runValidator(t, ValidateResponses, cases)
}

// TestEveryRuleTested keeps the tables in step with the rules: each rule is refused somewhere.
func TestEveryRuleTested(t *testing.T) {
	rules := []string{RuleInvalidJSON, RuleMissingModel, RuleEmptyMessages, RuleBadRole, RuleBadContent,
		RuleEmptyContent, RuleBadToolName, RuleBadArguments, RuleBadToolCall, RuleCallWithoutReply,
		RuleReplyWithoutCall, RuleDuplicateCallID, RuleBadItemType, RuleOrphanReasoning, RuleUnstoredItem}
	seen := map[string]bool{}
	for _, b := range []string{
		`{"model":`, `{"messages":[]}`, chatBody(""), chatBody(`{"role":"x","content":"a"}`),
		chatBody(`{"role":"user","content":7}`), chatBody(`{"role":"user","content":""}`),
		chatBody(`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"a b","arguments":"{}"}}]}`),
		chatBody(`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"a","arguments":"1"}}]}`),
		chatBody(`{"role":"assistant","content":null,"tool_calls":[{"id":"","type":"function","function":{"name":"a","arguments":"{}"}}]}`),
		chatBody(cCall), chatBody(cResX), chatBody(cCall + "," + cResX + "," + cResX),
	} {
		if v := ValidateChat([]byte(b)); v != nil {
			seen[v.Rule] = true
		}
	}
	for _, b := range []string{respBody(`{"type":"x"}`), respBody(rReason), respBody(`{"type":"reasoning","id":"r","summary":[]}`)} {
		if v := ValidateResponses([]byte(b)); v != nil {
			seen[v.Rule] = true
		}
	}
	for _, r := range rules {
		if !seen[r] {
			t.Errorf("rule %s is never produced", r)
		}
	}
}
