package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// TestDoorRules: allow, ask and deny rules take effect on the doors (context, transcript,
// agents), matched on their op, as on any tool: a denied door call is answered denied and does
// nothing (no eviction is recorded), an asked one waits for the person, and the others run.
func TestDoorRules(t *testing.T) {
	call := func(name, args string) string {
		return `{"tool_calls":[{"name":"` + name + `","arguments":` + args + `}]}`
	}
	rule := func(s string) tool.Rule {
		r, err := tool.ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	eachFormat(t, func(t *testing.T, f format) {
		var asked []string
		h := newHarness(t, f, setup{script: steps(
			bashStep("Checking alpha.", "echo alpha-marker"),                    // turn 2
			call("context", `{"op":"survey"}`),                                  // turn 3: runs
			call("context", `{"op":"evict","from":2,"to":2,"note":"alpha ok"}`), // turn 4: denied
			call("transcript", `{"op":"index"}`),                                // turn 5: denied
			call("agents", `{"op":"list"}`),                                     // turn 6: asked, declined
			call("agents", `{"op":"start","prompt":"x"}`),                       // turn 7: denied
			textStep("Done."),
		), cfg: func(c *agent.Config) {
			c.Doors = append(c.Doors, &agent.Children{})
			c.Runner.Policy = tool.Policy{Mode: tool.ModeWorkspace,
				Deny: []tool.Rule{rule("context(evict)"), rule("transcript"), rule("agents(start)")},
				Ask:  []tool.Rule{rule("agents(list)")}}
			c.Runner.Approver = tool.ApproverFunc(func(_ context.Context, call tool.Call) (bool, error) {
				asked = append(asked, call.Name)
				return false, nil
			})
		}})
		out := h.run(context.Background(), "look around")
		expect(t, out, fold.Replied, false)
		rs := h.records()
		var got []record.ToolResult
		for _, r := range rs {
			switch b := r.Body.(type) {
			case *record.ToolResults:
				got = append(got, b.Results...)
			case *record.Evicted:
				t.Errorf("a denied eviction was recorded: %+v", b)
			}
		}
		want := []struct {
			outcome record.Outcome
			reason  string
		}{
			{record.OK, ""},
			{record.OK, ""},
			{record.Denied, "context(evict) is denied by the rule context(evict)"},
			{record.Denied, "transcript is denied by the rule transcript"},
			{record.Denied, "the person declined this call"},
			{record.Denied, "agents(start) is denied by the rule agents(start)"},
		}
		if len(got) != len(want) {
			t.Fatalf("%d results, want %d: %+v", len(got), len(want), got)
		}
		for i, w := range want {
			if got[i].Outcome != w.outcome || !strings.Contains(got[i].Content, w.reason) {
				t.Errorf("result %d: %s %q, want %s %q", i, got[i].Outcome, got[i].Content, w.outcome, w.reason)
			}
		}
		if strings.Join(asked, ",") != "agents" {
			t.Errorf("the person was asked about %v, want [agents]", asked)
		}
	})
}
