package openai

import "strings"

// DefaultModel is the model rein asks OpenAI for when none is named.
const DefaultModel = "gpt-5"

// OpenRouterDefaultModel is the model rein asks OpenRouter for when none is named.
const OpenRouterDefaultModel = "anthropic/claude-sonnet-4.5"

// ContextWindow returns the context window of an OpenAI model, or of a Gemini model as
// OpenAI-compatible servers (OpenRouter) serve it, in tokens, or 0 for a model it does not know.
func ContextWindow(model string) int64 {
	m := strings.ToLower(model)
	switch {
	case strings.HasPrefix(m, "gpt-4.1"):
		return 1_047_576
	case strings.HasPrefix(m, "gpt-5"):
		return 400_000
	case strings.HasPrefix(m, "gpt-4o"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"):
		return 128_000
	case strings.Contains(m, "gemini"):
		return 1_000_000
	}
	return 0
}
