package sim

import (
	"encoding/json"
	"strings"
)

// WebSearch is a scripted server-side web search: the query the model searched for and the
// pages found. The simulator plays it as the provider does — Anthropic's server_tool_use and
// web_search_tool_result blocks, a Responses web_search_call item — before the step's text, and
// only where the request offered the provider's web search tool (Chat Completions has none).
type WebSearch struct {
	Query   string      `json:"query"`
	Results []WebResult `json:"results,omitempty"`
	// Error, when set, is the error code the search answers with instead of results
	// (Anthropic: web_search_tool_result_error; Responses: a failed call).
	Error string `json:"error,omitempty"`
}

// WebResult is one page a scripted search found.
type WebResult struct {
	URL   string `json:"url"`
	Title string `json:"title"`
}

// dropSearches takes out the searches a request cannot receive: on Chat, or where it did not offer
// the web search tool.
func (p *plan) dropSearches(v view, f Format) {
	if f != Chat && v.offers("web_search") != "" {
		return
	}
	parts := p.parts[:0]
	for _, pc := range p.parts {
		if pc.kind != pieceSearch {
			parts = append(parts, pc)
		}
	}
	p.parts = parts
}

// searchFrames adds a search's two Anthropic blocks, the first at block index i, and returns the
// index of the second: a server_tool_use whose input streams as input_json_delta, then the
// web_search_tool_result, which comes whole.
func searchFrames(add func(event string, delta bool, o obj), i int, pc piece) int {
	id := "srvtoolu_sim" + strings.NewReplacer("-", "", "_", "").Replace(pc.id)
	input, _ := json.Marshal(map[string]string{"query": pc.search.Query})
	add("content_block_start", false, obj{"type", "content_block_start", "index", i, "content_block",
		obj{"type", "server_tool_use", "id", id, "name", "web_search", "input", obj{}}})
	add("content_block_delta", true, obj{"type", "content_block_delta", "index", i, "delta", obj{"type", "input_json_delta", "partial_json", string(input)}})
	add("content_block_stop", false, obj{"type", "content_block_stop", "index", i})
	var content any
	if pc.search.Error != "" {
		content = obj{"type", "web_search_tool_result_error", "error_code", pc.search.Error}
	} else {
		results := []any{}
		for _, r := range pc.search.Results {
			results = append(results, obj{"type", "web_search_result", "url", r.URL, "title", r.Title,
				"encrypted_content", "sim-sealed:" + r.URL, "page_age", nil})
		}
		content = results
	}
	i++
	add("content_block_start", false, obj{"type", "content_block_start", "index", i, "content_block",
		obj{"type", "web_search_tool_result", "tool_use_id", id, "content", content}})
	add("content_block_stop", false, obj{"type", "content_block_stop", "index", i})
	return i
}

// searchItem adds a search's Responses events at output index i and returns its finished
// web_search_call item.
func searchItem(add func(delta bool, o obj), p *plan, i int, pc piece) obj {
	id := itemID("ws", p, i)
	add(false, obj{"type", "response.output_item.added", "output_index", i, "item", obj{"id", id, "type", "web_search_call", "status", "in_progress", "action", obj{"type", "search"}}})
	add(false, obj{"type", "response.web_search_call.in_progress", "item_id", id, "output_index", i})
	add(false, obj{"type", "response.web_search_call.searching", "item_id", id, "output_index", i})
	status := "completed"
	if pc.search.Error != "" {
		status = "failed"
	}
	add(false, obj{"type", "response.web_search_call.completed", "item_id", id, "output_index", i})
	return obj{"id", id, "type", "web_search_call", "status", status, "action", obj{"type", "search", "query", pc.search.Query, "queries", []any{pc.search.Query}}}
}
