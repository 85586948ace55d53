package tui

import (
	"testing"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/record"
)

// TestMeterSteadyAcrossAnEviction: the Context meter moves by what an eviction removed, not down
// to the bare byte estimate and back up with the next usage (it read 2.1k → 479 → 2.2k).
func TestMeterSteadyAcrossAnEviction(t *testing.T) {
	f := newFake()
	f.survey = api.Survey{Bytes: 1200, SystemBytes: 400} // 400 tokens estimated
	d, s := withConversation(t, f)                       // its usage: 1200 in + 30 out
	d.until("the overhead learned", func() bool { return !d.m.meter.calibrating && d.m.meter.overhead == 830 })
	d.waitScreen("1.2k/200k ctx")

	// A person's eviction: the estimate falls by 100 tokens, and so does the meter.
	f.mu.Lock()
	f.survey = api.Survey{Bytes: 800, SystemBytes: 400}
	f.mu.Unlock()
	slashCmd(d, "/evict 1 2 the listing")
	d.until("the meter after the edit", func() bool { return d.m.meter.used == 1130 && !d.m.meter.exact })
	d.waitScreen("~1.1k/200k ctx")

	// The model's own eviction: the meter follows the new estimate with the same overhead.
	f.mu.Lock()
	f.survey = api.Survey{Bytes: 400, SystemBytes: 400}
	f.mu.Unlock()
	f.push(s.rec(&record.Evicted{From: 1, To: 2, Note: "gone", By: record.ByModel}))
	d.until("the meter after the model's eviction", func() bool { return d.m.meter.used == 1030 && !d.m.meter.exact })

	// The next usage is exact again, and close to what the meter said.
	f.push(s.rec(&record.AssistantMessage{Turn: 4, StopReason: "end_turn", Usage: record.Usage{Input: 1000, Output: 40},
		Parts: []record.Part{{Type: record.PartText, Text: "ok"}}}))
	d.until("the exact usage", func() bool { return d.m.meter.used == 1040 && d.m.meter.exact })
}

func TestMeterRules(t *testing.T) {
	var c meter
	c.survey(100) // an estimate before any usage is the estimate
	if c.used != 100 || c.exact {
		t.Fatalf("estimate before any usage: %+v", c)
	}
	c.usage(2100)
	c.changed() // the context changed before a survey could calibrate
	c.survey(500)
	if c.overhead != 0 || c.used != 500 {
		t.Fatalf("an uncalibrated change must not learn an overhead: %+v", c)
	}
	c.usage(2100)
	c.survey(479)
	c.edited(400)
	if c.used != 2021 {
		t.Fatalf("after an edit removing 79 estimated tokens the meter reads %d, want 2021", c.used)
	}
	c.reset()
	if c != (meter{}) {
		t.Fatalf("reset: %+v", c)
	}
}
