package anthropic

import (
	"context"
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

// A web search in a stream: the server_tool_use (its input streamed) and its
// web_search_tool_result become two server tool parts before the text; a search the stream cut
// off before its result is not kept.
func TestDecodeWebSearch(t *testing.T) {
	head := `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","model":"claude-x","usage":{"input_tokens":5,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_01","name":"web_search","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"rein harness\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

`
	tail := `event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01","content":[{"type":"web_search_result","url":"https://example.org/a","title":"A","encrypted_content":"EqQ","page_age":null}]}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Found it."}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}

event: message_stop
data: {"type":"message_stop"}

`
	reply, err := decode(context.Background(), strings.NewReader(head+tail), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.Parts) != 3 || reply.Parts[0].Type != record.PartServerTool || reply.Parts[1].Type != record.PartServerTool || reply.Parts[2].Text != "Found it." {
		t.Fatalf("parts: %+v", reply.Parts)
	}
	call, res := reply.Parts[0], reply.Parts[1]
	if call.Data != `{"id":"srvtoolu_01","input":{"query":"rein harness"},"name":"web_search","type":"server_tool_use"}` || call.Text != "searched the web for rein harness" {
		t.Errorf("the call: %+v", call)
	}
	if res.Data != `{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01","content":[{"type":"web_search_result","url":"https://example.org/a","title":"A","encrypted_content":"EqQ","page_age":null}]}` ||
		res.Text != "found 1 pages: https://example.org/a" {
		t.Errorf("the result: %+v", res)
	}
	// Sent back, both blocks pass the validator, in place.
	body, err := Encode(provider.Request{Model: "claude-x", WebSearch: true, Messages: []record.Message{
		{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: "search"}}},
		{Role: record.Assistant, Parts: reply.Parts},
		{Role: record.User, Parts: []record.Part{{Type: record.PartText, Text: "thanks"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if v := Validate(body); v != nil {
		t.Fatalf("%v\n%s", v, body)
	}
	// Without its result the search would be refused: the validator says so, and a stream cut
	// there keeps no server part.
	lone := strings.Replace(string(body), ","+res.Data, "", 1)
	if v := Validate([]byte(lone)); v == nil || v.Rule != "server_tool_unanswered" {
		t.Errorf("a search with no result passed: %v", v)
	}
	reply, _ = decode(context.Background(), strings.NewReader(head), nil)
	for _, p := range reply.Parts {
		if p.Type == record.PartServerTool {
			t.Errorf("a cut search was kept: %+v", p)
		}
	}
}
