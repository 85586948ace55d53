package main

import "testing"

// The known context windows, as the adapters that know each model say them: a model's window is
// its own whichever wire serves it, and a model no adapter knows gets the default.
func TestContextWindows(t *testing.T) {
	cases := []struct {
		model string
		want  int64
	}{
		{"sim-1", 200_000},
		{"claude-sonnet-4-5", 200_000},
		{"anthropic/claude-sonnet-4.5", 200_000}, // OpenRouter's name
		{"Claude-Opus-4", 200_000},
		{"gpt-5", 400_000},
		{"gpt-5-mini", 400_000},
		{"gpt-4.1", 1_047_576},
		{"gpt-4.1-nano", 1_047_576},
		{"gpt-4o", 128_000},
		{"o3-mini", 128_000},
		{"o4-mini", 128_000},
		{"google/gemini-2.5-pro", 1_000_000},
		{"local-7b", 128_000},
		{"openai/gpt-5", 128_000}, // prefixed ids are not guessed at
	}
	for _, c := range cases {
		if got := contextWindow(c.model); got != c.want {
			t.Errorf("contextWindow(%q) = %d, want %d", c.model, got, c.want)
		}
	}
}
