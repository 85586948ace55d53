package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/openai"
)

// chatWire speaks the OpenAI Chat Completions streaming format.
type chatWire struct{}

func (chatWire) format() Format                           { return Chat }
func (chatWire) validate(body []byte) *provider.Violation { return openai.ValidateChat(body) }
func (chatWire) read(body []byte, _ *readCache) view      { return readChat(body) }
func (chatWire) validator() provider.Validator            { return openai.NewChatValidator() }
func (chatWire) items() string                            { return "messages" }
func (chatWire) requestIDHeader() string                  { return "x-request-id" }

func (chatWire) frames(p *plan) []frame {
	var fs []frame
	chunk := func(delta obj, finish any) obj {
		o := obj{"id", p.id, "object", "chat.completion.chunk", "created", p.created, "model", p.model,
			"choices", []any{obj{"index", 0, "delta", delta, "logprobs", nil, "finish_reason", finish}}}
		if p.includeUsage {
			o = append(o, "usage", nil)
		}
		return o
	}
	add := func(delta bool, o obj) { fs = append(fs, frame{data: mustJSON(o), delta: delta}) }
	add(false, chunk(obj{"role", "assistant", "content", ""}, nil))
	fs[0].head = true
	call := 0
	for _, pc := range p.parts {
		switch pc.kind {
		case pieceText:
			for _, d := range pc.deltas {
				add(true, chunk(obj{"content", d}, nil))
			}
		case pieceThinking:
			// Chat has no thinking of its own; OpenAI-compatible servers stream it as reasoning_content.
			for _, d := range pc.deltas {
				add(true, chunk(obj{"reasoning_content", d}, nil))
			}
		case pieceCall:
			add(false, chunk(obj{"tool_calls", []any{obj{"index", call, "id", pc.id, "type", "function",
				"function", obj{"name", pc.name, "arguments", ""}}}}, nil))
			for _, d := range pc.deltas {
				add(true, chunk(obj{"tool_calls", []any{obj{"index", call, "function", obj{"arguments", d}}}}, nil))
			}
			call++
		}
	}
	finish := map[stop]string{stopEnd: "stop", stopTool: "tool_calls", stopMax: "length"}[p.stop]
	add(false, chunk(obj{}, finish))
	if p.includeUsage {
		add(false, obj{"id", p.id, "object", "chat.completion.chunk", "created", p.created, "model", p.model,
			"choices", []any{}, "usage", obj{"prompt_tokens", p.input, "completion_tokens", p.output,
				"total_tokens", p.input + p.output, "prompt_tokens_details", obj{"cached_tokens", 0}}})
	}
	fs = append(fs, frame{data: []byte("[DONE]")})
	return fs
}

func (w chatWire) streamError(p *plan, ev ErrorEvent, seq int) frame {
	typ, msg := ev.Type, ev.Message
	if typ == "" {
		typ = "server_error"
	}
	if msg == "" {
		_, _, msg = w.defaultError(500)
	}
	return frame{data: mustJSON(obj{"error", obj{"message", msg, "type", typ, "param", nil, "code", nil}})}
}

func (chatWire) errorBody(status int, typ, code, msg, param, reqID string) []byte {
	return openaiErrorBody(typ, code, msg, param)
}

func (chatWire) defaultError(status int) (typ, code, msg string) { return openaiDefaultError(status) }

func (w chatWire) contextError(tokens, limit int, reqID string) []byte {
	msg := fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", limit, tokens)
	return openaiErrorBody("invalid_request_error", "context_length_exceeded", msg, "messages")
}

func openaiErrorBody(typ, code, msg, param string) []byte {
	return mustJSON(obj{"error", obj{"message", msg, "type", typ, "param", nullable(param), "code", nullable(code)}})
}

func openaiDefaultError(status int) (typ, code, msg string) {
	switch status {
	case 400:
		return "invalid_request_error", "", "Invalid request (rein simulator)."
	case 401:
		return "invalid_request_error", "invalid_api_key", "Incorrect API key provided (rein simulator)."
	case 403:
		return "invalid_request_error", "unsupported_country_region_territory", "Access refused (rein simulator)."
	case 404:
		return "invalid_request_error", "model_not_found", "The model does not exist (rein simulator)."
	case 429:
		return "requests", "rate_limit_exceeded", "Rate limit reached for requests (rein simulator). Please try again shortly."
	case 503, 529:
		return "server_error", "", "The engine is currently overloaded, please try again later (rein simulator)."
	}
	if status >= 500 {
		return "server_error", "", "The server had an error while processing your request (rein simulator)."
	}
	return "invalid_request_error", "", fmt.Sprintf("Request refused with status %d (rein simulator).", status)
}

// responsesWire speaks the OpenAI Responses streaming format.
type responsesWire struct{}

func (responsesWire) format() Format                           { return Responses }
func (responsesWire) validate(body []byte) *provider.Violation { return openai.ValidateResponses(body) }
func (responsesWire) read(body []byte, _ *readCache) view      { return readResponses(body) }
func (responsesWire) validator() provider.Validator            { return openai.NewResponsesValidator() }
func (responsesWire) items() string                            { return "input" }
func (responsesWire) requestIDHeader() string                  { return "x-request-id" }

// Responses item ids start with the prefix the API expects of ids sent back in input (msg_, fc_,
// rs_), then say "sim".
func itemID(prefix string, p *plan, i int) string { return fmt.Sprintf("%s_sim_%d_%d", prefix, p.n, i) }

func (w responsesWire) response(p *plan, status string, output []any, usage any, extra ...any) obj {
	o := obj{"id", p.id, "object", "response", "created_at", p.created, "status", status, "error", nil,
		"incomplete_details", nil, "model", p.model, "output", output, "usage", usage}
	for i := 0; i+1 < len(extra); i += 2 {
		for j := 0; j+1 < len(o); j += 2 {
			if o[j] == extra[i] {
				o[j+1] = extra[i+1]
			}
		}
	}
	return o
}

func (w responsesWire) frames(p *plan) []frame {
	var fs []frame
	add := func(delta bool, o obj) {
		o = append(o, "sequence_number", len(fs))
		fs = append(fs, frame{event: o[1].(string), data: mustJSON(o), delta: delta})
	}
	add(false, obj{"type", "response.created", "response", w.response(p, "in_progress", []any{}, nil)})
	add(false, obj{"type", "response.in_progress", "response", w.response(p, "in_progress", []any{}, nil)})
	fs[0].head, fs[1].head = true, true
	var output []any
	for i, pc := range p.parts {
		status := "completed"
		if p.stop == stopMax && i == len(p.parts)-1 {
			status = "incomplete"
		}
		var item obj
		switch pc.kind {
		case pieceThinking:
			id := itemID("rs", p, i)
			add(false, obj{"type", "response.output_item.added", "output_index", i, "item", obj{"id", id, "type", "reasoning", "summary", []any{}}})
			add(false, obj{"type", "response.reasoning_summary_part.added", "item_id", id, "output_index", i, "summary_index", 0, "part", obj{"type", "summary_text", "text", ""}})
			for _, d := range pc.deltas {
				add(true, obj{"type", "response.reasoning_summary_text.delta", "item_id", id, "output_index", i, "summary_index", 0, "delta", d})
			}
			add(false, obj{"type", "response.reasoning_summary_text.done", "item_id", id, "output_index", i, "summary_index", 0, "text", pc.text()})
			add(false, obj{"type", "response.reasoning_summary_part.done", "item_id", id, "output_index", i, "summary_index", 0, "part", obj{"type", "summary_text", "text", pc.text()}})
			var enc any // null: the request did not include it
			if p.encrypted {
				enc = pc.signature
				if pc.signature == "" {
					enc = sealed(id)
				}
			}
			item = obj{"id", id, "type", "reasoning", "summary", []any{obj{"type", "summary_text", "text", pc.text()}}, "encrypted_content", enc}
		case pieceText:
			id := itemID("msg", p, i)
			add(false, obj{"type", "response.output_item.added", "output_index", i, "item", obj{"id", id, "type", "message", "status", "in_progress", "role", "assistant", "content", []any{}}})
			add(false, obj{"type", "response.content_part.added", "item_id", id, "output_index", i, "content_index", 0, "part", obj{"type", "output_text", "text", "", "annotations", []any{}}})
			for _, d := range pc.deltas {
				add(true, obj{"type", "response.output_text.delta", "item_id", id, "output_index", i, "content_index", 0, "delta", d, "logprobs", []any{}})
			}
			part := obj{"type", "output_text", "text", pc.text(), "annotations", []any{}}
			add(false, obj{"type", "response.output_text.done", "item_id", id, "output_index", i, "content_index", 0, "text", pc.text(), "logprobs", []any{}})
			add(false, obj{"type", "response.content_part.done", "item_id", id, "output_index", i, "content_index", 0, "part", part})
			item = obj{"id", id, "type", "message", "status", status, "role", "assistant", "content", []any{part}}
		case pieceSearch:
			item = searchItem(add, p, i, pc) // websearch.go
		case pieceCall:
			if pc.input {
				item = w.customCall(p, pc, i, status, add)
				break
			}
			id := itemID("fc", p, i)
			add(false, obj{"type", "response.output_item.added", "output_index", i, "item", obj{"id", id, "type", "function_call", "status", "in_progress", "arguments", "", "call_id", pc.id, "name", pc.name}})
			for _, d := range pc.deltas {
				add(true, obj{"type", "response.function_call_arguments.delta", "item_id", id, "output_index", i, "delta", d})
			}
			if !pc.cutOff {
				add(false, obj{"type", "response.function_call_arguments.done", "item_id", id, "output_index", i, "arguments", pc.text()})
			}
			item = obj{"id", id, "type", "function_call", "status", status, "arguments", pc.text(), "call_id", pc.id, "name", pc.name}
		}
		add(false, obj{"type", "response.output_item.done", "output_index", i, "item", item})
		output = append(output, item)
	}
	if output == nil {
		output = []any{}
	}
	usage := obj{"input_tokens", p.input, "input_tokens_details", obj{"cached_tokens", 0}, "output_tokens", p.output,
		"output_tokens_details", obj{"reasoning_tokens", 0}, "total_tokens", p.input + p.output}
	if p.stop == stopMax {
		add(false, obj{"type", "response.incomplete", "response", w.response(p, "incomplete", output, usage,
			"incomplete_details", obj{"reason", "max_output_tokens"})})
	} else {
		add(false, obj{"type", "response.completed", "response", w.response(p, "completed", output, usage)})
	}
	return fs
}

// customCall streams a free-form call as the Responses API streams a custom tool's: the item,
// its input in deltas, the input whole; it returns the finished item.
func (w responsesWire) customCall(p *plan, pc piece, i int, status string, add func(bool, obj)) obj {
	id := itemID("ctc", p, i)
	input := strings.Join(pc.freeform, "")
	add(false, obj{"type", "response.output_item.added", "output_index", i, "item", obj{"id", id, "type", "custom_tool_call", "status", "in_progress", "call_id", pc.id, "input", "", "name", pc.name}})
	for _, d := range pc.freeform {
		add(true, obj{"type", "response.custom_tool_call_input.delta", "item_id", id, "output_index", i, "delta", d})
	}
	if !pc.cutOff {
		add(false, obj{"type", "response.custom_tool_call_input.done", "item_id", id, "output_index", i, "input", input})
	}
	return obj{"id", id, "type", "custom_tool_call", "status", status, "call_id", pc.id, "input", input, "name", pc.name}
}

func (w responsesWire) streamError(p *plan, ev ErrorEvent, seq int) frame {
	code, msg := ev.Type, ev.Message
	if code == "" {
		code = "server_error"
	}
	if msg == "" {
		_, _, msg = w.defaultError(500)
	}
	o := obj{"type", "response.failed", "response", w.response(p, "failed", []any{}, nil,
		"error", obj{"code", code, "message", msg}), "sequence_number", seq}
	return frame{event: "response.failed", data: mustJSON(o)}
}

func (responsesWire) errorBody(status int, typ, code, msg, param, reqID string) []byte {
	return openaiErrorBody(typ, code, msg, param)
}

func (responsesWire) defaultError(status int) (typ, code, msg string) {
	return openaiDefaultError(status)
}

func (responsesWire) contextError(tokens, limit int, reqID string) []byte {
	msg := fmt.Sprintf("Your input exceeds the context window of this model. Please adjust your input and try again. (rein simulator: %d tokens > %d maximum)", tokens, limit)
	return openaiErrorBody("invalid_request_error", "context_length_exceeded", msg, "input")
}

// sealedPrefix begins the encrypted content the simulator issues for its own reasoning items.
const sealedPrefix = "sim_enc_"

// sealed is the encrypted content the simulator issues for reasoning item id. It stands for the
// item's hidden reasoning and is bound to the id, so that content sent back under another id, or
// altered, is refused as OpenAI refuses it.
func sealed(id string) string {
	sum := sha256.Sum256([]byte("rein simulator reasoning\x00" + id))
	return sealedPrefix + hex.EncodeToString(sum[:16])
}

// verify refuses, in OpenAI's words, a reasoning item sent back with encrypted content the
// simulator issued for another item, or altered. Content it did not issue (a script's) is taken
// as it is.
func (responsesWire) verify(body []byte) (code, msg string) {
	var req struct {
		Input []struct {
			Type             string `json:"type"`
			ID               string `json:"id"`
			EncryptedContent string `json:"encrypted_content"`
		} `json:"input"`
	}
	if json.Unmarshal(body, &req) != nil {
		return "", ""
	}
	for _, it := range req.Input {
		if it.Type == "reasoning" && strings.HasPrefix(it.EncryptedContent, sealedPrefix) && it.EncryptedContent != sealed(it.ID) {
			return "invalid_encrypted_content", fmt.Sprintf("The encrypted content for item %s could not be verified. Reason: Encrypted content could not be decrypted or parsed.", it.ID)
		}
	}
	return "", ""
}
