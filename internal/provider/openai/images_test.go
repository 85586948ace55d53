package openai

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider/recorded"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

func imageRequest() provider.Request {
	return provider.Request{Model: "gpt-5", MaxTokens: 100, Messages: []record.Message{
		{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: "look at the chart"}}},
		{Role: record.Assistant, Parts: []record.Part{{Type: record.PartToolCall, CallID: "call_1", Name: "read_file", Args: json.RawMessage(`{"path":"chart.png"}`)}}},
		{Role: record.User, Parts: []record.Part{{Type: record.PartToolResult, CallID: "call_1", Text: "[image: chart.png]", Outcome: record.OK,
			Images: []record.Part{{Type: record.PartImage, MediaType: "image/png", Data: "iVBORw0KGgo=", Name: "chart.png"}}}}},
	}}
}

// On Responses, a tool result with an image is a function_call_output whose output is a list of
// input_text and input_image (a data URL); the validator accepts it and refuses a part of another
// type or an image with no URL.
func TestResponsesToolResultImage(t *testing.T) {
	body, err := EncodeResponses(imageRequest())
	if err != nil {
		t.Fatal(err)
	}
	if v := ValidateResponses(body); v != nil {
		t.Fatalf("the validator refuses it: %v\n%s", v, body)
	}
	want := `{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"[image: chart.png]"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"auto"}]}`
	if !strings.Contains(string(body), want) {
		t.Errorf("the body lacks %s\n%s", want, body)
	}
	for _, bad := range []string{
		strings.Replace(string(body), `"type":"input_image"`, `"type":"output_text"`, 1),
		strings.Replace(string(body), `"image_url":"data:image/png;base64,iVBORw0KGgo=",`, ``, 1),
	} {
		if v := ValidateResponses([]byte(bad)); v == nil {
			t.Errorf("the validator accepts %s", bad)
		}
	}
}

// On Chat, the tool message says the images follow, and the user message after it carries them;
// the validator accepts the request.
func TestChatToolResultImage(t *testing.T) {
	body, err := EncodeChat(imageRequest())
	if err != nil {
		t.Fatal(err)
	}
	if v := ValidateChat(body); v != nil {
		t.Fatalf("the validator refuses it: %v\n%s", v, body)
	}
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	n := len(req.Messages)
	tool, user := req.Messages[n-2], req.Messages[n-1]
	if tool.Role != "tool" || !strings.Contains(string(tool.Content), "chart.png (image/png)") || !strings.Contains(string(tool.Content), "follow in the next user message") {
		t.Errorf("the tool message: %s %s", tool.Role, tool.Content)
	}
	want := `[{"type":"text","text":"[rein: the image(s) of the result of tool call call_1]"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]`
	if user.Role != "user" || string(user.Content) != want {
		t.Errorf("the user message: %s %s\nwant %s", user.Role, user.Content, want)
	}
}

func TestTakesImages(t *testing.T) {
	for model, want := range map[string]bool{
		"gpt-4o": true, "gpt-4o-mini": true, "gpt-4.1": true, "gpt-5": true, "gpt-5-codex": true, "o3": true, "o4-mini": true,
		"openai/gpt-4o": true, "anthropic/claude-sonnet-4.5": true, "google/gemini-2.5-pro": true, "o3-mini": false, "o1-mini": false, "gpt-3.5-turbo": false, "qwen3": false, "llama3.2": false, "": false,
	} {
		if got := TakesImages(model); got != want {
			t.Errorf("TakesImages(%q) = %v, want %v", model, got, want)
		}
	}
}

// The recorded Responses stream with a web search: the web_search_call item becomes a server tool
// part before the text, kept byte for byte, and a follow-up request carrying the reply back passes
// the validator with the item in place.
func TestRecordedWebSearchRoundTrip(t *testing.T) {
	dir := recorded.Dir(t)
	f, err := os.Open(filepath.Join(dir, "openai-responses", "fantasy-web-search-stream.response.sse"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reply, _, err := decodeStream(f, respDec)
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.Parts) < 2 || reply.Parts[0].Type != record.PartServerTool || reply.Parts[1].Type != record.PartText {
		t.Fatalf("parts: %+v", reply.Parts)
	}
	p := reply.Parts[0]
	if p.Wire != record.WireResponses || p.CallID != "ws_0200025d411b0585016a3c13b4825c81a391999cec332e6f02" ||
		p.Text != "searched the web for current population of Tokyo 2024" || !strings.Contains(p.Data, `"queries":["current population of Tokyo 2024"]`) {
		t.Errorf("the search part: %+v", p)
	}
	req := provider.Request{Model: "gpt-4.1", WebSearch: true, Messages: []record.Message{
		{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: "What is the current population of Tokyo?"}}},
		{Role: record.Assistant, Parts: reply.Parts},
		{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: "And Osaka?"}}},
	}}
	body, err := EncodeResponses(req)
	if err != nil {
		t.Fatal(err)
	}
	if v := ValidateResponses(body); v != nil {
		t.Fatalf("%v\n%s", v, body)
	}
	if !strings.Contains(string(body), `"tools":[{"type":"web_search"}]`) || !strings.Contains(string(body), p.Data) {
		t.Errorf("the follow-up request:\n%s", body)
	}
}
