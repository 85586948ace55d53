package sim

import (
	"fmt"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/anthropic"
)

// anthropicWire speaks the Anthropic Messages streaming format.
type anthropicWire struct{}

func (anthropicWire) format() Format                           { return Anthropic }
func (anthropicWire) validate(body []byte) *provider.Violation { return anthropic.Validate(body) }
func (anthropicWire) read(body []byte, c *readCache) view      { return readAnthropic(body, c) }
func (anthropicWire) validator() provider.Validator            { return anthropic.NewValidator() }
func (anthropicWire) items() string                            { return "messages" }
func (anthropicWire) requestIDHeader() string                  { return "request-id" }

func (anthropicWire) frames(p *plan) []frame {
	var fs []frame
	add := func(event string, delta bool, o obj) {
		fs = append(fs, frame{event: event, data: mustJSON(o), delta: delta})
	}
	usage := obj{"input_tokens", p.input, "cache_creation_input_tokens", 0, "cache_read_input_tokens", 0, "output_tokens", 1}
	add("message_start", false, obj{"type", "message_start", "message", obj{
		"id", p.id, "type", "message", "role", "assistant", "model", p.model, "content", []any{},
		"stop_reason", nil, "stop_sequence", nil, "usage", usage}})
	add("ping", false, obj{"type", "ping"})
	for i := range fs {
		fs[i].head = true
	}
	i := -1 // the block index
	for _, pc := range p.parts {
		i++
		if pc.kind == pieceSearch {
			i = searchFrames(add, i, pc) // websearch.go
			continue
		}
		var block obj
		var deltaType, deltaField string
		switch pc.kind {
		case pieceText:
			block, deltaType, deltaField = obj{"type", "text", "text", ""}, "text_delta", "text"
		case pieceThinking:
			block, deltaType, deltaField = obj{"type", "thinking", "thinking", "", "signature", ""}, "thinking_delta", "thinking"
		case pieceCall:
			block = obj{"type", "tool_use", "id", pc.id, "name", pc.name, "input", obj{}}
			deltaType, deltaField = "input_json_delta", "partial_json"
		}
		add("content_block_start", false, obj{"type", "content_block_start", "index", i, "content_block", block})
		for _, d := range pc.deltas {
			add("content_block_delta", true, obj{"type", "content_block_delta", "index", i, "delta", obj{"type", deltaType, deltaField, d}})
		}
		if pc.kind == pieceThinking && pc.signature != "" {
			add("content_block_delta", false, obj{"type", "content_block_delta", "index", i, "delta", obj{"type", "signature_delta", "signature", pc.signature}})
		}
		add("content_block_stop", false, obj{"type", "content_block_stop", "index", i})
	}
	reason := map[stop]string{stopEnd: "end_turn", stopTool: "tool_use", stopMax: "max_tokens"}[p.stop]
	add("message_delta", false, obj{"type", "message_delta", "delta", obj{"stop_reason", reason, "stop_sequence", nil},
		"usage", obj{"output_tokens", p.output}})
	add("message_stop", false, obj{"type", "message_stop"})
	return fs
}

func (w anthropicWire) streamError(p *plan, ev ErrorEvent, seq int) frame {
	typ, msg := ev.Type, ev.Message
	if typ == "" {
		typ = "overloaded_error"
	}
	if msg == "" {
		_, _, msg = w.defaultError(529)
	}
	return frame{event: "error", data: mustJSON(obj{"type", "error", "error", obj{"type", typ, "message", msg}})}
}

// errorBody ignores param: Anthropic's own messages name the path themselves.
func (anthropicWire) errorBody(status int, typ, code, msg, param, reqID string) []byte {
	return mustJSON(obj{"type", "error", "error", obj{"type", typ, "message", msg}, "request_id", reqID})
}

func (anthropicWire) defaultError(status int) (typ, code, msg string) {
	switch status {
	case 400:
		return "invalid_request_error", "", "Invalid request (rein simulator)."
	case 401:
		return "authentication_error", "", "invalid x-api-key (rein simulator)"
	case 403:
		return "permission_error", "", "Your API key does not have permission to use the specified resource (rein simulator)."
	case 404:
		return "not_found_error", "", "Not found (rein simulator)."
	case 413:
		return "request_too_large", "", "Request exceeds the maximum allowed number of bytes (rein simulator)."
	case 429:
		return "rate_limit_error", "", "Number of requests has exceeded your per-minute rate limit (rein simulator)."
	case 503, 529:
		return "overloaded_error", "", "Overloaded (rein simulator)"
	}
	if status >= 500 {
		return "api_error", "", "Internal server error (rein simulator)"
	}
	return "invalid_request_error", "", fmt.Sprintf("Request refused with status %d (rein simulator).", status)
}

func (w anthropicWire) contextError(tokens, limit int, reqID string) []byte {
	return w.errorBody(400, "invalid_request_error", "", fmt.Sprintf("prompt is too long: %d tokens > %d maximum", tokens, limit), "", reqID)
}
