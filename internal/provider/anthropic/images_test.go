package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// imageRequest is a request whose tool result carries a picture after its text.
func imageRequest(media string) provider.Request {
	return provider.Request{Model: "claude-sonnet-4-5", MaxTokens: 100, Messages: []record.Message{
		{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: "look at the chart"}}},
		{Role: record.Assistant, Parts: []record.Part{{Type: record.PartToolCall, CallID: "toolu_1", Name: "read_file", Args: json.RawMessage(`{"path":"chart.png"}`)}}},
		{Role: record.User, Parts: []record.Part{{Type: record.PartToolResult, CallID: "toolu_1", Text: "[image: chart.png]\nTURN: 2", Outcome: record.OK,
			Images: []record.Part{{Type: record.PartImage, MediaType: media, Data: "iVBORw0KGgo=", Name: "chart.png"}}}}},
	}}
}

// A tool result with an image is sent as the Messages API documents: content, a list of a text
// block and an image block with a base64 source; the validator accepts it, and refuses a media
// type the API does not take.
func TestToolResultImage(t *testing.T) {
	body, err := Encode(imageRequest("image/png"))
	if err != nil {
		t.Fatal(err)
	}
	if v := Validate(body); v != nil {
		t.Fatalf("the validator refuses it: %v\n%s", v, body)
	}
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	want := `[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"[image: chart.png]\nTURN: 2"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}],"cache_control":{"type":"ephemeral"}}]`
	if got := string(req.Messages[2].Content); got != want {
		t.Errorf("the tool result:\n got %s\nwant %s", got, want)
	}
	body, err = Encode(imageRequest("image/bmp"))
	if err != nil {
		t.Fatal(err)
	}
	if v := Validate(body); v == nil || !strings.Contains(v.Message, "media_type") {
		t.Errorf("an image/bmp in a tool result passed: %v", v)
	}
}
