package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
)

// BenchmarkServeToolTurn measures the simulator's handling of one request of a long tool-calling
// conversation (Anthropic wire): validation, reading and the reply, the request growing by one
// tool turn each time, as rein bench turns sends them. Each iteration is one request, with the
// conversation at 100 to 300 turns. In "marked", the last two messages of each request carry a
// cache breakpoint, as rein's requests do, so each request's earlier messages differ from the
// last request's near its end.
//
//	go test -run '^$' -bench ServeToolTurn ./internal/provider/sim
func BenchmarkServeToolTurn(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchServeToolTurn(b, false) })
	b.Run("marked", func(b *testing.B) { benchServeToolTurn(b, true) })
}

func benchServeToolTurn(b *testing.B, marked bool) {
	const from, to = 100, 300
	bodies := make([][]byte, 0, to)
	msgs := []any{map[string]any{"role": "user", "content": "run `echo x` again and again"}}
	tools := []any{}
	for i := range 10 {
		tools = append(tools, map[string]any{"name": fmt.Sprintf("tool_%d", i), "description": "what the tool does, at some length",
			"input_schema": map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}}})
	}
	for i := range to {
		id := fmt.Sprintf("toolu_%d", i)
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": id, "name": "tool_0", "input": map[string]any{"command": "echo x"}}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": id, "content": "x\n\n[turn " + fmt.Sprint(i) + "]"}}})
		sent := msgs
		if marked {
			sent = append([]any{}, msgs...)
			for _, k := range []int{len(sent) - 2, len(sent) - 1} {
				m := sent[k].(map[string]any)
				blocks := append([]any{}, m["content"].([]any)...)
				last := map[string]any{"cache_control": map[string]any{"type": "ephemeral"}}
				for key, v := range blocks[len(blocks)-1].(map[string]any) {
					last[key] = v
				}
				blocks[len(blocks)-1] = last
				sent[k] = map[string]any{"role": m["role"], "content": blocks}
			}
		}
		body, _ := json.Marshal(map[string]any{"model": "sim-1", "max_tokens": 8192, "stream": true, "system": "You are a coding agent.", "tools": tools, "messages": sent})
		bodies = append(bodies, body)
	}
	s := New(Options{MaxLogged: 1})
	i := 0
	for b.Loop() {
		body := bodies[from+i%(to-from)]
		i++
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/messages", bytes.NewReader(body)))
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}
