package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/reinhq/rein/internal/catalog"
	"github.com/reinhq/rein/internal/record"
)

// TestWebModelAndUsage: the page shows the conversation's model, each exchange's tokens and the
// conversation's, the picker lists the provider's known models and switches to the one chosen,
// and the page's cost is the catalog's to the cent's thousandth.
func TestWebModelAndUsage(t *testing.T) {
	b := startBrowser(t)
	r := newRig(t, b, `[{"text":"first answer"},{"text":"second answer"}]`)
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "hello"+kb.Enter))
	r.wait("the exchange's usage", `return !!document.querySelector(".timeline .exchange-usage")`)
	r.wait("the model shown", `return vis("#model-btn") && document.getElementById("model-btn").textContent === "sim-1"`)
	line := r.evalString(`return document.querySelector(".timeline .exchange-usage").textContent`)
	if !regexpMatch(`^[0-9.k]+ in · [0-9.k]+ out · \$0\.000$`, line) {
		t.Errorf("the exchange's usage reads %q", line)
	}
	if got := r.evalString(`return document.getElementById("usage").textContent`); got != line {
		t.Errorf("after one exchange the conversation's usage reads %q, want %q", got, line)
	}

	// The picker: the simulator's models, the one in use marked; choosing another switches.
	r.do(chromedp.Click(chromedp.ID("model-btn")))
	r.wait("the picker", `return vis("#model-picker") && document.querySelectorAll("#model-picker .model-choice").length === 2 && document.querySelector('#model-picker .model-choice[aria-current="true"]').dataset.model === "sim-1"`)
	r.do(chromedp.Click(chromedp.CSS(`#model-picker .model-choice[data-model="sim-2"]`)))
	r.waitHost("the switch recorded", func() bool {
		return r.count(record.KindModelChanged, func(rec record.Record) bool { return rec.Body.(*record.ModelChanged).Model == "sim-2" }) == 1
	})
	r.wait("the new model shown", `return document.getElementById("model-btn").textContent === "sim-2" && !document.getElementById("model-picker")`)
	r.do(chromedp.SendKeys(chromedp.ID("input"), "again"+kb.Enter))
	r.wait("two exchanges counted", `return document.querySelectorAll(".timeline .exchange-usage").length === 2`)

	// Escape closes the picker without stopping anything or choosing.
	r.do(chromedp.Click(chromedp.ID("model-btn")))
	r.wait("the picker again", `return vis("#model-picker")`)
	r.do(chromedp.KeyEvent(kb.Escape))
	r.wait("the picker closed", `return !document.getElementById("model-picker")`)

	// The page's prices are the catalog's.
	cases := []struct {
		provider, model string
		u               catalog.Usage
	}{
		{"anthropic", "claude-sonnet-4-5", catalog.Usage{Input: 1000, Output: 200, CacheRead: 10_000, CacheWrite: 2000}},
		{"anthropic", "claude-opus-4-1-20250805", catalog.Usage{Input: 123_456, Output: 7890}},
		{"openai", "gpt-5-mini-2025-08-07", catalog.Usage{Input: 1_000_000, CacheRead: 5000}},
		{"openai", "claude-haiku-4-5", catalog.Usage{Output: 999}},
		{"openrouter", "google/gemini-2.5-pro", catalog.Usage{Input: 1}},
		{"sim", "sim-2", catalog.Usage{Input: 50}},
		{"openai", "gpt-5-turbo-preview", catalog.Usage{Input: 1}},
	}
	for _, c := range cases {
		want, known := catalog.Cost(c.provider, c.model, c.u)
		js := fmt.Sprintf(`return import("./usage.js").then((u) => JSON.stringify(u.cost(u.getCatalog(), %q, %q, {input: %d, output: %d, cache_read: %d, cache_write: %d})))`,
			c.provider, c.model, c.u.Input, c.u.Output, c.u.CacheRead, c.u.CacheWrite)
		ctx, cancel := context.WithTimeout(r.tab, 10*time.Second)
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string](script(js), chromedp.EvalAwaitPromise))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		var got *float64
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		if (got != nil) != known || (got != nil && math.Abs(*got-want) > 1e-12) {
			t.Errorf("cost(%s, %s, %+v): page %s, catalog %v (known %v)", c.provider, c.model, c.u, out, want, known)
		}
	}
}
