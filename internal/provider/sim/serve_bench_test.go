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
// conversation at 100 to 300 turns.
//
//	go test -run '^$' -bench ServeToolTurn ./internal/provider/sim
func BenchmarkServeToolTurn(b *testing.B) {
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
		body, _ := json.Marshal(map[string]any{"model": "sim-1", "max_tokens": 8192, "stream": true, "system": "You are a coding agent.", "tools": tools, "messages": msgs})
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
