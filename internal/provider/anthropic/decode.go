package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// The wire shapes of stream events. Unknown fields are ignored.
type (
	wireEvent struct {
		Type         string          `json:"type"`
		Message      *wireReply      `json:"message"`       // message_start
		Index        int             `json:"index"`         // content_block_*
		ContentBlock *wireReplyBlock `json:"content_block"` // content_block_start
		Delta        json.RawMessage `json:"delta"`         // content_block_delta, message_delta; read per type
		Usage        *wireUsage      `json:"usage"`         // message_delta
		Error        *wireError      `json:"error"`         // error
	}
	wireReply struct {
		ID         string     `json:"id"`
		Model      string     `json:"model"`
		StopReason *string    `json:"stop_reason"`
		Usage      *wireUsage `json:"usage"`
	}
	wireReplyBlock struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Thinking  string          `json:"thinking"`
		Signature string          `json:"signature"`
		Data      string          `json:"data"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	}
	wireDelta struct {
		Type        string  `json:"type"`
		Text        string  `json:"text"`
		Thinking    string  `json:"thinking"`
		Signature   string  `json:"signature"`
		PartialJSON string  `json:"partial_json"`
		StopReason  *string `json:"stop_reason"`
	}
	// wireUsage fields are pointers: a message_delta carries only the counts that changed.
	wireUsage struct {
		Input      *int64 `json:"input_tokens"`
		Output     *int64 `json:"output_tokens"`
		CacheRead  *int64 `json:"cache_read_input_tokens"`
		CacheWrite *int64 `json:"cache_creation_input_tokens"`
	}
	wireError struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
)

// block is the decoder's state for one content block of the reply.
type block struct {
	part   int             // index into Reply.Parts
	open   bool            // started, not yet stopped
	text   strings.Builder // text or thinking so far; settled into the part by finish
	sig    strings.Builder // a thinking block's signature so far
	args   bytes.Buffer    // a tool call's input_json_delta pieces, raw
	deltas bool            // input arrived as deltas (else it came whole in content_block_start)
}

// decoder folds Anthropic stream events into a neutral Reply, publishing live events as they come.
// It never panics on any input: events out of order, unknown indices and unknown types are
// ignored.
type decoder struct {
	reply  provider.Reply
	on     func(provider.Event)
	blocks map[int]*block // by the stream's block index; nil for blocks rein does not keep
	began  bool           // output began: a content block started
	done   bool           // message_stop arrived
	// searches are server tool calls (web search) waiting for their result, by block index.
	searches map[int]*search
}

func newDecoder(on func(provider.Event)) *decoder {
	if on == nil {
		on = func(provider.Event) {}
	}
	return &decoder{on: on, blocks: map[int]*block{}, searches: map[int]*search{}}
}

// decode reads an event stream to its end. It returns the reply and nil when the stream ended
// with message_stop; otherwise what arrived so far and a *provider.Error: the stream's own error
// event, a cut stream (network, Partial when output began), or a cancelled ctx (StopCancelled).
func decode(ctx context.Context, r io.Reader, on func(provider.Event)) (provider.Reply, error) {
	d := newDecoder(on)
	sse := provider.NewSSEReader(r)
	defer sse.Close()
	for {
		if ctx.Err() != nil { // events already buffered are not published after a Stop
			e := d.readError(ctx, ctx.Err())
			return d.finish(), e
		}
		ev, err := sse.Next()
		if err != nil {
			e := d.readError(ctx, err) // before finish: it may set the stop reason
			return d.finish(), e
		}
		if e := d.event(ev.Event, ev.Data); e != nil {
			return d.finish(), e
		}
		if d.done {
			return d.finish(), nil
		}
	}
}

// readError classifies the end of a stream that never sent message_stop.
func (d *decoder) readError(ctx context.Context, err error) *provider.Error {
	if ctx.Err() != nil {
		d.reply.StopReason = provider.StopCancelled
		return provider.ClassifyTransport(ctx.Err(), d.began)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &provider.Error{Class: provider.Network, Message: "stream ended before message_stop", Partial: d.began, Err: err}
	}
	e := provider.ClassifyTransport(err, d.began)
	e.Class = provider.Network // not the caller's ctx: a client-side timeout or a reset
	return e
}

// known are the event types this decoder reads; a stream with no event names is read by its JSON.
var known = map[string]bool{
	"": true, "message_start": true, "content_block_start": true, "content_block_delta": true,
	"content_block_stop": true, "message_delta": true, "message_stop": true, "error": true,
}

// event applies one SSE event. The JSON type field decides; the SSE event name stands in when the
// data has none.
func (d *decoder) event(name string, data []byte) *provider.Error {
	var ev wireEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		if !known[name] {
			return nil // an event type added later may carry anything
		}
		return &provider.Error{Class: provider.Network, Message: fmt.Sprintf("malformed %s event: %v", name, err), Partial: d.began, Err: err}
	}
	if ev.Type == "" {
		ev.Type = name
	}
	switch ev.Type {
	case "message_start":
		if m := ev.Message; m != nil {
			d.reply.ID, d.reply.Model = m.ID, m.Model
			d.usage(m.Usage)
		}
	case "content_block_start":
		if ev.ContentBlock != nil && serverBlocks[ev.ContentBlock.Type] {
			d.serverStart(ev.Index, ev.ContentBlock, data) // websearch.go
			break
		}
		d.start(ev.Index, ev.ContentBlock)
	case "content_block_delta":
		// Decoded apart, so that a delta type added later, whatever its fields, is only skipped.
		var delta wireDelta
		if json.Unmarshal(ev.Delta, &delta) == nil {
			if c := d.searches[ev.Index]; c != nil {
				c.delta(&delta)
				break
			}
			d.delta(ev.Index, &delta)
		}
	case "content_block_stop":
		if b := d.blocks[ev.Index]; b != nil {
			b.open = false
		}
		if c := d.searches[ev.Index]; c != nil {
			c.open = false
		}
	case "message_delta":
		var delta wireDelta
		if json.Unmarshal(ev.Delta, &delta) == nil && delta.StopReason != nil {
			d.reply.StopReason = stopReason(*delta.StopReason)
		}
		d.usage(ev.Usage)
	case "message_stop":
		d.done = true
		if d.reply.StopReason == "" {
			d.reply.StopReason = provider.StopOther
		}
	case "error":
		e := &provider.Error{Class: provider.Server, Message: "error event without an error"}
		if ev.Error != nil {
			e = provider.StreamError(ev.Error.Type, ev.Error.Message)
		}
		e.Partial = d.began
		return e
	}
	// ping and event types added after this was written are ignored, as the API asks.
	return nil
}

// start opens a content block. Block types rein does not keep (server tool calls, citations and
// whatever comes next) are skipped with their deltas.
func (d *decoder) start(index int, cb *wireReplyBlock) {
	if cb == nil || d.blocks[index] != nil {
		return
	}
	var p record.Part
	switch cb.Type {
	case "text":
		p = record.Part{Type: record.PartText, Text: cb.Text}
	case "thinking":
		p = record.Part{Type: record.PartThinking, Text: cb.Thinking, Signature: cb.Signature}
	case "redacted_thinking":
		p = record.Part{Type: record.PartRedacted, Data: cb.Data}
	case "tool_use":
		p = record.Part{Type: record.PartToolCall, CallID: cb.ID, Name: cb.Name}
	default:
		return
	}
	d.began = true
	b := &block{part: len(d.reply.Parts), open: true}
	b.text.WriteString(p.Text)
	b.sig.WriteString(p.Signature)
	d.blocks[index] = b
	if p.Type == record.PartToolCall {
		if in := bytes.TrimSpace(cb.Input); len(in) > 0 && !bytes.Equal(in, []byte("{}")) {
			b.args.Write(in) // input sent whole, not streamed
		}
	}
	d.reply.Parts = append(d.reply.Parts, p)
	switch p.Type {
	case record.PartText:
		if p.Text != "" {
			d.on(provider.Event{Type: provider.TextDelta, Index: b.part, Text: p.Text})
		}
	case record.PartThinking:
		if p.Text != "" {
			d.on(provider.Event{Type: provider.ThinkingDelta, Index: b.part, Text: p.Text})
		}
	case record.PartToolCall:
		d.on(provider.Event{Type: provider.ToolCallStart, Index: b.part, CallID: p.CallID, Name: p.Name})
	}
}

// delta extends an open content block.
func (d *decoder) delta(index int, delta *wireDelta) {
	b := d.blocks[index]
	if b == nil || !b.open {
		return
	}
	p := &d.reply.Parts[b.part]
	switch {
	case delta.Type == "text_delta" && p.Type == record.PartText:
		b.text.WriteString(delta.Text)
		d.on(provider.Event{Type: provider.TextDelta, Index: b.part, Text: delta.Text})
	case delta.Type == "thinking_delta" && p.Type == record.PartThinking:
		b.text.WriteString(delta.Thinking)
		d.on(provider.Event{Type: provider.ThinkingDelta, Index: b.part, Text: delta.Thinking})
	case delta.Type == "signature_delta" && p.Type == record.PartThinking:
		b.sig.WriteString(delta.Signature)
	case delta.Type == "input_json_delta" && p.Type == record.PartToolCall:
		if !b.deltas {
			b.deltas = true
			b.args.Reset()
		}
		b.args.WriteString(delta.PartialJSON)
		d.on(provider.Event{Type: provider.ToolArgsDelta, Index: b.part, CallID: p.CallID, Text: delta.PartialJSON})
	}
}

// usage takes the counts a message_start or message_delta reports; later counts replace earlier
// ones (the API reports running totals).
func (d *decoder) usage(u *wireUsage) {
	if u == nil {
		return
	}
	set := func(dst *int64, src *int64) {
		if src != nil {
			*dst = *src
		}
	}
	set(&d.reply.Usage.Input, u.Input)
	set(&d.reply.Usage.Output, u.Output)
	set(&d.reply.Usage.CacheRead, u.CacheRead)
	set(&d.reply.Usage.CacheWrite, u.CacheWrite)
}

// finish settles text, signatures and tool-call arguments into the parts, and lists the calls
// whose arguments were cut off: a block never stopped, or the last block of a max-tokens stop
// whose input is not complete JSON.
func (d *decoder) finish() provider.Reply {
	last := len(d.reply.Parts) - 1
	for _, b := range d.blocks {
		p := &d.reply.Parts[b.part]
		switch p.Type {
		case record.PartText:
			p.Text = b.text.String()
			continue
		case record.PartThinking:
			p.Text, p.Signature = b.text.String(), b.sig.String()
			continue
		case record.PartRedacted:
			continue
		}
		raw := bytes.TrimSpace(b.args.Bytes())
		cut := b.open || d.reply.StopReason == provider.StopMaxTokens && b.part == last && !json.Valid(raw)
		if len(raw) == 0 && !cut {
			raw = []byte("{}") // a call with no arguments streams none
		}
		p.Args = json.RawMessage(bytes.Clone(raw))
		if cut {
			d.reply.Incomplete = append(d.reply.Incomplete, b.part)
		}
	}
	slices.Sort(d.reply.Incomplete)
	return d.reply
}

// stopReason maps the API's stop reasons onto the neutral ones.
func stopReason(s string) string {
	switch s {
	case "end_turn":
		return provider.StopEnd
	case "tool_use":
		return provider.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return provider.StopMaxTokens
	case "stop_sequence":
		return provider.StopSequence
	case "refusal":
		return provider.StopRefusal
	}
	return provider.StopOther // pause_turn and reasons added later
}
