package sim

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestReadAnthropicAgrees: the simulator's split reading of an Anthropic request gives the view
// that decoding all of it gives, whatever the conversation (prompts with empty text, string and
// block content, tool results, calls), the spacing and the spelling of the top-level keys, and
// whatever the conversation's last request was (a shorter one, or one that differs anywhere, near
// its end too).
func TestReadAnthropicAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.SampledFrom([]string{"", "hi", "run it", "a\nb", `q"uote`, "ünï"})
		block := func(t *rapid.T) map[string]any {
			switch rapid.IntRange(0, 3).Draw(t, "block") {
			case 0:
				return map[string]any{"type": "text", "text": text.Draw(t, "text")}
			case 1:
				var content any = text.Draw(t, "result")
				if rapid.Bool().Draw(t, "result blocks") {
					content = []any{map[string]any{"type": "text", "text": text.Draw(t, "result text")}}
				}
				return map[string]any{"type": "tool_result", "tool_use_id": "c", "content": content, "is_error": rapid.Bool().Draw(t, "is_error")}
			case 2:
				return map[string]any{"type": "tool_use", "id": "c", "name": "bash", "input": map[string]any{}}
			}
			return map[string]any{"type": "thinking", "thinking": "hm", "signature": "s"}
		}
		var msgs []any
		for i := range rapid.IntRange(0, 12).Draw(t, "messages") {
			role := []string{"user", "assistant"}[i%2]
			if rapid.IntRange(0, 9).Draw(t, "odd role") == 0 {
				role = "user"
			}
			var content any
			if rapid.Bool().Draw(t, "string content") {
				content = text.Draw(t, "content")
			} else {
				var bs []any
				for range rapid.IntRange(0, 3).Draw(t, "blocks") {
					bs = append(bs, block(t))
				}
				content = bs
			}
			msgs = append(msgs, map[string]any{"role": role, "content": content})
		}
		req := map[string]any{"model": rapid.SampledFrom([]string{"sim-1", "claude"}).Draw(t, "model"), "max_tokens": 100,
			"stream": rapid.Bool().Draw(t, "stream"), "messages": msgs}
		if rapid.Bool().Draw(t, "system") {
			req["system"] = "be brief"
		}
		if rapid.Bool().Draw(t, "tools") {
			req["tools"] = []any{map[string]any{"name": "bash", "input_schema": map[string]any{"type": "object"}}}
		}
		if rapid.Bool().Draw(t, "thinking") {
			req["thinking"] = map[string]any{"type": rapid.SampledFrom([]string{"enabled", "disabled", ""}).Draw(t, "thinking type"), "budget_tokens": 1024}
		}
		indent := rapid.Bool().Draw(t, "indent")
		capital := rapid.Bool().Draw(t, "capitalised key")
		repeated := rapid.Bool().Draw(t, "repeated key")
		encode := func(msgs []any) []byte {
			req["messages"] = msgs
			var body []byte
			if indent {
				body, _ = json.MarshalIndent(req, " ", "\t")
			} else {
				body, _ = json.Marshal(req)
			}
			s := string(body)
			if capital {
				s = strings.Replace(s, `"model"`, `"Model"`, 1)
			}
			if repeated {
				s = strings.Replace(s, `{`, `{"stream": true, `, 1)
			}
			return []byte(s)
		}
		// The conversation's requests, growing, with now and then one whose messages differ.
		var c readCache
		for n := range len(msgs) + 1 {
			sent := msgs[:n]
			switch edit := rapid.IntRange(0, 4).Draw(t, "edit"); {
			case n > 0 && edit == 0:
				sent = append([]any{map[string]any{"role": "user", "content": "edited"}}, msgs[1:n]...)
			case n > 0 && edit == 1:
				// One of the last few messages differs from the last request's, as a client's cache
				// marks on its last messages move on from one request to the next.
				k := max(0, n-1-rapid.IntRange(0, 3).Draw(t, "late"))
				sent = append(append(append([]any{}, msgs[:k]...), map[string]any{"role": "user", "content": "edited late"}), msgs[k+1:n]...)
			}
			body := encode(sent)
			want := readAnthropicWhole(body)
			if got := readAnthropic(body, nil); !reflect.DeepEqual(got, want) {
				t.Fatalf("split read %+v\nwhole read %+v\nof %s", got, want, body)
			}
			if got := readAnthropic(body, &c); !reflect.DeepEqual(got, want) {
				t.Fatalf("split read after the last request %+v\nwhole read %+v\nof %s", got, want, body)
			}
		}
	})
}
