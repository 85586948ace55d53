package anthropic

import (
	"strings"
	"testing"
)

// body wraps messages (a JSON array's elements) in a minimal request; extra is more top-level
// fields, each with a leading comma.
func body(messages string, extra ...string) string {
	return `{"model":"claude-test-1","max_tokens":1024,"messages":[` + messages + `]` + strings.Join(extra, "") + `}`
}

const (
	hi      = `{"role":"user","content":"hi"}`
	useA    = `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_A","name":"ls","input":{}}]}`
	useAB   = `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_A","name":"ls","input":{}},{"type":"tool_use","id":"toolu_B","name":"ls","input":{}}]}`
	resultA = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":"ok"}]}`
)

// TestValidate holds one accepted and one refused request for every rule.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		rule string
		ok   string
		bad  string
		msg  string // the exact message, where the API's words are known
	}{
		{rule: "malformed", ok: body(hi), bad: `{"model":"x",`},
		{rule: "malformed", ok: body(hi), bad: body(hi) + ` {}`},
		{rule: "model_missing", ok: body(hi), bad: `{"max_tokens":1,"messages":[` + hi + `]}`, msg: "model: Field required"},
		{rule: "max_tokens_missing", ok: body(hi), bad: `{"model":"x","messages":[` + hi + `]}`, msg: "max_tokens: Field required"},
		{rule: "max_tokens_range", ok: body(hi), bad: `{"model":"x","max_tokens":0,"messages":[` + hi + `]}`},
		{rule: "messages_missing", ok: body(hi), bad: `{"model":"x","max_tokens":1}`, msg: "messages: Field required"},
		{rule: "messages_empty", ok: body(hi), bad: body(``)},
		{rule: "thinking_budget", ok: `{"model":"x","max_tokens":2048,"messages":[` + hi + `],"thinking":{"type":"enabled","budget_tokens":1024}}`,
			bad: body(hi, `,"thinking":{"type":"enabled","budget_tokens":1023}`)},
		{rule: "thinking_temperature", ok: `{"model":"x","max_tokens":2048,"temperature":1,"messages":[` + hi + `],"thinking":{"type":"enabled","budget_tokens":1024}}`,
			bad: `{"model":"x","max_tokens":2048,"temperature":0.2,"messages":[` + hi + `],"thinking":{"type":"enabled","budget_tokens":1024}}`,
			msg: "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking"},
		{rule: "thinking_temperature", ok: body(hi, `,"temperature":0.2`),
			bad: `{"model":"x","max_tokens":2048,"temperature":0,"messages":[` + hi + `],"thinking":{"type":"enabled","budget_tokens":1024}}`},
		{rule: "thinking_budget", ok: body(hi, `,"thinking":{"type":"disabled"}`),
			bad: body(hi, `,"thinking":{"type":"enabled","budget_tokens":1024}`), msg: "`max_tokens` must be greater than `thinking.budget_tokens`"},
		{rule: "system_block", ok: body(hi, `,"system":"be brief"`), bad: body(hi, `,"system":5`)},
		{rule: "text_empty", ok: body(hi, `,"system":[{"type":"text","text":"x"}]`), bad: body(hi, `,"system":[{"type":"text","text":""}]`)},
		{rule: "tool_name", ok: body(hi, `,"tools":[{"name":"read_file-2","input_schema":{"type":"object"}}]`),
			bad: body(hi, `,"tools":[{"name":"read.file","input_schema":{"type":"object"}}]`),
			msg: "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'"},
		{rule: "tool_name", ok: body(hi, `,"tools":[{"name":"`+strings.Repeat("a", 64)+`","input_schema":{}}]`),
			bad: body(hi, `,"tools":[{"name":"`+strings.Repeat("a", 65)+`","input_schema":{}}]`)},
		{rule: "tool_name_duplicate", ok: body(hi, `,"tools":[{"name":"a","input_schema":{}},{"name":"b","input_schema":{}}]`),
			bad: body(hi, `,"tools":[{"name":"a","input_schema":{}},{"name":"a","input_schema":{}}]`), msg: "tools: Tool names must be unique."},
		{rule: "tool_schema", ok: body(hi, `,"tools":[{"type":"web_search_20250305","name":"web_search"}]`),
			bad: body(hi, `,"tools":[{"name":"a"}]`)},
		{rule: "content_missing", ok: body(hi), bad: body(`{"role":"user"}`)},
		{rule: "system_role", ok: body(hi), bad: body(`{"role":"system","content":"x"},` + hi)},
		{rule: "role", ok: body(hi), bad: body(hi + `,{"role":"tool","content":"x"}`), msg: "messages.1.role: Input should be 'user' or 'assistant'"},
		{rule: "block_type", ok: body(hi), bad: body(`{"role":"user","content":[{"type":"video"}]}`)},
		{rule: "block_field", ok: body(hi + `,{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"a"}]}`),
			bad: body(hi + `,{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"a"}]}`),
			msg: "messages.1.content.0.thinking.signature: Field required"},
		{rule: "image_media_type", ok: body(`{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/webp","data":"AA=="}}]}`),
			bad: body(`{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/bmp","data":"AA=="}}]}`)},
		{rule: "tool_id_pattern", ok: body(hi + `,` + useA + `,` + resultA),
			bad: body(hi + `,{"role":"assistant","content":[{"type":"tool_use","id":"call.1","name":"ls","input":{}}]}`),
			msg: "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"},
		{rule: "tool_id_pattern", ok: body(hi + `,` + useA + `,` + resultA),
			bad: body(hi + `,` + useA + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"","content":"ok"}]}`)},
		{rule: "tool_use_name", ok: body(hi + `,` + useA + `,` + resultA),
			bad: body(hi + `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_A","name":"","input":{}}]}`)},
		{rule: "tool_input_not_object", ok: body(hi + `,` + useA + `,` + resultA),
			bad: body(hi + `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_A","name":"ls","input":"{}"}]},` + resultA),
			msg: "messages.1.content.0.tool_use.input: Input should be a valid dictionary"},
		{rule: "tool_input_not_object", ok: body(hi + `,` + useA + `,` + resultA),
			bad: body(hi + `,{"role":"assistant","content":[{"type":"tool_use","id":"toolu_A","name":"ls","input":null}]},` + resultA)},
		{rule: "tool_result_content", ok: body(hi + `,` + useA + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":[{"type":"text","text":"ok"}]}]}`),
			bad: body(hi + `,` + useA + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":5}]}`)},
		{rule: "first_not_user", ok: body(hi + `,{"role":"assistant","content":"a"}`), bad: body(`{"role":"assistant","content":"a"},` + hi),
			msg: `messages: first message must use the "user" role`},
		{rule: "content_empty", ok: body(hi + `,{"role":"assistant","content":[]}`), bad: body(hi + `,{"role":"assistant","content":[]},` + hi),
			msg: "messages.1: all messages must have non-empty content except for the optional final assistant message"},
		{rule: "content_empty", ok: body(hi + `,{"role":"assistant","content":""}`), bad: body(`{"role":"user","content":""}`)},
		{rule: "text_empty", ok: body(`{"role":"user","content":[{"type":"text","text":"x"}]}`),
			bad: body(`{"role":"user","content":[{"type":"text","text":"x"},{"type":"text","text":""}]}`),
			msg: "messages: text content blocks must be non-empty"},
		{rule: "text_empty", ok: body(hi + `,` + useA + `,` + resultA),
			bad: body(hi + `,` + useA + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":[{"type":"text","text":""}]}]}`)},
		{rule: "text_whitespace", ok: body(`{"role":"user","content":[{"type":"text","text":" "},{"type":"text","text":"x"}]}`),
			bad: body(`{"role":"user","content":[{"type":"text","text":" \n"}]}`), msg: "messages: text content blocks must contain non-whitespace text"},
		{rule: "tool_use_role", ok: body(hi + `,` + useA + `,` + resultA),
			bad: body(`{"role":"user","content":[{"type":"tool_use","id":"toolu_A","name":"ls","input":{}}]}`)},
		{rule: "tool_use_duplicate", ok: body(hi + `,` + useAB + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A"},{"type":"tool_result","tool_use_id":"toolu_B"}]}`),
			bad: body(hi + `,` + useA + `,` + resultA + `,` + useA + `,` + resultA), msg: "messages.3.content.0: `tool_use` ids must be unique"},
		{rule: "tool_result_role", ok: body(hi + `,` + useA + `,` + resultA),
			bad: body(hi + `,{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"toolu_A"}]}`)},
		{rule: "unexpected_tool_result", ok: body(hi + `,` + useA + `,` + resultA),
			bad: body(hi + `,{"role":"assistant","content":"a"},` + resultA),
			msg: "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_A. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{rule: "unexpected_tool_result", ok: body(hi + `,` + useA + `,` + resultA + `,{"role":"user","content":"more"}`),
			bad: body(hi + `,` + useA + `,` + resultA + `,` + resultA)},
		{rule: "tool_result_duplicate", ok: body(hi + `,` + useA + `,` + resultA),
			bad: body(hi + `,` + useA + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A"},{"type":"tool_result","tool_use_id":"toolu_A"}]}`)},
		{rule: "tool_use_without_result", ok: body(hi + `,` + useAB + `,{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_B"},{"type":"tool_result","tool_use_id":"toolu_A"},{"type":"text","text":"TURN: 2"}]}`),
			bad: body(hi + `,` + useAB + `,` + resultA),
			msg: "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_B. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{rule: "tool_use_without_result", ok: body(hi + `,` + useA + `,` + resultA + `,{"role":"user","content":"steer"}`),
			bad: body(hi + `,` + useA + `,{"role":"assistant","content":"a"},` + hi)},
		{rule: "tool_result_not_first", ok: body(hi + `,` + useA + `,` + resultA),
			bad: body(hi + `,` + useA + `,{"role":"user","content":[{"type":"text","text":"x"},{"type":"tool_result","tool_use_id":"toolu_A"}]}`)},
		{rule: "final_assistant_whitespace", ok: body(hi + `,{"role":"assistant","content":"a \n b"}`), bad: body(hi + `,{"role":"assistant","content":"a "}`),
			msg: "messages: final assistant content cannot end with trailing whitespace"},
		{rule: "final_assistant_whitespace", ok: body(hi + `,{"role":"assistant","content":"a "},` + hi),
			bad: body(hi + `,{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b\n"}]}`)},
		{rule: "thinking_first",
			ok: `{"model":"x","max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[` + hi +
				`,{"role":"assistant","content":[{"type":"redacted_thinking","data":"d"},{"type":"tool_use","id":"toolu_A","name":"ls","input":{}}]},` + resultA + `]}`,
			bad: `{"model":"x","max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[` + hi + `,` + useA + `,` + resultA + `]}`},
		{rule: "thinking_first",
			ok: `{"model":"x","max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[` + hi + `,` + useA + `,` + resultA +
				`,{"role":"assistant","content":"a"},` + hi + `]}`,
			bad: `{"model":"x","max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[` + hi + `,` + useA + `,` + resultA + `,` + hi + `]}`},
		{rule: "cache_breakpoints",
			ok: body(`{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}`,
				`,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}]`,
				`,"tools":[{"name":"a","input_schema":{},"cache_control":{"type":"ephemeral"}},{"name":"b","input_schema":{},"cache_control":{"type":"ephemeral"}}]`),
			bad: body(`{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}},{"type":"text","text":"b","cache_control":{"type":"ephemeral"}}]}`,
				`,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}]`,
				`,"tools":[{"name":"a","input_schema":{},"cache_control":{"type":"ephemeral"}},{"name":"b","input_schema":{},"cache_control":{"type":"ephemeral"}}]`),
			msg: "A maximum of 4 blocks with cache_control may be provided. Found 5."},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if v := Validate([]byte(tc.ok)); v != nil {
				t.Errorf("accepted case refused: %v (%s)\n%s", v, v.Rule, tc.ok)
			}
			v := Validate([]byte(tc.bad))
			switch {
			case v == nil:
				t.Errorf("refused case accepted:\n%s", tc.bad)
			case v.Rule != tc.rule:
				t.Errorf("refused by %s (%v), want %s", v.Rule, v, tc.rule)
			case tc.msg != "" && v.Message != tc.msg:
				t.Errorf("message:\n got %s\nwant %s", v.Message, tc.msg)
			}
		})
	}
}

func TestViolationError(t *testing.T) {
	v := Validate([]byte(body(hi + `,{"role":"tool","content":"x"}`)))
	if got, want := v.Error(), "messages.1.role: Input should be 'user' or 'assistant'"; got != want {
		t.Fatalf("Error() = %q, want %q (no repeated path)", got, want)
	}
}
