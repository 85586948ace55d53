package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
)

// Reasoning end to end: the real agent, the real clients and the simulator's policy, which
// reasons when a request asks it to, over several tool turns.

// threeCommands draws three tool rounds from the simulator's policy, then a summary.
const threeCommands = "run `echo one`, then `echo two`, then `echo three`"

func formatNamed(t *testing.T, name string) format {
	for _, f := range formats {
		if f.name == name {
			return f
		}
	}
	t.Fatalf("no format %s", name)
	return format{}
}

// thinkingOf returns a message's thinking parts.
func thinkingOf(parts []record.Part) []record.Part {
	var out []record.Part
	for _, p := range parts {
		if p.Type == record.PartThinking {
			out = append(out, p)
		}
	}
	return out
}

// TestThinkingAcrossToolTurns: with a thinking budget, every Anthropic request carries the
// thinking config under a larger max_tokens, every reply's signed thinking is committed byte for
// byte, and each later request sends it back, signature and all, at the head of its assistant
// message (the rule the API holds a tool loop to, which the simulator's validator enforces).
func TestThinkingAcrossToolTurns(t *testing.T) {
	h := newHarness(t, formatNamed(t, "anthropic"), setup{cfg: func(c *agent.Config) {
		c.Thinking, c.MaxTokens = 4000, 8192
	}})
	expect(t, h.run(context.Background(), threeCommands), fold.Replied, false)
	msgs := all[*record.AssistantMessage](h.records())
	if len(msgs) != 4 {
		t.Fatalf("%d assistant messages, want 3 tool turns and a reply", len(msgs))
	}
	for i, m := range msgs {
		th := thinkingOf(m.Parts)
		if len(th) != 1 || m.Parts[0].Type != record.PartThinking || !strings.HasPrefix(th[0].Signature, "sim_sig_") {
			t.Fatalf("message %d: thinking %+v, want one signed block first", i, th)
		}
	}
	reqs := h.sim.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	for i, r := range reqs {
		var body struct {
			MaxTokens int             `json:"max_tokens"`
			Thinking  json.RawMessage `json:"thinking"`
			Messages  []struct {
				Role    string `json:"role"`
				Content []struct {
					Type      string `json:"type"`
					Thinking  string `json:"thinking"`
					Signature string `json:"signature"`
				} `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		if string(body.Thinking) != `{"type":"enabled","budget_tokens":4000}` || body.MaxTokens != 8192 {
			t.Errorf("request %d: thinking %s, max_tokens %d", i, body.Thinking, body.MaxTokens)
		}
		k := 0
		for _, m := range body.Messages {
			if m.Role != "assistant" {
				continue
			}
			b, want := m.Content[0], thinkingOf(msgs[k].Parts)[0]
			if b.Type != "thinking" || b.Thinking != want.Text || b.Signature != want.Signature {
				t.Errorf("request %d, assistant message %d begins with %+v, want the thinking committed %+v", i, k, b, want)
			}
			k++
		}
		if k != i {
			t.Errorf("request %d carries %d assistant messages, want %d", i, k, i)
		}
	}
}

// TestReasoningAcrossToolTurns: with an effort, every Responses request asks for the reasoning's
// encrypted content; each reasoning item is committed whole, and every later request carries
// each one back byte for byte, right before the function call it preceded. The simulator refuses
// encrypted content it did not issue for that item, and its validator a misplaced item.
func TestReasoningAcrossToolTurns(t *testing.T) {
	h := newHarness(t, formatNamed(t, "responses"), setup{cfg: func(c *agent.Config) { c.Effort = "high" }})
	expect(t, h.run(context.Background(), threeCommands), fold.Replied, false)
	msgs := all[*record.AssistantMessage](h.records())
	if len(msgs) != 4 {
		t.Fatalf("%d assistant messages, want 3 tool turns and a reply", len(msgs))
	}
	var items []string // each turn's reasoning item, as committed
	var callIDs []string
	for i, m := range msgs {
		th := thinkingOf(m.Parts)
		if len(th) != 1 || th[0].Text == "" || !strings.Contains(th[0].Data, `"encrypted_content":"sim_enc_`) {
			t.Fatalf("message %d: thinking %+v, want one reasoning item with its encrypted content", i, th)
		}
		items = append(items, th[0].Data)
		if c := calls(m.Parts); len(c) == 1 {
			callIDs = append(callIDs, c[0].CallID)
		}
	}
	reqs := h.sim.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	for i, r := range reqs {
		var body struct {
			Reasoning json.RawMessage   `json:"reasoning"`
			Include   []string          `json:"include"`
			Store     *bool             `json:"store"`
			Input     []json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		if string(body.Reasoning) != `{"effort":"high","summary":"auto"}` || len(body.Include) != 1 || body.Include[0] != "reasoning.encrypted_content" || body.Store == nil || *body.Store {
			t.Errorf("request %d: reasoning %s, include %v, store %v", i, body.Reasoning, body.Include, body.Store)
		}
		sent := 0
		for j, it := range body.Input {
			if !bytes.Contains(it, []byte(`"type":"reasoning"`)) {
				continue
			}
			if sent >= len(items) || string(it) != items[sent] {
				t.Fatalf("request %d, input[%d]: reasoning item %s, want the one committed for turn %d", i, j, it, sent)
			}
			// What followed it in the reply: the policy's text ("Running ..."), then its call.
			var next [2]struct {
				Type   string `json:"type"`
				Role   string `json:"role"`
				CallID string `json:"call_id"`
			}
			if j+2 >= len(body.Input) || json.Unmarshal(body.Input[j+1], &next[0]) != nil || json.Unmarshal(body.Input[j+2], &next[1]) != nil ||
				next[0].Type != "message" || next[0].Role != "assistant" || next[1].Type != "function_call" || next[1].CallID != callIDs[sent] {
				t.Errorf("request %d: reasoning item %d is not followed by its turn's text and function call %s: %+v", i, sent, callIDs[sent], next)
			}
			sent++
		}
		if sent != i {
			t.Errorf("request %d carries %d reasoning items back, want %d", i, sent, i)
		}
	}
}

// TestReasoningOnlyReply: a Responses reply with reasoning and nothing else is empty to
// admission (committed with a stub and nudged), and the next request still passes: the reasoning
// item goes back before the stub it is committed with.
func TestReasoningOnlyReply(t *testing.T) {
	h := newHarness(t, formatNamed(t, "responses"), setup{
		script: steps(`{"thinking":{"text":"Only thinking, no answer."}}`, textStep("An answer.")),
		cfg:    func(c *agent.Config) { c.Effort = "low" },
	})
	expect(t, h.run(context.Background(), "hello"), fold.Replied, false)
	rs := h.records()
	if n := all[*record.Nudge](rs); len(n) != 1 || n[0].Reason != "empty" {
		t.Fatalf("nudges %+v, want one for the empty reply", n)
	}
	first := all[*record.AssistantMessage](rs)[0]
	if th := thinkingOf(first.Parts); len(th) != 1 || th[0].Data == "" || text(first.Parts) != fold.EmptyStub {
		t.Fatalf("the reasoning-only reply was committed as %+v", first.Parts)
	}
	second := string(h.sim.Requests()[1].Body)
	at := strings.Index(second, `"type":"reasoning"`)
	if at < 0 || !strings.Contains(second[at:], fold.EmptyStub) {
		t.Errorf("the second request does not carry the reasoning before its stub: %s", second)
	}
}

// TestReasoningChat: Chat sends the effort as reasoning_effort, keeps the reasoning_content that
// comes back as unsigned thinking in the record, and never sends it back.
func TestReasoningChat(t *testing.T) {
	h := newHarness(t, formatNamed(t, "chat"), setup{cfg: func(c *agent.Config) { c.Effort = "medium" }})
	expect(t, h.run(context.Background(), "run `echo one`"), fold.Replied, false)
	msgs := all[*record.AssistantMessage](h.records())
	if len(msgs) != 2 {
		t.Fatalf("%d assistant messages, want a tool turn and a reply", len(msgs))
	}
	var thoughts []string
	for i, m := range msgs {
		th := thinkingOf(m.Parts)
		if len(th) != 1 || th[0].Text == "" || th[0].Signature != "" || th[0].Data != "" {
			t.Fatalf("message %d: thinking %+v, want the reasoning_content kept unsigned", i, th)
		}
		thoughts = append(thoughts, th[0].Text)
	}
	for i, r := range h.sim.Requests() {
		if !bytes.Contains(r.Body, []byte(`"reasoning_effort":"medium"`)) {
			t.Errorf("request %d has no reasoning_effort: %s", i, r.Body)
		}
		for _, th := range thoughts {
			if bytes.Contains(r.Body, []byte(th)) {
				t.Errorf("request %d sends reasoning back: %s", i, r.Body)
			}
		}
	}
}

// TestThinkingUnderASmallWindow: the budget stays below the output limit a small window allows,
// as Anthropic requires, and thinking is left off when the limit cannot hold the least budget.
func TestThinkingUnderASmallWindow(t *testing.T) {
	for _, c := range []struct {
		window   int64
		thinking string // the thinking config sent, "" for none
	}{
		{200_000, `"max_tokens":8192,"system"`},
		{12_000, `"max_tokens":3000,`},
		{4_000, `"max_tokens":1000,`},
	} {
		h := newHarness(t, formatNamed(t, "anthropic"), setup{cfg: func(cfg *agent.Config) {
			cfg.Thinking, cfg.MaxTokens, cfg.Window = 4000, 8192, c.window
		}})
		expect(t, h.run(context.Background(), "hello"), fold.Replied, false)
		body := string(h.sim.Requests()[0].Body)
		want := map[int64]string{200_000: `"thinking":{"type":"enabled","budget_tokens":4000}`, 12_000: `"thinking":{"type":"enabled","budget_tokens":2999}`}[c.window]
		if !strings.Contains(body, c.thinking) || want != "" && !strings.Contains(body, want) || want == "" && strings.Contains(body, `"thinking":{`) {
			t.Errorf("window %d: want %s and %q in %.300s…%s", c.window, c.thinking, want, body, body[max(0, len(body)-120):])
		}
	}
}
