package openai

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"pgregory.net/rapid"
)

func genChatMessage(t *rapid.T) string {
	id := func() string { return rapid.SampledFrom([]string{"a", "b", "c", ""}).Draw(t, "id") }
	content := func() string {
		return rapid.SampledFrom([]string{`"hi"`, `""`, `null`, `[]`, `[{"type":"text","text":""}]`, `[{"type":"text","text":"x"}]`, `[{"type":"refusal"}]`, `7`}).Draw(t, "content")
	}
	switch rapid.IntRange(0, 5).Draw(t, "role") {
	case 0:
		return fmt.Sprintf(`{"role":"user","content":%s}`, content())
	case 1, 2:
		calls := make([]string, rapid.IntRange(0, 2).Draw(t, "calls"))
		for i := range calls {
			calls[i] = fmt.Sprintf(`{"id":%q,"type":"function","function":{"name":"bash","arguments":%q}}`, id(),
				rapid.SampledFrom([]string{"{}", "[]", "{bad"}).Draw(t, "args"))
		}
		tc := ""
		if len(calls) > 0 {
			tc = `,"tool_calls":[` + strings.Join(calls, ",") + `]`
		}
		return fmt.Sprintf(`{"role":"assistant","content":%s%s}`, content(), tc)
	case 3, 4:
		return fmt.Sprintf(`{"role":"tool","tool_call_id":%q,"content":%s}`, id(), content())
	}
	return fmt.Sprintf(`{"role":%q,"content":%s}`, rapid.SampledFrom([]string{"system", "developer", "function", "bot"}).Draw(t, "other"), content())
}

func chatConversation(t *rapid.T) []string {
	msgs := []string{`{"role":"system","content":"sys"}`, `{"role":"user","content":"start"}`}
	for i, n := 0, rapid.IntRange(0, 6).Draw(t, "turns"); i < n; i++ {
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"assistant","content":null,"tool_calls":[{"id":"t%d","type":"function","function":{"name":"bash","arguments":"{}"}}]}`, i),
			fmt.Sprintf(`{"role":"tool","tool_call_id":"t%d","content":"ok"}`, i))
	}
	return msgs
}

func genRespItem(t *rapid.T) string {
	id := func() string { return rapid.SampledFrom([]string{"a", "b", "c", ""}).Draw(t, "id") }
	switch rapid.IntRange(0, 6).Draw(t, "type") {
	case 0:
		return fmt.Sprintf(`{"role":%q,"content":%s}`, rapid.SampledFrom([]string{"user", "assistant", "bot"}).Draw(t, "role"),
			rapid.SampledFrom([]string{`"hi"`, `""`, `[]`, `[{"type":"input_text","text":"x"}]`, `[{"type":"output_text","text":""}]`}).Draw(t, "content"))
	case 1:
		return fmt.Sprintf(`{"type":"message","id":%q,"role":"assistant","content":[{"type":"output_text","text":"ok"}]}`, id())
	case 2, 3:
		return fmt.Sprintf(`{"type":"function_call","id":%q,"call_id":%q,"name":"bash","arguments":"{}"}`, id(), id())
	case 4:
		return fmt.Sprintf(`{"type":"function_call_output","call_id":%q,"output":"ok"}`, id())
	case 5:
		enc := rapid.SampledFrom([]string{"", `,"encrypted_content":"e"`, `,"encrypted_content":""`}).Draw(t, "encrypted")
		return fmt.Sprintf(`{"type":"reasoning","id":"rs","summary":[]%s}`, enc)
	}
	return `{"type":"web_search_call"}`
}

func respConversation(t *rapid.T) []string {
	items := []string{`{"role":"user","content":"start"}`}
	for i, n := 0, rapid.IntRange(0, 6).Draw(t, "turns"); i < n; i++ {
		items = append(items,
			`{"type":"reasoning","id":"rs","summary":[],"encrypted_content":"e"}`,
			fmt.Sprintf(`{"type":"function_call","id":"fc%d","call_id":"t%d","name":"bash","arguments":"{}"}`, i, i),
			fmt.Sprintf(`{"type":"function_call_output","call_id":"t%d","output":"ok"}`, i))
	}
	return items
}

// incrementalRules checks one wire: successive requests whose elements keep a prefix of the
// last request's and add any after it, judged by inc, must each get whole's verdict.
func incrementalRules(t *rapid.T, head, tail string, whole func([]byte) *provider.Violation, inc provider.Validator,
	valid func(*rapid.T) []string, gen func(*rapid.T) string) {
	elems := valid(t)
	for step, n := 0, rapid.IntRange(1, 12).Draw(t, "requests"); step < n; step++ {
		body := []byte(head + strings.Join(elems, ",") + tail)
		want := whole(body)
		if got := inc.Validate(body); !reflect.DeepEqual(got, want) {
			t.Fatalf("request %d: incremental %v, whole %v\n%s", step, got, want, body)
		}
		if want != nil && rapid.Bool().Draw(t, "repair") {
			elems = valid(t)
			continue
		}
		elems = elems[:rapid.IntRange(max(0, len(elems)-3), len(elems)).Draw(t, "keep")]
		for k := rapid.IntRange(0, 3).Draw(t, "add"); k > 0; k-- {
			elems = append(elems, gen(t))
		}
	}
}

// TestIncrementalRules checks both wires' incremental validators against the whole-body ones on
// conversations drawn to break every rule relating messages (items), and on valid ones.
func TestIncrementalRules(t *testing.T) {
	t.Run("chat", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			incrementalRules(t, `{"model":"m","messages":[`, `],"tools":[{"type":"function","function":{"name":"bash","parameters":{}}}],"stream":true}`,
				ValidateChat, NewChatValidator(), chatConversation, genChatMessage)
		})
	})
	t.Run("responses", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			store := rapid.SampledFrom([]string{"", `,"store":false`, `,"store":true`}).Draw(t, "store")
			incrementalRules(t, `{"model":"m","instructions":"sys","input":[`, `],"tools":[{"type":"function","name":"bash","parameters":{}}]`+store+`,"stream":true}`,
				ValidateResponses, NewResponsesValidator(), respConversation, genRespItem)
		})
	})
}

func fuzzIncremental(f *testing.F, encode func(provider.Request) ([]byte, error), whole func([]byte) *provider.Violation, inc func() provider.Validator) {
	req := sampleRequest()
	full, _ := encode(req)
	req.Messages = req.Messages[:len(req.Messages)-1]
	shorter, _ := encode(req)
	f.Add(shorter, full)
	f.Add(full, shorter)
	f.Add(full, []byte(strings.Replace(string(full), `"user"`, `"assistant"`, 1)))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		v := inc()
		for _, body := range [][]byte{a, b, a} {
			if got, want := v.Validate(body), whole(body); !reflect.DeepEqual(got, want) {
				t.Fatalf("incremental %v, whole %v\n%s", got, want, body)
			}
		}
	})
}

// FuzzIncrementalChat judges two bodies in turn with one incremental validator: each verdict
// must be ValidateChat's.
func FuzzIncrementalChat(f *testing.F) {
	fuzzIncremental(f, EncodeChat, ValidateChat, NewChatValidator)
}

// FuzzIncrementalResponses is FuzzIncrementalChat for the Responses API.
func FuzzIncrementalResponses(f *testing.F) {
	fuzzIncremental(f, EncodeResponses, ValidateResponses, NewResponsesValidator)
}
