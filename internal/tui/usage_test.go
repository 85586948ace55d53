package tui

import (
	"math"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/record"
)

// TestUsageAndCost: each exchange's tokens and the conversation's, with the cost from the
// catalog's prices, in /usage and (the total) in the status line.
func TestUsageAndCost(t *testing.T) {
	f := newFake()
	d, s := withConversation(t, f) // sim-1: 1200 in, 30 out, free
	d.waitScreen("$0.000")
	f.push(s.rec(&record.ModelChanged{Provider: "anthropic", Model: "claude-sonnet-4-5", ContextWindow: 200_000}),
		s.rec(&record.UserPrompt{Turn: 4, Text: "second question"}),
		s.rec(&record.AssistantMessage{Turn: 5, StopReason: "end_turn", Model: "claude-sonnet-4-5",
			Usage: record.Usage{Input: 1000, Output: 200, CacheRead: 10_000, CacheWrite: 2000},
			Parts: []record.Part{{Type: record.PartText, Text: "answer"}}}),
		s.rec(&record.UsageReported{Usage: record.Usage{Input: 500}}), // a request Stop cut short
	)
	d.until("counted", func() bool { return d.m.tally.total.n == 3 })
	// (1000*3 + 200*15 + 10000*0.30 + 2000*3.75 + 500*3) / 1e6 = 0.018
	want := (1000*3 + 200*15 + 10_000*0.30 + 2000*3.75 + 500*3) / 1e6
	if x := d.m.tally.exchanges[1]; x.n != 2 || math.Abs(x.cost-want) > 1e-12 || !x.priced || x.u.Input != 1500 || x.u.CacheRead != 10_000 {
		t.Fatalf("the second exchange: %+v, want cost %v", x, want)
	}
	d.waitScreen("$0.018")
	slashCmd(d, "/usage")
	d.waitScreen("1.2k in · 30 out · $0.000")
	d.waitScreen("13.5k in (cache 10.0k read, 2.0k written) · 200 out · $0.018")
	d.waitScreen("prices as of ")
}

// TestModelPicker: /model lists the provider's known models, the one in use marked, and
// /model <n> switches to the n-th.
func TestModelPicker(t *testing.T) {
	f := newFake()
	f.caps = append(f.caps, api.CapModel)
	d, s := withConversation(t, f)
	f.push(s.rec(&record.ModelChanged{Provider: "anthropic", Model: "claude-sonnet-4-5", ContextWindow: 200_000}))
	d.until("the model", func() bool { return d.m.model == "claude-sonnet-4-5" })
	slashCmd(d, "/model")
	scr := d.screen()
	for _, want := range []string{"● 1  claude-sonnet-4-5", "2  claude-opus-4-5", "claude-haiku-4-5", "$3 in · $15 out per Mtok"} {
		if !strings.Contains(scr, want) {
			t.Errorf("/model lacks %q:\n%s", want, scr)
		}
	}
	slashCmd(d, "/model 4")
	d.until("the switch asked", func() bool { return d.called("model c-new") })
	if c := d.calls(); !strings.HasSuffix(c[len(c)-1], " claude-haiku-4-5") {
		t.Fatalf("/model 4 asked for %q", c[len(c)-1])
	}
}
