package anthropic

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"pgregory.net/rapid"
)

// genBlock draws one content block from small pools, so that ids collide, texts are empty or
// blank, and blocks stand where the rules forbid them.
func genBlock(t *rapid.T) string {
	cache := rapid.SampledFrom([]string{"", "", "", `,"cache_control":{"type":"ephemeral"}`, `,"cache_control":null`}).Draw(t, "cache")
	id := rapid.SampledFrom([]string{"a", "b", "c", "", "x y"}).Draw(t, "id")
	switch rapid.IntRange(0, 6).Draw(t, "block") {
	case 0, 1:
		return fmt.Sprintf(`{"type":"text","text":%q%s}`, rapid.SampledFrom([]string{"ok", "", " ", "ok ", "é\n"}).Draw(t, "text"), cache)
	case 2:
		return fmt.Sprintf(`{"type":"tool_use","id":%q,"name":"bash","input":%s%s}`, id, rapid.SampledFrom([]string{"{}", `{"a":1}`, "[]"}).Draw(t, "input"), cache)
	case 3:
		return fmt.Sprintf(`{"type":"tool_result","tool_use_id":%q,"content":%s%s}`, id, rapid.SampledFrom([]string{`"out"`, `[]`, `[{"type":"text","text":""}]`, `null`}).Draw(t, "content"), cache)
	case 4:
		return `{"type":"thinking","thinking":"hmm","signature":"s"}`
	case 5:
		return `{"type":"redacted_thinking","data":"d"}`
	}
	return rapid.SampledFrom([]string{`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"x"}}`, `{"type":"nope"}`, `{"type":"text"}`}).Draw(t, "odd")
}

func genMessage(t *rapid.T) string {
	role := rapid.SampledFrom([]string{"user", "assistant", "user", "assistant", "system", "bot"}).Draw(t, "role")
	if rapid.IntRange(0, 5).Draw(t, "string") == 0 {
		return fmt.Sprintf(`{"role":%q,"content":%q}`, role, rapid.SampledFrom([]string{"hi", "", " "}).Draw(t, "content"))
	}
	blocks := make([]string, rapid.IntRange(0, 3).Draw(t, "blocks"))
	for i := range blocks {
		blocks[i] = genBlock(t)
	}
	return fmt.Sprintf(`{"role":%q,"content":[%s]}`, role, strings.Join(blocks, ","))
}

// validConversation draws a conversation the rules accept, mostly, for the incremental path to
// keep: a user prompt, then tool turns answered at once.
func validConversation(t *rapid.T, thinking bool) []string {
	msgs := []string{`{"role":"user","content":"start"}`}
	for i, n := 0, rapid.IntRange(0, 6).Draw(t, "turns"); i < n; i++ {
		id := fmt.Sprintf("t%d", i)
		think := ""
		if thinking {
			think = `{"type":"thinking","thinking":"hmm","signature":"s"},`
		}
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"assistant","content":[%s{"type":"text","text":"running"},{"type":"tool_use","id":%q,"name":"bash","input":{}}]}`, think, id),
			fmt.Sprintf(`{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":"ok"}]}`, id))
	}
	return msgs
}

// TestIncrementalRules checks that the incremental validator's verdict is Validate's on
// successive requests whose messages keep a prefix of the last request's and add any messages
// after it: valid conversations, and messages drawn to break every rule relating them.
func TestIncrementalRules(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		thinking := rapid.Bool().Draw(t, "thinking")
		head := `{"model":"m","max_tokens":4096,"system":[{"type":"text","text":"sys"` +
			rapid.SampledFrom([]string{"", `,"cache_control":{"type":"ephemeral"}`}).Draw(t, "system-cache") + `}],"messages":[`
		tail := `],"tools":[{"name":"bash","input_schema":{"type":"object"}}]`
		if thinking {
			tail += `,"thinking":{"type":"enabled","budget_tokens":1024}`
		}
		tail += `,"stream":true}`
		v := NewValidator()
		msgs := validConversation(t, thinking)
		for step, n := 0, rapid.IntRange(1, 12).Draw(t, "requests"); step < n; step++ {
			body := []byte(head + strings.Join(msgs, ",") + tail)
			want := Validate(body)
			if got := v.Validate(body); !reflect.DeepEqual(got, want) {
				t.Fatalf("request %d: incremental %v, whole %v\n%s", step, got, want, body)
			}
			if want != nil && rapid.Bool().Draw(t, "repair") {
				msgs = validConversation(t, thinking)
				continue
			}
			msgs = msgs[:rapid.IntRange(max(0, len(msgs)-3), len(msgs)).Draw(t, "keep")]
			for k := rapid.IntRange(0, 3).Draw(t, "add"); k > 0; k-- {
				msgs = append(msgs, genMessage(t))
			}
		}
	})
}

// FuzzIncremental judges two bodies in turn with one incremental validator: each verdict must be
// Validate's.
func FuzzIncremental(f *testing.F) {
	req := provider.Request{Model: "m", System: "sys", MaxTokens: 4096, Messages: []record.Message{user(text("start"))}}
	first, _ := Encode(req)
	req.Messages = append(req.Messages, assistant(text("running"), call("toolu_1", "ls", `{}`)), user(result("toolu_1", "ok", false)))
	second, _ := Encode(req)
	f.Add(first, second)
	f.Add(second, first)
	f.Add(second, []byte(strings.Replace(string(second), `"user"`, `"assistant"`, 1)))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		v := NewValidator()
		for _, body := range [][]byte{a, b, a} {
			if got, want := v.Validate(body), Validate(body); !reflect.DeepEqual(got, want) {
				t.Fatalf("incremental %v, whole %v\n%s", got, want, body)
			}
		}
	})
}
