package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// Web search, Anthropic's server tool (the web_search_20250305 tool type). When a request asks for
// it (provider.Request.WebSearch) the tool is offered beside rein's function tools; the API runs
// the searches itself and answers, inside the assistant's own message, with a server_tool_use
// block (the query) and a web_search_tool_result block (the results, their page content
// encrypted) before the text that uses them. rein keeps both blocks exactly as received, as
// server_tool parts of the message (Wire "anthropic"), and sends them back byte for byte in every
// later request, where the API requires them; the other wires are sent neither (they cannot take
// them). A stream cut between a search and its result leaves a search the API would refuse to see
// unanswered: the decoder drops such a block, and the validator refuses one.
//
// Citations on text blocks (web_search_result_location) are not kept: the text is, and the API
// takes text without them.

// webSearchTool is the tool definition offered for web search.
var webSearchTool = json.RawMessage(`{"type":"web_search_20250305","name":"web_search","max_uses":5}`)

// serverBlocks are the block types of server tools that rein keeps.
var serverBlocks = map[string]bool{"server_tool_use": true, "web_search_tool_result": true}

// search is a server_tool_use block on its way: kept out of the reply until its result arrives,
// so that a search the stream cut off before its result never reaches the record.
type search struct {
	raw    json.RawMessage // the block as content_block_start gave it
	id     string
	name   string
	input  bytes.Buffer
	deltas bool
	open   bool
}

func (c *search) delta(delta *wireDelta) {
	if !c.open || delta.Type != "input_json_delta" {
		return
	}
	if !c.deltas {
		c.deltas = true
		c.input.Reset()
	}
	c.input.WriteString(delta.PartialJSON)
}

// serverStart reads a server tool block from a content_block_start event's data. A
// server_tool_use waits (its input may stream as input_json_delta); a web_search_tool_result,
// which comes whole, puts its finished search and itself into the reply. A result with no search
// before it is not kept.
func (d *decoder) serverStart(index int, cb *wireReplyBlock, data []byte) {
	var ev struct {
		ContentBlock json.RawMessage `json:"content_block"`
	}
	if json.Unmarshal(data, &ev) != nil || len(ev.ContentBlock) == 0 {
		return
	}
	var raw bytes.Buffer
	if json.Compact(&raw, ev.ContentBlock) != nil {
		return
	}
	d.began = true
	if cb.Type == "server_tool_use" {
		c := &search{raw: raw.Bytes(), id: cb.ID, name: cb.Name, open: true}
		if in := bytes.TrimSpace(cb.Input); len(in) > 0 && !bytes.Equal(in, []byte("{}")) {
			c.input.Write(in)
		}
		d.searches[index] = c
		return
	}
	var res struct {
		ToolUseID string          `json:"tool_use_id"`
		Content   json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(ev.ContentBlock, &res)
	for i, c := range d.searches {
		if c.id != res.ToolUseID || c.open {
			continue
		}
		delete(d.searches, i)
		call, ok := c.part()
		if !ok {
			return
		}
		d.reply.Parts = append(d.reply.Parts, call, record.Part{Type: record.PartServerTool, Wire: record.WireAnthropic,
			Name: c.name, CallID: res.ToolUseID, Text: describeResults(res.Content), Data: raw.String()})
		return
	}
}

// part is the finished search as a server tool part: the block with its input in place.
func (c *search) part() (record.Part, bool) {
	in := bytes.TrimSpace(c.input.Bytes())
	if len(in) == 0 {
		in = []byte("{}")
	}
	var blk map[string]json.RawMessage
	if !json.Valid(in) || json.Unmarshal(c.raw, &blk) != nil {
		return record.Part{}, false
	}
	blk["input"] = json.RawMessage(in)
	out, err := json.Marshal(blk)
	if err != nil {
		return record.Part{}, false
	}
	var q struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(in, &q)
	return record.Part{Type: record.PartServerTool, Wire: record.WireAnthropic, Name: c.name, CallID: c.id,
		Text: "searched the web for " + strings.TrimSpace(q.Query), Data: string(out)}, true
}

// describeResults says in a few words what a web_search_tool_result holds: the pages found, or
// the error.
func describeResults(content json.RawMessage) string {
	var pages []struct {
		URL   string `json:"url"`
		Title string `json:"title"`
	}
	if json.Unmarshal(content, &pages) == nil {
		var urls []string
		for _, p := range pages {
			urls = append(urls, p.URL)
		}
		return fmt.Sprintf("found %d pages: %s", len(pages), strings.Join(urls, " "))
	}
	var e struct {
		ErrorCode string `json:"error_code"`
	}
	_ = json.Unmarshal(content, &e)
	return "the search failed: " + e.ErrorCode
}

// validateServerBlock judges a server tool block's own fields.
func validateServerBlock(at string, b *vBlock) *provider.Violation {
	field := func(name string) *provider.Violation {
		return violation("block_field", at+"."+name, fmt.Sprintf("%s.%s.%s: Field required", at, b.Type, name))
	}
	switch b.Type {
	case "server_tool_use":
		switch {
		case b.ID == nil:
			return field("id")
		case !strings.HasPrefix(*b.ID, "srvtoolu_") || !validID(*b.ID):
			return violation("server_tool_id", at+".id", fmt.Sprintf("%s.server_tool_use.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'", at))
		case b.Name == nil:
			return field("name")
		case !isObject(b.Input):
			return violation("block_field", at+".input", fmt.Sprintf("%s.server_tool_use.input: Input should be a valid dictionary", at))
		}
	case "web_search_tool_result":
		if b.ToolUseID == nil {
			return field("tool_use_id")
		}
		c := bytes.TrimSpace(b.Content)
		if len(c) == 0 || (c[0] != '[' && c[0] != '{') {
			return violation("block_field", at+".content", fmt.Sprintf("%s.web_search_tool_result.content: Input should be a list of results or an error", at))
		}
	}
	return nil
}

// validateServerPairs judges where server tool blocks stand: only in assistant messages, each
// result after the search it answers, each search answered, within the one message.
func validateServerPairs(i int, role string, blocks []vBlock) *provider.Violation {
	open := map[string]int{}
	for j := range blocks {
		b := &blocks[j]
		if !serverBlocks[b.Type] {
			continue
		}
		at := fmt.Sprintf("messages.%d.content.%d", i, j)
		if role != "assistant" {
			return violation("server_tool_role", at, fmt.Sprintf("%s: %s blocks may only appear in assistant messages", at, b.Type))
		}
		if b.Type == "server_tool_use" {
			open[*b.ID] = j
			continue
		}
		if _, ok := open[*b.ToolUseID]; !ok {
			return violation("server_tool_result_orphan", at, fmt.Sprintf(
				"%s: web_search_tool_result block(s) provided when previous message does not contain a corresponding server_tool_use block with id %s", at, *b.ToolUseID))
		}
		delete(open, *b.ToolUseID)
	}
	for id, j := range open {
		at := fmt.Sprintf("messages.%d.content.%d", i, j)
		return violation("server_tool_unanswered", at, fmt.Sprintf("%s: server_tool_use block with id %s has no corresponding web_search_tool_result block", at, id))
	}
	return nil
}
