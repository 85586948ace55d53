// Package catalog is rein's one table of known models: for each provider, the models a person can
// pick, their context windows, and their prices, so every surface (rein chat's /model, the web's
// picker, the cost beside an exchange) reads the same list.
//
// Prices are US dollars per million tokens as the providers published them on the date in
// PricesAsOf; they change, so the date travels with every cost shown. A model not in the table
// has no price and its cost is not shown (never guessed). The simulator's models cost nothing:
// no request leaves the machine.
//
// The package is data and arithmetic only (standard library), so the host, the clients and cmd
// may all read it.
package catalog

import "strings"

// PricesAsOf is when the prices below were read from the providers' pricing pages. Update it
// with the prices.
const PricesAsOf = "2025-11-15"

// Price is what a model costs, in US dollars per million tokens. CacheRead and CacheWrite are the
// prices of input read from and written to the provider's prompt cache.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read"`
	CacheWrite float64 `json:"cache_write"`
}

// Model is one known model of a provider.
type Model struct {
	ID     string `json:"id"`
	Window int64  `json:"window"` // context window, in tokens
	Price  *Price `json:"price,omitempty"`
	Note   string `json:"note,omitempty"`
}

func p(in, out, cacheRead, cacheWrite float64) *Price {
	return &Price{Input: in, Output: out, CacheRead: cacheRead, CacheWrite: cacheWrite}
}

var (
	claude = []Model{
		{ID: "claude-sonnet-4-5", Window: 200_000, Price: p(3, 15, 0.30, 3.75), Note: "the default"},
		{ID: "claude-opus-4-5", Window: 200_000, Price: p(5, 25, 0.50, 6.25)},
		{ID: "claude-opus-4-1", Window: 200_000, Price: p(15, 75, 1.50, 18.75)},
		{ID: "claude-haiku-4-5", Window: 200_000, Price: p(1, 5, 0.10, 1.25)},
	}
	gpt = []Model{
		{ID: "gpt-5", Window: 400_000, Price: p(1.25, 10, 0.125, 0), Note: "the default"},
		{ID: "gpt-5-mini", Window: 400_000, Price: p(0.25, 2, 0.025, 0)},
		{ID: "gpt-5-nano", Window: 400_000, Price: p(0.05, 0.40, 0.005, 0)},
		{ID: "gpt-4.1", Window: 1_047_576, Price: p(2, 8, 0.50, 0)},
		{ID: "gpt-4o", Window: 128_000, Price: p(2.50, 10, 1.25, 0)},
		{ID: "o3", Window: 200_000, Price: p(2, 8, 0.50, 0)},
		{ID: "o4-mini", Window: 200_000, Price: p(1.10, 4.40, 0.275, 0)},
	}
	table = map[string][]Model{
		"anthropic":        claude,
		"openai":           gpt,
		"openai-responses": gpt,
		"openrouter": {
			{ID: "anthropic/claude-sonnet-4.5", Window: 200_000, Price: p(3, 15, 0.30, 3.75), Note: "the default"},
			{ID: "anthropic/claude-opus-4.5", Window: 200_000, Price: p(5, 25, 0.50, 6.25)},
			{ID: "openai/gpt-5", Window: 400_000, Price: p(1.25, 10, 0.125, 0)},
			{ID: "google/gemini-2.5-pro", Window: 1_048_576},
		},
		"sim": {
			{ID: "sim-1", Window: 200_000, Price: p(0, 0, 0, 0), Note: "the simulator (not a model)"},
			{ID: "sim-2", Window: 200_000, Price: p(0, 0, 0, 0), Note: "the simulator, another name"},
		},
	}
)

// Providers lists the providers the table knows, in a fixed order.
func Providers() []string {
	return []string{"anthropic", "openai", "openai-responses", "openrouter", "sim"}
}

// Models returns the known models of a provider, the default first; nil for a provider the table
// does not know.
func Models(provider string) []Model {
	return append([]Model(nil), table[provider]...)
}

// Lookup finds a model by its id among the provider's models, else among every provider's (a
// model is priced as itself whichever wire serves it). A dated suffix the providers add to a
// model's name ("claude-sonnet-4-5-20250929") matches the undated entry.
func Lookup(provider, model string) (Model, bool) {
	if m, ok := find(table[provider], model); ok {
		return m, true
	}
	for _, name := range Providers() {
		if m, ok := find(table[name], model); ok {
			return m, true
		}
	}
	return Model{}, false
}

func find(models []Model, id string) (Model, bool) {
	id = strings.ToLower(id)
	best := -1
	for i, m := range models {
		if id == m.ID {
			return m, true
		}
		// "claude-sonnet-4-5-20250929" is claude-sonnet-4-5; the longest such prefix wins, so
		// gpt-5-mini-… is never taken for gpt-5.
		if strings.HasPrefix(id, m.ID+"-") && isDate(id[len(m.ID)+1:]) && (best < 0 || len(m.ID) > len(models[best].ID)) {
			best = i
		}
	}
	if best >= 0 {
		return models[best], true
	}
	return Model{}, false
}

// isDate says whether s is a model's date suffix: 20250929 or 2025-09-29.
func isDate(s string) bool {
	d := strings.ReplaceAll(s, "-", "")
	if len(d) != 8 {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Usage is tokens used: what a request's input held (uncached, read from the cache, written to
// it) and what the reply's output held.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int64
}

// Cost is what usage cost on model, in US dollars, and whether the model's price is known.
func Cost(provider, model string, u Usage) (float64, bool) {
	m, ok := Lookup(provider, model)
	if !ok || m.Price == nil {
		return 0, false
	}
	pr := m.Price
	return (float64(u.Input)*pr.Input + float64(u.Output)*pr.Output +
		float64(u.CacheRead)*pr.CacheRead + float64(u.CacheWrite)*pr.CacheWrite) / 1e6, true
}
