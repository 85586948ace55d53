package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// Web search on the Responses API: when a request asks for it (provider.Request.WebSearch) the
// web_search tool is offered beside rein's functions; the API searches on its side and says so
// with a web_search_call output item before the message that uses it. rein keeps the item exactly
// as received, as a server_tool part (Wire "responses") in its place among the message's parts,
// and sends it back as an input item where it stood; Chat Completions and Anthropic are sent
// neither (they cannot take it). The url_citation annotations on the text are not kept: the text
// is, and the API takes text without them. Chat Completions has no web search tool.

// webSearchTool is the tool offered for web search.
var webSearchTool = respTool{Type: "web_search"}

// MarshalJSON writes a function tool in full and a built-in tool (web_search) as its type alone.
func (t respTool) MarshalJSON() ([]byte, error) {
	if t.Type != "function" {
		return json.Marshal(struct {
			Type string `json:"type"`
		}{t.Type})
	}
	type plain respTool
	return json.Marshal(plain(t))
}

// searched keeps a finished web_search_call item as a server tool part.
func (d *respDecoder) searched(it *respOutputItem) {
	if len(it.raw) == 0 || it.ID == "" {
		return
	}
	var item struct {
		Action struct {
			Query string `json:"query"`
		} `json:"action"`
	}
	_ = json.Unmarshal(it.raw, &item)
	text := "searched the web"
	if q := strings.TrimSpace(item.Action.Query); q != "" {
		text += " for " + q
	}
	d.a.closeText()
	d.a.addPart(record.Part{Type: record.PartServerTool, Wire: record.WireResponses, Name: "web_search", CallID: it.ID, Text: text, Data: string(it.raw)})
}

// checkWebSearchCall checks a web_search_call input item: its id and its status.
func checkWebSearchCall(path string, it *respItemIn) *provider.Violation {
	if it.ID == "" {
		return violation(RuleBadContent, path+".id", "Missing required parameter: '%s.id'.", path)
	}
	switch it.Status {
	case "completed", "failed", "in_progress", "searching":
		return nil
	case "":
		return violation(RuleBadContent, path+".status", "Missing required parameter: '%s.status'.", path)
	}
	return violation(RuleBadContent, path+".status", "%s", fmt.Sprintf("Invalid value: '%s'. Supported values are: 'in_progress', 'searching', 'completed', and 'failed'.", it.Status))
}
