package anthropic

import "strings"

// DefaultModel is the model rein asks for when none is named.
const DefaultModel = "claude-sonnet-4-5"

// ContextWindow returns the context window of a Claude model, in tokens, whichever API serves it
// (a name like OpenRouter's "anthropic/claude-sonnet-4.5" is known too), or 0 for a model that is
// not Claude's.
func ContextWindow(model string) int64 {
	if strings.Contains(strings.ToLower(model), "claude") {
		return 200_000
	}
	return 0
}
