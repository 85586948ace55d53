package catalog

import (
	"math"
	"testing"
)

func TestLookupAndCost(t *testing.T) {
	for _, c := range []struct {
		provider, model string
		u               Usage
		want            float64
		known           bool
	}{
		{"anthropic", "claude-sonnet-4-5", Usage{Input: 1_000_000}, 3, true},
		{"anthropic", "claude-sonnet-4-5-20250929", Usage{Output: 1_000_000}, 15, true},
		{"anthropic", "claude-sonnet-4-5", Usage{Input: 1000, Output: 100, CacheRead: 10_000, CacheWrite: 2000}, (1000*3 + 100*15 + 10_000*0.30 + 2000*3.75) / 1e6, true},
		{"openai", "gpt-5-mini-2025-08-07", Usage{Input: 1_000_000}, 0.25, true}, // not gpt-5
		{"openrouter", "anthropic/claude-sonnet-4.5", Usage{Input: 2_000_000}, 6, true},
		{"openai", "claude-haiku-4-5", Usage{Input: 1_000_000}, 1, true}, // found under another provider
		{"sim", "sim-1", Usage{Input: 5000, Output: 500}, 0, true},
		{"openrouter", "google/gemini-2.5-pro", Usage{Input: 1}, 0, false}, // listed, no price
		{"openai", "gpt-5-turbo-preview", Usage{Input: 1}, 0, false},       // not a dated gpt-5
		{"anthropic", "no-such-model", Usage{Input: 1}, 0, false},
	} {
		got, known := Cost(c.provider, c.model, c.u)
		if known != c.known || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Cost(%s, %s, %+v) = %v, %v; want %v, %v", c.provider, c.model, c.u, got, known, c.want, c.known)
		}
	}
}

// TestTable: every provider lists its default first, ids are unique per provider, windows are
// known, and prices are not negative.
func TestTable(t *testing.T) {
	for _, name := range Providers() {
		ms := Models(name)
		if len(ms) == 0 {
			t.Errorf("%s lists no models", name)
			continue
		}
		seen := map[string]bool{}
		for i, m := range ms {
			if seen[m.ID] {
				t.Errorf("%s lists %s twice", name, m.ID)
			}
			seen[m.ID] = true
			if m.Window <= 0 {
				t.Errorf("%s %s has no window", name, m.ID)
			}
			if p := m.Price; p != nil && (p.Input < 0 || p.Output < 0 || p.CacheRead < 0 || p.CacheWrite < 0) {
				t.Errorf("%s %s has a negative price", name, m.ID)
			}
			if (m.Note == "the default") != (i == 0) && name != "sim" {
				t.Errorf("%s: the default must be listed first (%s at %d)", name, m.ID, i)
			}
		}
	}
	if Models("nope") != nil {
		t.Error("an unknown provider lists models")
	}
}
