package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/provider"
)

// This file holds the tests' own reading of the three formats: strict about well-formedness (every
// event decodes, indices and sequence numbers run in order, the stream ends on its terminating
// event), so the simulator is checked independently of the real clients.

type call struct{ id, name, args string }

// got is one stream as the test read it.
type got struct {
	events    []provider.SSEEvent
	end       error // io.EOF, io.ErrUnexpectedEOF or a transport error
	text      string
	thinking  string
	signature string
	calls     []call
	stop      string // the format's own stop word
	input     int
	output    int
	errType   string // a mid-stream error's type or code
	terminal  bool   // the terminating event arrived
}

func (g got) names() []string {
	var out []string
	for _, e := range g.events {
		out = append(out, e.Event)
	}
	return out
}

// sim starts a simulator on a test server.
func sim(t *testing.T, opts Options) (*Server, string) {
	t.Helper()
	s := New(opts)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts.URL
}

func script(t *testing.T, steps ...Step) *Script {
	t.Helper()
	s := &Script{Steps: steps}
	if err := s.check(); err != nil {
		t.Fatal(err)
	}
	return s
}

var paths = map[Format]string{Anthropic: "/v1/messages", Chat: "/v1/chat/completions", Responses: "/v1/responses"}

var formats = []Format{Anthropic, Chat, Responses}

const bashSchema = `{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`

// msg is one message of a test conversation, written once for all formats.
type msg struct {
	role   string // user, assistant, tool
	text   string
	callID string // assistant: a call to bash with args; tool: the result of this call
	args   string
}

// body renders a streamed request in format f.
func body(f Format, bash bool, msgs ...msg) []byte {
	var ms []any
	switch f {
	case Anthropic:
		for _, m := range msgs {
			switch {
			case m.role == "assistant" && m.callID != "":
				ms = append(ms, obj{"role", "assistant", "content", []any{obj{"type", "tool_use", "id", m.callID, "name", "bash", "input", json.RawMessage(m.args)}}})
			case m.role == "tool":
				ms = append(ms, obj{"role", "user", "content", []any{obj{"type", "tool_result", "tool_use_id", m.callID, "content", m.text}}})
			default:
				ms = append(ms, obj{"role", m.role, "content", m.text})
			}
		}
		o := obj{"model", "sim-1", "max_tokens", 1024, "stream", true, "messages", ms}
		if bash {
			o = append(o, "tools", []any{obj{"name", "bash", "description", "run a command", "input_schema", json.RawMessage(bashSchema)}})
		}
		return mustJSON(o)
	case Chat:
		for _, m := range msgs {
			switch {
			case m.role == "assistant" && m.callID != "":
				ms = append(ms, obj{"role", "assistant", "content", nil, "tool_calls", []any{obj{"id", m.callID, "type", "function", "function", obj{"name", "bash", "arguments", m.args}}}})
			case m.role == "tool":
				ms = append(ms, obj{"role", "tool", "tool_call_id", m.callID, "content", m.text})
			default:
				ms = append(ms, obj{"role", m.role, "content", m.text})
			}
		}
		o := obj{"model", "sim-1", "stream", true, "stream_options", obj{"include_usage", true}, "messages", ms}
		if bash {
			o = append(o, "tools", []any{obj{"type", "function", "function", obj{"name", "bash", "description", "run a command", "parameters", json.RawMessage(bashSchema)}}})
		}
		return mustJSON(o)
	default:
		for _, m := range msgs {
			switch {
			case m.role == "assistant" && m.callID != "":
				ms = append(ms, obj{"type", "function_call", "call_id", m.callID, "name", "bash", "arguments", m.args})
			case m.role == "tool":
				ms = append(ms, obj{"type", "function_call_output", "call_id", m.callID, "output", m.text})
			default:
				ms = append(ms, obj{"type", "message", "role", m.role, "content", m.text})
			}
		}
		// As rein asks a reasoning model: reasoning items come with their encrypted content.
		o := obj{"model", "sim-1", "stream", true, "store", false, "include", []any{"reasoning.encrypted_content"}, "input", ms}
		if bash {
			o = append(o, "tools", []any{obj{"type", "function", "name", "bash", "description", "run a command", "parameters", json.RawMessage(bashSchema)}})
		}
		return mustJSON(o)
	}
}

func prompt(f Format, text string) []byte { return body(f, true, msg{role: "user", text: text}) }

func post(t *testing.T, url string, f Format, b []byte, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", url+paths[f], bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// stream posts b and reads the whole stream, failing on anything malformed.
func stream(t *testing.T, url string, f Format, b []byte, header ...string) got {
	t.Helper()
	resp := post(t, url, f, b, header...)
	if resp.StatusCode != 200 {
		data, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	return read(t, f, resp.Body)
}

func read(t *testing.T, f Format, r io.Reader) got {
	t.Helper()
	var g got
	sse := provider.NewSSEReader(r)
	for {
		ev, err := sse.Next()
		if err != nil {
			g.end = err
			break
		}
		ev.Data = bytes.Clone(ev.Data)
		g.events = append(g.events, ev)
		if g.terminal {
			t.Fatalf("event after the terminating event: %s %s", ev.Event, ev.Data)
		}
		var err2 error
		switch f {
		case Anthropic:
			err2 = g.anthropic(ev)
		case Chat:
			err2 = g.chat(ev)
		case Responses:
			err2 = g.responses(ev, len(g.events)-1)
		}
		if err2 != nil {
			t.Fatalf("event %d (%s %s): %v", len(g.events)-1, ev.Event, ev.Data, err2)
		}
	}
	return g
}

func (g *got) anthropic(ev provider.SSEEvent) error {
	var e struct {
		Type    string `json:"type"`
		Index   int    `json:"index"`
		Message struct {
			ID    string `json:"id"`
			Usage struct {
				Input int `json:"input_tokens"`
			} `json:"usage"`
		} `json:"message"`
		Block struct {
			Type, ID, Name string
		} `json:"content_block"`
		Delta struct {
			Type, Text, Thinking, Signature string
			PartialJSON                     string `json:"partial_json"`
			StopReason                      string `json:"stop_reason"`
		} `json:"delta"`
		Usage struct {
			Output int `json:"output_tokens"`
		} `json:"usage"`
		Error struct{ Type, Message string } `json:"error"`
	}
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return err
	}
	if e.Type != ev.Event {
		return fmt.Errorf("event %q carries type %q", ev.Event, e.Type)
	}
	switch e.Type {
	case "message_start":
		if !strings.HasPrefix(e.Message.ID, "sim_") {
			return fmt.Errorf("id %q is not labelled sim", e.Message.ID)
		}
		g.input = e.Message.Usage.Input
	case "content_block_start":
		if e.Block.Type == "tool_use" {
			g.calls = append(g.calls, call{id: e.Block.ID, name: e.Block.Name})
		}
	case "content_block_delta":
		switch e.Delta.Type {
		case "text_delta":
			g.text += e.Delta.Text
		case "thinking_delta":
			g.thinking += e.Delta.Thinking
		case "signature_delta":
			g.signature += e.Delta.Signature
		case "input_json_delta":
			g.calls[len(g.calls)-1].args += e.Delta.PartialJSON
		default:
			return fmt.Errorf("unknown delta %q", e.Delta.Type)
		}
	case "message_delta":
		g.stop, g.output = e.Delta.StopReason, e.Usage.Output
	case "message_stop":
		g.terminal = true
	case "error":
		g.errType, g.terminal = e.Error.Type, true
	}
	return nil
}

func (g *got) chat(ev provider.SSEEvent) error {
	if ev.Event != "" {
		return fmt.Errorf("chat streams have no event names, got %q", ev.Event)
	}
	if string(ev.Data) == "[DONE]" {
		g.terminal = true
		return nil
	}
	var c struct {
		ID      string
		Object  string
		Choices []struct {
			Delta struct {
				ReasoningContent string `json:"reasoning_content"`
				Text             string `json:"content"`
				ToolCalls        []struct {
					Index    int
					ID       string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason *string `json:"finish_reason"`
		}
		Usage *struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		}
		Error *struct{ Type, Message string }
	}
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		return err
	}
	if c.Error != nil {
		g.errType = c.Error.Type
		return nil
	}
	if !strings.HasPrefix(c.ID, "sim_") || c.Object != "chat.completion.chunk" {
		return fmt.Errorf("id %q object %q", c.ID, c.Object)
	}
	if c.Usage != nil {
		g.input, g.output = c.Usage.Prompt, c.Usage.Completion
	}
	for _, ch := range c.Choices {
		g.text += ch.Delta.Text
		g.thinking += ch.Delta.ReasoningContent
		for _, tc := range ch.Delta.ToolCalls {
			if tc.ID != "" || tc.Index == len(g.calls) {
				if tc.Index != len(g.calls) {
					return fmt.Errorf("tool call index %d out of order", tc.Index)
				}
				g.calls = append(g.calls, call{id: tc.ID, name: tc.Function.Name})
			}
			g.calls[tc.Index].args += tc.Function.Arguments
		}
		if ch.FinishReason != nil {
			g.stop = *ch.FinishReason
		}
	}
	return nil
}

func (g *got) responses(ev provider.SSEEvent, n int) error {
	var e struct {
		Type     string `json:"type"`
		Seq      *int   `json:"sequence_number"`
		Delta    string `json:"delta"`
		Response struct {
			ID                string
			Status            string
			IncompleteDetails *struct{ Reason string } `json:"incomplete_details"`
			Error             *struct{ Code, Message string }
			Usage             *struct {
				Input  int `json:"input_tokens"`
				Output int `json:"output_tokens"`
			}
		} `json:"response"`
		Item struct {
			Type, ID, Name, Arguments, Status string
			CallID                            string `json:"call_id"`
			EncryptedContent                  string `json:"encrypted_content"`
		} `json:"item"`
	}
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return err
	}
	if e.Type != ev.Event {
		return fmt.Errorf("event %q carries type %q", ev.Event, e.Type)
	}
	if e.Seq == nil || *e.Seq != n {
		return fmt.Errorf("sequence number %v, want %d", e.Seq, n)
	}
	switch e.Type {
	case "response.created":
		if !strings.HasPrefix(e.Response.ID, "sim_") {
			return fmt.Errorf("id %q is not labelled sim", e.Response.ID)
		}
	case "response.output_item.added":
		if e.Item.Type == "function_call" {
			g.calls = append(g.calls, call{id: e.Item.CallID, name: e.Item.Name})
		}
	case "response.output_item.done":
		if e.Item.Type == "function_call" && e.Item.Arguments != g.calls[len(g.calls)-1].args {
			return fmt.Errorf("done arguments %q, deltas said %q", e.Item.Arguments, g.calls[len(g.calls)-1].args)
		}
		if e.Item.Type == "reasoning" {
			g.signature = e.Item.EncryptedContent
		}
	case "response.output_text.delta":
		g.text += e.Delta
	case "response.reasoning_summary_text.delta":
		g.thinking += e.Delta
	case "response.function_call_arguments.delta":
		g.calls[len(g.calls)-1].args += e.Delta
	case "response.completed", "response.incomplete", "response.failed":
		g.terminal = true
		g.stop = e.Response.Status
		if u := e.Response.Usage; u != nil {
			g.input, g.output = u.Input, u.Output
		}
		if e.Response.Error != nil {
			g.errType = e.Response.Error.Code
		}
	}
	return nil
}

// errorBody reads a JSON error answer in either vendor's shape: the type, the OpenAI code and
// param, and the message.
type errorBody struct {
	typ, code, param, message string
	envelope                  string // Anthropic's top-level "type"
}

func readError(t *testing.T, resp *http.Response) errorBody {
	t.Helper()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var b struct {
		Type  string `json:"type"`
		Error struct {
			Type    string  `json:"type"`
			Message string  `json:"message"`
			Code    *string `json:"code"`
			Param   *string `json:"param"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatalf("error body %s: %v", data, err)
	}
	e := errorBody{typ: b.Error.Type, message: b.Error.Message, envelope: b.Type}
	if b.Error.Code != nil {
		e.code = *b.Error.Code
	}
	if b.Error.Param != nil {
		e.param = *b.Error.Param
	}
	return e
}

func isCut(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) || err != io.EOF }
