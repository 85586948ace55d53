package main

import (
	"testing"
	"time"

	"github.com/reinhq/rein/internal/provider"
)

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

// TestStallAfter: how long a provider may send nothing: five minutes for a server elsewhere,
// half an hour for one on this machine or its network (a local model over a long prompt), what
// REIN_STALL_TIMEOUT says when it says it, and never with off.
func TestStallAfter(t *testing.T) {
	for _, tc := range []struct {
		setting, url string
		want         time.Duration
	}{
		{"", "", provider.DefaultStallAfter},
		{"", "https://api.anthropic.com", provider.DefaultStallAfter},
		{"", "http://127.0.0.1:11434/v1", localStallAfter},
		{"", "http://localhost:8080/v1", localStallAfter},
		{"", "http://192.168.1.20:8000/v1", localStallAfter},
		{"", "http://[::1]:8000/v1", localStallAfter},
		{"90s", "http://127.0.0.1:11434/v1", 90 * time.Second},
		{"off", "", 0},
		{"0", "", 0},
	} {
		if got, err := stallAfter(tc.setting, tc.url); err != nil || got != tc.want {
			t.Errorf("stallAfter(%q, %q) = %v, %v; want %v", tc.setting, tc.url, got, err, tc.want)
		}
	}
	for _, bad := range []string{"soon", "-1m", "10"} {
		if _, err := stallAfter(bad, ""); err == nil {
			t.Errorf("stallAfter(%q) took it", bad)
		}
	}
}
