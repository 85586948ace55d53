package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/openai"
	"github.com/reinhq/rein/internal/record"
)

// TestWiresTakeMCPTools: a server's tools, calls to each and their real results (every kind of
// content, an error, an empty result, a stopped call) make requests all three wires' validators
// pass.
func TestWiresTakeMCPTools(t *testing.T) {
	srv, _ := stdioServer(t, "fx", "plain")
	m, _ := start(t, srv)
	for _, x := range m.Tools() {
		x.(*Tool).SetImages(true) // the kinds tool's picture goes as an image part
	}
	var specs []provider.Tool
	pictures := 0
	var calls, results []record.Part
	for i, x := range m.Tools() {
		spec := x.Spec()
		specs = append(specs, spec)
		id := fmt.Sprintf("call_%d", i)
		args := `{}`
		if spec.Name == "mcp__fx__echo" {
			args = `{"text":"hi"}`
		}
		if spec.Name == "mcp__fx__die" || spec.Name == "mcp__fx__stubborn" || spec.Name == "mcp__fx__wait" || spec.Name == "mcp__fx__grow" {
			// Told as a stopped call rather than run (they end the server or block).
			calls = append(calls, record.Part{Type: record.PartToolCall, CallID: id, Name: spec.Name, Args: json.RawMessage(args)})
			results = append(results, record.Part{Type: record.PartToolResult, CallID: id, Text: "interrupted: the call was stopped", IsError: true, Outcome: record.Interrupted})
			continue
		}
		res := run(t, m, spec.Name, args)
		pictures += len(res.Images)
		calls = append(calls, record.Part{Type: record.PartToolCall, CallID: id, Name: spec.Name, Args: json.RawMessage(args)})
		results = append(results, record.Part{Type: record.PartToolResult, CallID: id, Text: res.Content, IsError: res.IsError, Outcome: res.Outcome, Images: res.Images})
	}
	if pictures != 1 {
		t.Fatalf("%d pictures in the results, want the kinds tool's one", pictures)
	}
	req := provider.Request{
		Model: "sim-1", System: "test", MaxTokens: 1024, Tools: specs,
		Messages: []record.Message{
			{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: "use the tools"}}},
			{Role: record.Assistant, Parts: calls},
			{Role: record.User, Parts: results},
		},
	}
	for _, c := range []struct {
		name  string
		model provider.Model
	}{
		{"anthropic", anthropic.New(anthropic.Config{BaseURL: "http://127.0.0.1:1", APIKey: "k"})},
		{"chat", openai.NewChat(openai.Config{BaseURL: "http://127.0.0.1:1/v1", APIKey: "k"})},
		{"responses", openai.NewResponses(openai.Config{BaseURL: "http://127.0.0.1:1/v1", APIKey: "k"})},
	} {
		body, err := c.model.Encode(req)
		if err != nil {
			t.Fatalf("%s: encode: %v", c.name, err)
		}
		if v := c.model.Validate(body); v != nil {
			t.Fatalf("%s: the validator refuses a request with MCP tools: %v", c.name, v)
		}
		if !strings.Contains(string(body), "iVBORw0KGgpmYWtl") {
			t.Errorf("%s: the picture is not in the request", c.name)
		}
	}
}
