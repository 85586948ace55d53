package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/reinhq/rein/internal/provider"
)

// Chat is a streaming Chat Completions client, a provider.Model: OpenAI's, or any
// OpenAI-compatible server's.
type Chat struct {
	c      client
	compat Compat
}

// NewChat returns a client posting to {BaseURL}/chat/completions.
func NewChat(cfg Config) *Chat {
	return &Chat{c: newClient(cfg, "/chat/completions"), compat: cfg.Compat}
}

var _ provider.Model = (*Chat)(nil)

// Encode encodes req for this client's server (its Compat): the exact bytes to send.
func (m *Chat) Encode(req provider.Request) ([]byte, error) { return m.compat.EncodeChat(req) }

// Validate is ValidateChat: the first rule body breaks, or nil.
func (m *Chat) Validate(body []byte) *provider.Violation { return ValidateChat(body) }

// ReleasesBody says that Send reads its body only until it returns (provider.BodyReleaser).
func (m *Chat) ReleasesBody() {}

// Send posts body, a request already encoded (and validated), exactly as given, and decodes the
// streamed reply. on receives live events in order and may be nil.
func (m *Chat) Send(ctx context.Context, body []byte, on func(provider.Event)) (provider.Reply, error) {
	return m.c.send(ctx, body, newChatDecoder(on))
}

// chatChunk is one streamed chunk. Error is set (nested shape) or Object is "error" (flat shape,
// vLLM) when the server reports a failure inside the stream.
type chatChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          deltaContent `json:"content"`
			Refusal          string       `json:"refusal"`
			Reasoning        deltaContent `json:"reasoning"`
			ReasoningContent string       `json:"reasoning_content"`
			ReasoningDetails []struct {
				Type    string `json:"type"`
				Text    string `json:"text"`
				Summary string `json:"summary"`
			} `json:"reasoning_details"`
			ToolCalls []chatCallDelta `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
	wireError
}

type chatCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// deltaContent is a delta's text: a string, or (from some OpenAI-compatible servers) an array of
// parts whose text parts are read in order. Any other shape is read as no text.
type deltaContent string

func (c *deltaContent) UnmarshalJSON(b []byte) error {
	switch kind(b) {
	case "string":
		if s := b[1 : len(b)-1]; bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
			*c = deltaContent(s) // nothing to unescape: the common case, taken without a second parse
			return nil
		}
		return json.Unmarshal(b, (*string)(c))
	case "array":
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var s []byte
		for _, p := range parts {
			if p.Type == "text" {
				s = append(s, p.Text...)
			}
		}
		*c = deltaContent(s)
	}
	return nil
}

// chatDecoder assembles a Chat Completions stream. Tool calls are merged by their index; a
// different id at an index already in use opens a new call there (Ollama numbers every call of
// a parallel batch 0), while the same id again (some servers resend it on every chunk) does not.
type chatDecoder struct {
	a       assembly
	calls   map[int]int // wire index → part index of the call it currently names
	last    int         // part index of the latest call, -1 if none
	finish  string
	refusal bool
	ended   bool
}

func newChatDecoder(on func(provider.Event)) *chatDecoder {
	return &chatDecoder{a: newAssembly(on), calls: map[int]int{}, last: -1}
}

func (d *chatDecoder) assembled() *assembly { return &d.a }

func (d *chatDecoder) eof() bool {
	if d.finish == "" {
		return false
	}
	d.end()
	return true
}

var doneMarker = []byte("[DONE]")

func (d *chatDecoder) event(name string, data []byte) (bool, error) {
	data = bytes.TrimSpace(data)
	if bytes.Equal(data, doneMarker) {
		d.end()
		return true, nil
	}
	var c chatChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return false, fmt.Errorf("decode chat chunk: %w", err)
	}
	if name == "error" && kind(c.Error) != "object" {
		return false, c.wireError.classify() // a flat error under an SSE error event
	}
	if kind(c.Error) == "object" {
		var w wireError
		if err := json.Unmarshal(c.Error, &w); err != nil {
			return false, fmt.Errorf("decode chat error: %w", err)
		}
		return false, w.classify()
	}
	if c.Object == "error" {
		return false, c.wireError.classify()
	}
	if d.a.reply.ID == "" {
		d.a.reply.ID = c.ID
	}
	if d.a.reply.Model == "" {
		d.a.reply.Model = c.Model
	}
	if u := c.Usage; u != nil {
		var cached int64
		if u.PromptTokensDetails != nil {
			cached = u.PromptTokensDetails.CachedTokens
		}
		d.a.reply.Usage = usage(u.PromptTokens, u.CompletionTokens, cached)
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue
		}
		dl := &ch.Delta
		// Servers name reasoning one way or another; one that sends several sends it several
		// times (OpenRouter sends reasoning and reasoning_details together).
		switch {
		case dl.ReasoningContent != "":
			d.a.thinking(dl.ReasoningContent)
		case dl.Reasoning != "":
			d.a.thinking(string(dl.Reasoning))
		default:
			for _, r := range dl.ReasoningDetails {
				switch r.Type {
				case "reasoning.text":
					d.a.thinking(r.Text)
				case "reasoning.summary":
					d.a.thinking(r.Summary)
				}
			}
		}
		d.a.text(string(dl.Content))
		if dl.Refusal != "" {
			d.refusal = true
			d.a.text(dl.Refusal)
		}
		for j := range dl.ToolCalls {
			if err := d.callDelta(&dl.ToolCalls[j]); err != nil {
				return false, err
			}
		}
		if ch.FinishReason != "" {
			d.finish = ch.FinishReason
		}
	}
	return false, nil
}

// callDelta merges one piece of a tool call.
func (d *chatDecoder) callDelta(t *chatCallDelta) error {
	i, known := -1, false
	if t.Index != nil {
		i, known = d.calls[*t.Index]
	} else if d.last >= 0 {
		i, known = d.last, true
	}
	if known && t.ID != "" {
		cur := d.a.reply.Parts[i].CallID
		if cur == "" {
			d.a.reply.Parts[i].CallID = t.ID
		} else if cur != t.ID {
			known = false // a new call reusing the index
		}
	}
	if !known {
		i = d.a.startCall(t.ID, t.Function.Name)
		if t.Index != nil {
			d.calls[*t.Index] = i
		}
		d.last = i
	} else if d.a.reply.Parts[i].Name == "" {
		d.a.reply.Parts[i].Name = t.Function.Name
	}
	switch kind(t.Function.Arguments) {
	case "null":
	case "string":
		var s string
		if err := json.Unmarshal(t.Function.Arguments, &s); err != nil {
			return fmt.Errorf("decode tool call arguments: %w", err)
		}
		d.a.callArgs(i, s)
	default:
		// Some servers send the arguments as a JSON value, not a string: keep its bytes.
		d.a.callArgs(i, string(t.Function.Arguments))
	}
	return nil
}

// end settles the stop reason once the stream has said its last word.
func (d *chatDecoder) end() {
	if d.ended {
		return
	}
	d.ended = true
	calls := d.a.hasCalls()
	r := &d.a.reply
	switch d.finish {
	case "tool_calls", "function_call":
		r.StopReason = provider.StopToolUse
	case "stop", "":
		// Some servers finish a reply with tool calls with "stop"; a [DONE] with no finish at
		// all is read the same way.
		switch {
		case calls:
			r.StopReason = provider.StopToolUse
		case d.refusal:
			r.StopReason = provider.StopRefusal
		default:
			r.StopReason = provider.StopEnd
		}
	case "length":
		r.StopReason = provider.StopMaxTokens
	case "content_filter":
		r.StopReason = provider.StopRefusal
	default:
		r.StopReason = provider.StopOther
	}
	if r.StopReason != provider.StopMaxTokens {
		d.a.confirmCalls()
	}
}
