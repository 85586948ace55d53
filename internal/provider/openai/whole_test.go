package openai

import (
	"fmt"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// The requests as one value each, marshalled whole: what EncodeChat and EncodeResponses wrote
// before they wrote the list of messages item by item (listBody). TestEncodeIsWhole holds the
// two ways to the same bytes. Field order is the order of the bytes (an embedded struct's fields
// stand where it does).

type chatRequest struct {
	chatOpen
	Messages []chatMessage `json:"messages"`
	chatClose
}

type respRequest struct {
	respOpen
	Input []any `json:"input"`
	respClose
}

func encodeChatWhole(c Compat, req provider.Request) ([]byte, error) {
	open, close := c.chatFields(req)
	w := chatRequest{chatOpen: open, Messages: []chatMessage{}, chatClose: close}
	if req.System != "" {
		w.Messages = append(w.Messages, chatMessage{Role: "system", Content: req.System})
	}
	for i, m := range req.Messages {
		var err error
		switch m.Role {
		case record.User:
			w.Messages, err = appendChatUser(w.Messages, m)
		case record.Assistant:
			w.Messages, err = appendChatAssistant(w.Messages, m)
		default:
			err = fmt.Errorf("unknown role %q", m.Role)
		}
		if err != nil {
			return nil, fmt.Errorf("encode chat message %d: %w", i, err)
		}
	}
	return marshal(w)
}

func encodeResponsesWhole(req provider.Request) ([]byte, error) {
	w := respRequest{respOpen: respOpen{Model: req.Model, Instructions: req.System}, Input: []any{}, respClose: respFields(req)}
	c := customCalls{tools: provider.Freeform(req.Tools)}
	for i, m := range req.Messages {
		var err error
		switch m.Role {
		case record.User:
			w.Input, err = appendRespUser(w.Input, m, &c)
		case record.Assistant:
			w.Input, err = appendRespAssistant(w.Input, m, &c)
		default:
			err = fmt.Errorf("unknown role %q", m.Role)
		}
		if err != nil {
			return nil, fmt.Errorf("encode responses message %d: %w", i, err)
		}
	}
	return marshal(w)
}
