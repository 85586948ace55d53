package fold

import (
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/record"
)

// A picture in a tool result is carried whole (its bytes count in the survey, as sent) but weighs
// imageTokens in the estimate of the context in tokens, not a quarter of its base64; and a result
// whose images are not pictures of a type every provider takes is refused.
func TestImagesInResults(t *testing.T) {
	l := phaseLog(t, AwaitingToolResults)
	before := l.s.Estimate()
	pic := strings.Repeat("A", 1<<20)
	l.add(&record.ToolResults{Results: []record.ToolResult{{CallID: "c1", Content: WithTrailer("[image: a.png]", l.s.newest()), Outcome: record.OK,
		Images: []record.Part{{Type: record.PartImage, MediaType: "image/png", Data: pic, Name: "a.png"}}}}})
	if sv := l.s.Survey(); sv.Bytes < 1<<20 {
		t.Errorf("the survey counts %d bytes; the picture alone is %d", sv.Bytes, 1<<20)
	}
	if grew := l.s.Estimate() - before; grew < imageTokens || grew > imageTokens+200 {
		t.Errorf("the estimate grew by %d tokens for one picture, want about %d", grew, imageTokens)
	}
	msgs := l.s.Context()
	last := msgs[len(msgs)-1].Parts[0]
	if len(last.Images) != 1 || last.Images[0].Data != pic {
		t.Errorf("the context's tool result lacks its picture")
	}

	for _, bad := range []record.Part{
		{Type: record.PartImage, MediaType: "image/bmp", Data: "Qk0="},
		{Type: record.PartImage, MediaType: "image/png"},
		{Type: record.PartText, Text: "not a picture"},
	} {
		l := phaseLog(t, AwaitingToolResults)
		err := l.try(&record.ToolResults{Results: []record.ToolResult{{CallID: "c1", Content: "x", Outcome: record.OK, Images: []record.Part{bad}}}})
		mustContain(t, err, "answers tool call \"c1\" with")
	}
}

// A provider's server tool block stands only in the model's messages, from a wire rein knows.
func TestServerToolParts(t *testing.T) {
	ok := record.Part{Type: record.PartServerTool, Wire: record.WireResponses, Name: "web_search", CallID: "ws_1", Data: `{"id":"ws_1","type":"web_search_call","status":"completed"}`}
	l := phaseLog(t, AwaitingAssistantAfterUser)
	l.add(&record.AssistantMessage{Turn: l.s.Next(), Parts: []record.Part{ok, {Type: record.PartText, Text: "found"}}, StopReason: "end_turn"})
	for _, c := range []struct {
		part record.Part
		want string
	}{
		{record.Part{Type: record.PartServerTool, Wire: "gemini", Data: `{}`}, "unknown wire"},
		{record.Part{Type: record.PartServerTool, Wire: record.WireAnthropic, Data: `[1]`}, "not a JSON object"},
	} {
		l := phaseLog(t, AwaitingAssistantAfterUser)
		err := l.try(&record.AssistantMessage{Turn: l.s.Next(), Parts: []record.Part{c.part, {Type: record.PartText, Text: "x"}}, StopReason: "end_turn"})
		mustContain(t, err, c.want)
	}
	l = phaseLog(t, ReadyForUser)
	err := l.try(&record.Import{Turn: l.s.Next(), Source: "test", Message: record.Message{Role: record.User, Parts: []record.Part{ok, {Type: record.PartText, Text: "x"}}}})
	mustContain(t, err, "in a user message")
}
