package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// Responses is a streaming client of OpenAI's Responses API, a provider.Model.
type Responses struct {
	c client
}

// NewResponses returns a client posting to {BaseURL}/responses.
func NewResponses(cfg Config) *Responses {
	return &Responses{c: newClient(cfg, "/responses")}
}

var _ provider.Model = (*Responses)(nil)

// Encode is EncodeResponses: the exact bytes of req.
func (m *Responses) Encode(req provider.Request) ([]byte, error) { return EncodeResponses(req) }

// Validate is ValidateResponses: the first rule body breaks, or nil.
func (m *Responses) Validate(body []byte) *provider.Violation { return ValidateResponses(body) }

// ReleasesBody says that Send reads its body only until it returns (provider.BodyReleaser).
func (m *Responses) ReleasesBody() {}

// Send posts body, a request already encoded (and validated), exactly as given, and decodes the
// streamed reply. on receives live events in order and may be nil.
func (m *Responses) Send(ctx context.Context, body []byte, on func(provider.Event)) (provider.Reply, error) {
	return m.c.send(ctx, body, newRespDecoder(on))
}

// respEvent is one Responses stream event; which fields are set depends on Type.
type respEvent struct {
	Type         string           `json:"type"`
	ItemID       string           `json:"item_id"`
	OutputIndex  int              `json:"output_index"`
	SummaryIndex int              `json:"summary_index"`
	Delta        string           `json:"delta"`
	Arguments    string           `json:"arguments"`
	Input        string           `json:"input"`
	Item         *respOutputItem  `json:"item"`
	Response     *respResponseOut `json:"response"`
	// An error event: flat (code, message at the top) or nested under error.
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	Error   json.RawMessage `json:"error"`
}

type respOutputItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Status    string `json:"status"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Input     string `json:"input"` // a custom tool call's
	// A reasoning item: its summary, its encrypted content (when the request asked for it), and
	// the item's own bytes, which are what is sent back.
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
	EncryptedContent string `json:"encrypted_content"`
	raw              json.RawMessage
}

// UnmarshalJSON reads an output item, keeping a reasoning item's own bytes.
func (it *respOutputItem) UnmarshalJSON(b []byte) error {
	type plain respOutputItem
	if err := json.Unmarshal(b, (*plain)(it)); err != nil {
		return err
	}
	if it.Type == "reasoning" || it.Type == "web_search_call" {
		it.raw = append(json.RawMessage(nil), bytes.TrimSpace(b)...)
	}
	return nil
}

type respResponseOut struct {
	ID                string `json:"id"`
	Model             string `json:"model"`
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *wireError `json:"error"`
	Usage *struct {
		InputTokens        int64 `json:"input_tokens"`
		OutputTokens       int64 `json:"output_tokens"`
		InputTokensDetails *struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"input_tokens_details"`
	} `json:"usage"`
}

// respDecoder assembles a Responses stream. Output items are addressed by item id, with the
// output index as a fallback for servers that leave ids out.
type respDecoder struct {
	a       assembly
	byID    map[string]int // item id → part index
	byIndex map[int]int    // output index → part index
	summary map[int]int    // thinking part index → the summary part its text last came from
	refusal bool
}

func newRespDecoder(on func(provider.Event)) *respDecoder {
	return &respDecoder{a: newAssembly(on), byID: map[string]int{}, byIndex: map[int]int{}, summary: map[int]int{}}
}

func (d *respDecoder) assembled() *assembly { return &d.a }

// eof: a Responses stream always ends with response.completed, .incomplete or .failed.
func (d *respDecoder) eof() bool { return false }

// respEvents lists the event types the decoder reads; any other is ignored unparsed.
var respEvents = map[string]bool{
	"response.created": true, "response.in_progress": true,
	"response.output_item.added": true, "response.output_item.done": true,
	"response.output_text.delta": true, "response.refusal.delta": true,
	"response.function_call_arguments.delta": true, "response.function_call_arguments.done": true,
	"response.custom_tool_call_input.delta": true, "response.custom_tool_call_input.done": true,
	"response.reasoning_summary_text.delta": true, "response.reasoning_text.delta": true,
	"response.completed": true, "response.incomplete": true, "response.failed": true,
	"error": true,
}

func (d *respDecoder) event(name string, data []byte) (bool, error) {
	if bytes.Equal(bytes.TrimSpace(data), doneMarker) {
		return false, nil // not part of the API; a terminal event has said or will say the rest
	}
	var e respEvent
	err := json.Unmarshal(data, &e)
	if e.Type == "" {
		e.Type = name
	}
	if !respEvents[e.Type] {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("decode %s event: %w", e.Type, err)
	}
	switch e.Type {
	case "response.created", "response.in_progress":
		if r := e.Response; r != nil {
			d.a.reply.ID, d.a.reply.Model = r.ID, r.Model
		}
	case "response.output_item.added":
		if e.Item != nil && (e.Item.Type == "function_call" || e.Item.Type == "custom_tool_call") {
			d.call(e.Item, e.OutputIndex)
		}
		if e.Item != nil && e.Item.Type == "reasoning" {
			d.reasoning(e.Item.ID, e.OutputIndex)
		}
	case "response.output_text.delta", "response.refusal.delta":
		d.text(e.ItemID, e.OutputIndex, e.Delta)
		d.refusal = d.refusal || e.Type == "response.refusal.delta"
	case "response.custom_tool_call_input.delta":
		if i, ok := d.part(e.ItemID, e.OutputIndex); ok && d.a.custom[i] {
			d.a.callArgs(i, e.Delta)
		}
	case "response.custom_tool_call_input.done":
		if i, ok := d.part(e.ItemID, e.OutputIndex); ok && d.a.custom[i] {
			d.a.setArgs(i, e.Input)
			d.a.done[i] = true
		}
	case "response.function_call_arguments.delta":
		if i, ok := d.part(e.ItemID, e.OutputIndex); ok {
			d.a.callArgs(i, e.Delta)
		}
	case "response.function_call_arguments.done":
		if i, ok := d.part(e.ItemID, e.OutputIndex); ok {
			d.a.setArgs(i, e.Arguments)
			d.a.done[i] = true
		}
	case "response.output_item.done":
		if e.Item != nil && e.Item.Type == "custom_tool_call" {
			i := d.call(e.Item, e.OutputIndex)
			if e.Item.Input != "" {
				d.a.setArgs(i, e.Item.Input)
			}
			d.a.done[i] = e.Item.Status != "incomplete"
		}
		if e.Item != nil && e.Item.Type == "function_call" {
			i := d.call(e.Item, e.OutputIndex)
			if e.Item.Arguments != "" {
				d.a.setArgs(i, e.Item.Arguments)
			}
			// An item a max-output-tokens stop cut off is done, but incomplete.
			d.a.done[i] = e.Item.Status != "incomplete"
		}
		if e.Item != nil && e.Item.Type == "reasoning" {
			d.reasoned(e.Item, e.OutputIndex)
		}
		if e.Item != nil && e.Item.Type == "web_search_call" {
			d.searched(e.Item) // websearch.go
		}
	case "response.reasoning_summary_text.delta":
		i := d.reasoning(e.ItemID, e.OutputIndex)
		if last, ok := d.summary[i]; ok && e.SummaryIndex != last && len(d.a.bufs[i]) > 0 {
			d.a.thinkingAt(i, summarySep) // a new summary part
		}
		d.summary[i] = e.SummaryIndex
		d.a.thinkingAt(i, e.Delta)
	case "response.reasoning_text.delta":
		d.a.thinkingAt(d.reasoning(e.ItemID, e.OutputIndex), e.Delta)
	case "response.completed", "response.incomplete":
		d.end(e.Response)
		return true, nil
	case "response.failed":
		w := wireError{Type: "server_error", Message: "the response failed"}
		if e.Response != nil && e.Response.Error != nil {
			w = *e.Response.Error
		}
		return false, w.classify()
	case "error":
		w := wireError{Code: e.Code, Message: e.Message}
		if kind(e.Error) == "object" {
			if err := json.Unmarshal(e.Error, &w); err != nil {
				return false, fmt.Errorf("decode error event: %w", err)
			}
		}
		return false, w.classify()
	}
	return false, nil
}

// part finds the item an event names.
func (d *respDecoder) part(id string, index int) (int, bool) {
	if id != "" {
		i, ok := d.byID[id]
		return i, ok
	}
	i, ok := d.byIndex[index]
	return i, ok
}

// call returns the part of a function-call or custom-tool-call item, starting it if it is new.
func (d *respDecoder) call(it *respOutputItem, index int) int {
	if i, ok := d.part(it.ID, index); ok {
		return i
	}
	i := d.a.startCall(it.CallID, it.Name)
	if it.Type == "custom_tool_call" {
		if d.a.custom == nil {
			d.a.custom = map[int]bool{}
		}
		d.a.custom[i] = true
	}
	d.remember(it.ID, index, i)
	return i
}

// summarySep joins the parts of a reasoning summary in a thinking part's text.
const summarySep = "\n\n"

// reasoning returns the thinking part of a reasoning item, starting it if it is new.
func (d *respDecoder) reasoning(id string, index int) int {
	if i, ok := d.part(id, index); ok && d.a.reply.Parts[i].Type == record.PartThinking {
		return i
	}
	i := d.a.startThinking()
	d.remember(id, index, i)
	return i
}

// reasoned settles a reasoning item from its final form: the summary is its text, and an item
// that carries its encrypted content is kept whole, to be sent back exactly as it came.
func (d *respDecoder) reasoned(it *respOutputItem, index int) {
	i := d.reasoning(it.ID, index)
	if len(it.Summary) > 0 {
		var b []byte
		for j, s := range it.Summary {
			if j > 0 {
				b = append(b, summarySep...)
			}
			b = append(b, s.Text...)
		}
		d.a.bufs[i] = b
	}
	if it.EncryptedContent != "" && it.ID != "" {
		d.a.reply.Parts[i].Data = string(it.raw)
	}
}

// text appends to the text part of a message item, starting it if it is new.
func (d *respDecoder) text(id string, index int, s string) {
	if s == "" {
		return
	}
	i, ok := d.part(id, index)
	if !ok || i != d.a.open {
		d.a.closeText()
		d.a.text(s)
		d.remember(id, index, d.a.open)
		return
	}
	d.a.text(s)
}

func (d *respDecoder) remember(id string, index, part int) {
	if id != "" {
		d.byID[id] = part
	}
	d.byIndex[index] = part
}

// end settles the reply from the final response object.
func (d *respDecoder) end(r *respResponseOut) {
	reply := &d.a.reply
	calls := d.a.hasCalls()
	switch {
	case r != nil && r.Status == "incomplete":
		reason := ""
		if r.IncompleteDetails != nil {
			reason = r.IncompleteDetails.Reason
		}
		switch reason {
		case "max_output_tokens":
			reply.StopReason = provider.StopMaxTokens
		case "content_filter":
			reply.StopReason = provider.StopRefusal
		default:
			reply.StopReason = provider.StopOther
		}
	case calls:
		reply.StopReason = provider.StopToolUse
	case d.refusal:
		reply.StopReason = provider.StopRefusal
	default:
		reply.StopReason = provider.StopEnd
	}
	if reply.StopReason == provider.StopToolUse {
		d.a.confirmCalls()
	}
	if r == nil {
		return
	}
	if reply.ID == "" {
		reply.ID = r.ID
	}
	if reply.Model == "" {
		reply.Model = r.Model
	}
	if u := r.Usage; u != nil {
		var cached int64
		if u.InputTokensDetails != nil {
			cached = u.InputTokensDetails.CachedTokens
		}
		reply.Usage = usage(u.InputTokens, u.OutputTokens, cached)
	}
}
