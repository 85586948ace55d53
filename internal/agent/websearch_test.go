package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
)

// TestWebSearch: with web search asked for, Anthropic and Responses requests offer the provider's
// own search tool; the simulator searches (as the provider would) and the reply's server tool
// blocks are recorded as they came, exactly once, and sent back in the next request in place,
// which the simulator's validator accepts. Every other wire (a fork onto it) is sent none of them
// and its validator accepts that too (the harness's check). On Chat, which has no search tool,
// nothing is offered and nothing searched.
func TestWebSearch(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{noBash: true, cfg: func(c *agent.Config) { c.WebSearch = true }, script: steps(
			`{"web_search":{"query":"population of Tokyo","results":[{"url":"https://example.org/tokyo","title":"Tokyo"}]},"text":"About 14 million."}`,
			textStep("You are welcome."),
		)})
		expect(t, h.run(context.Background(), "how many live in Tokyo?"), fold.Replied, false)
		expect(t, h.run(context.Background(), "thanks"), fold.Replied, false)

		reqs := h.sim.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2", len(reqs))
		}
		first, second := string(reqs[0].Body), string(reqs[1].Body)
		msgs := all[*record.AssistantMessage](h.records())
		var server []record.Part
		for _, p := range msgs[0].Parts {
			if p.Type == record.PartServerTool {
				server = append(server, p)
			}
		}
		switch f.name {
		case "anthropic":
			if !strings.Contains(first, `{"type":"web_search_20250305","name":"web_search","max_uses":5}`) {
				t.Errorf("the request does not offer web search:\n%s", first)
			}
			if len(server) != 2 || server[0].Wire != record.WireAnthropic || server[0].CallID != server[1].CallID ||
				server[0].Text != "searched the web for population of Tokyo" || !strings.Contains(server[1].Text, "https://example.org/tokyo") {
				t.Fatalf("the server blocks recorded: %+v", server)
			}
			for _, p := range server {
				if !strings.Contains(second, p.Data) {
					t.Errorf("the next request lacks the block %s\n%s", p.Data, second)
				}
			}
			if strings.Index(second, `"server_tool_use"`) > strings.Index(second, `"web_search_tool_result"`) ||
				strings.Index(second, `"web_search_tool_result"`) > strings.Index(second, `About 14 million.`) {
				t.Errorf("the blocks are not where they stood:\n%s", second)
			}
		case "responses":
			if !strings.Contains(first, `{"type":"web_search"}`) {
				t.Errorf("the request does not offer web search:\n%s", first)
			}
			if len(server) != 1 || server[0].Wire != record.WireResponses || !strings.HasPrefix(server[0].CallID, "ws_") {
				t.Fatalf("the server item recorded: %+v", server)
			}
			if !strings.Contains(second, server[0].Data) || strings.Index(second, server[0].Data) > strings.Index(second, "About 14 million.") {
				t.Errorf("the next request lacks the web_search_call item in place %s\n%s", server[0].Data, second)
			}
		case "chat":
			if strings.Contains(first, "web_search") || len(server) != 0 {
				t.Errorf("Chat was offered or played a search:\n%s\n%+v", first, server)
			}
		}
		if text(msgs[0].Parts) != "About 14 million." {
			t.Errorf("the reply's text: %q", text(msgs[0].Parts))
		}
	})
}

// TestWebSearchAcrossWires: a context holding one wire's server tool blocks encodes for every
// wire, each request passing that wire's validator: the blocks go only to their own wire.
func TestWebSearchAcrossWires(t *testing.T) {
	call := `{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}}`
	result := `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://example.org","title":"E","encrypted_content":"x","page_age":null}]}`
	item := `{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"q"}}`
	msgs := []record.Message{
		{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: "search"}}},
		{Role: record.Assistant, Parts: []record.Part{
			{Type: record.PartServerTool, Wire: record.WireAnthropic, Name: "web_search", CallID: "srvtoolu_1", Data: call},
			{Type: record.PartServerTool, Wire: record.WireAnthropic, Name: "web_search", CallID: "srvtoolu_1", Data: result},
			{Type: record.PartText, Text: "Found."},
		}},
		{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: "again"}}},
		{Role: record.Assistant, Parts: []record.Part{
			{Type: record.PartServerTool, Wire: record.WireResponses, Name: "web_search", CallID: "ws_1", Data: item},
			{Type: record.PartText, Text: "Found again."},
		}},
		{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: "thanks"}}},
	}
	for _, f := range formats {
		for _, search := range []bool{false, true} {
			m := f.client("")
			body, err := m.Encode(provider.Request{Model: sim.DefaultModel, Messages: msgs, MaxTokens: 100, WebSearch: search})
			if err != nil {
				t.Fatalf("%s: %v", f.name, err)
			}
			if v := m.Validate(body); v != nil {
				t.Errorf("%s: %v\n%s", f.name, v, body)
			}
			s := string(body)
			own := map[string][]string{"anthropic": {call, result}, "responses": {item}}[f.name]
			for _, b := range own {
				if !strings.Contains(s, b) {
					t.Errorf("%s: its own block is not sent: %s", f.name, b)
				}
			}
			for _, b := range []string{call, result, item} {
				if !strings.Contains(strings.Join(own, ""), b) && strings.Contains(s, `"srvtoolu_1"`) && f.name != "anthropic" {
					t.Errorf("%s: another wire's block is sent:\n%s", f.name, s)
				}
			}
			if f.name != "responses" && strings.Contains(s, "ws_1") {
				t.Errorf("%s: the Responses item is sent:\n%s", f.name, s)
			}
		}
	}
}
