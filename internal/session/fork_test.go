package session

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/openai"
	"github.com/reinhq/rein/internal/record"
)

// validateAll runs every provider's validator on the request a state would send next.
func validateAll(t *testing.T, st *fold.State) {
	t.Helper()
	req := provider.Request{Model: "m", System: st.System(), Messages: st.Context(), MaxTokens: 1024,
		Tools: []provider.Tool{{Name: "bash", Description: "run", Schema: json.RawMessage(`{"type":"object"}`)}}}
	for name, f := range map[string]struct {
		enc func(provider.Request) ([]byte, error)
		val func([]byte) *provider.Violation
	}{
		"anthropic": {anthropic.Encode, anthropic.Validate},
		"chat":      {openai.EncodeChat, openai.ValidateChat},
		"responses": {openai.EncodeResponses, openai.ValidateResponses},
	} {
		body, err := f.enc(req)
		if err != nil {
			t.Fatalf("%s encode: %v", name, err)
		}
		if v := f.val(body); v != nil {
			t.Errorf("%s refuses the request: %v\n%s", name, v, body)
		}
	}
}

// A child forked while its parent's spawning batch is still owed inherits the parent's context
// without the dangling call; it continues the parent's turn ids; its first request passes every
// provider's validator; and the parent's departed turns read back through the child's pointers.
func TestForkMidBatch(t *testing.T) {
	root := t.TempDir()
	p, err := Create(filepath.Join(root, "parent"), Options{Now: clock()}, started("parent"))
	must(t, err)
	defer p.Close()
	must(t, p.Append(&record.System{Text: "you are an agent"}))
	for i := 0; i < 3; i++ {
		exchange(t, p, i)
	}
	must(t, p.Commit(&record.Evicted{From: 1, To: 3, Note: "the first step", By: record.ByModel}))
	must(t, p.Append(&record.UserPrompt{Turn: p.Snapshot().Next(), Text: "split the work"}))
	spawn := p.Snapshot().Next()
	must(t, p.Append(&record.AssistantMessage{Turn: spawn, Parts: []record.Part{
		{Type: record.PartText, Text: "starting a helper"},
		{Type: record.PartToolCall, CallID: "spawn1", Name: "agents", Args: json.RawMessage(`{"op":"start","prompt":"x","inherit":true}`)},
	}}))
	if p.Snapshot().Phase() != fold.AwaitingToolResults {
		t.Fatal("the parent should be mid-batch")
	}
	inh, err := p.Inheritance(0)
	must(t, err)
	c, err := Create(filepath.Join(root, "child"), Options{Now: clock()}, started("child"))
	must(t, err)
	defer c.Close()
	must(t, c.Commit(inh))
	must(t, c.Append(&record.System{Text: "you are a child agent"}))
	must(t, c.Append(&record.UserPrompt{Turn: c.Snapshot().Next(), Text: "do your part"}))
	if got, want := c.Snapshot().Newest(), spawn+1; got != want {
		t.Errorf("the child's first turn is %d, want %d (it continues the parent's sequence)", got, want)
	}
	for _, m := range c.Snapshot().Context() {
		for _, part := range m.Parts {
			if part.CallID == "spawn1" {
				t.Fatal("the parent's dangling spawning call reached the child's context")
			}
		}
	}
	validateAll(t, c.Snapshot())
	// The evicted parent turns read back through the child's pointers, byte-identical.
	for id := int64(1); id <= 3; id++ {
		want, err := p.ReadTurn(id)
		must(t, err)
		got, err := c.ReadTurn(id)
		must(t, err)
		if gb, _ := json.Marshal(got); string(gb) != string(mustJSON(want)) {
			t.Errorf("turn %d reads back differently through the child", id)
		}
	}
	c.Close()
	// The child replays without its parent's file.
	if _, _, err := Replay(nil, filepath.Join(root, "child", journal.FileName)); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }
