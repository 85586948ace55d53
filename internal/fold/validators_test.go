package fold

import (
	"encoding/json"
	"fmt"

	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/openai"
)

// wireCheck encodes the next request the state would send in every wire format rein speaks and
// returns the first refusal of that provider's validator.
func wireCheck(s *State) error {
	req := provider.Request{Model: "m", System: s.System(), Messages: s.Context(), MaxTokens: 2048,
		Tools: []provider.Tool{{Name: "bash", Description: "run", Schema: json.RawMessage(`{"type":"object"}`)}}}
	if len(req.Messages) == 0 {
		return nil
	}
	for _, w := range []struct {
		name string
		enc  func(provider.Request) ([]byte, error)
		val  func([]byte) *provider.Violation
	}{
		{"anthropic", anthropic.Encode, anthropic.Validate},
		{"chat", openai.EncodeChat, openai.ValidateChat},
		{"responses", openai.EncodeResponses, openai.ValidateResponses},
	} {
		body, err := w.enc(req)
		if err != nil {
			return fmt.Errorf("%s: encode: %w", w.name, err)
		}
		if v := w.val(body); v != nil {
			return fmt.Errorf("%s refuses the request: %v\n%s", w.name, v, body)
		}
	}
	return nil
}
