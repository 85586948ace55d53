package agent_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// TestToolsChangeAtTurnBoundary: a tool set that changes while a call runs (an MCP server's
// list_changed) is picked up at the next turn boundary, recorded before the request that offers
// it, and the new tool runs; every request passes the validators.
func TestToolsChangeAtTurnBoundary(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		var grown atomic.Bool
		grow := probe{name: "grow", fn: func(context.Context, tool.Call) tool.Result {
			grown.Store(true)
			return tool.Success("added a tool")
		}}
		added := probe{name: "grown", fn: func(context.Context, tool.Call) tool.Result { return tool.Success("the new tool ran") }}
		var offered []bool
		h := newHarness(t, f, setup{
			script: steps(callStep("", `{"name":"grow","arguments":{}}`), callStep("", `{"name":"grown","arguments":{}}`), textStep("done")),
			tools:  []tool.Tool{grow},
			cfg: func(c *agent.Config) {
				base := c.Runner.Tools
				c.Runner.Refresh = func() (*tool.Registry, []record.Payload) {
					if !grown.Load() || c.Runner.Tools != base {
						return nil, nil
					}
					var ts []tool.Tool
					for _, n := range base.Names() {
						x, _ := base.Get(n)
						ts = append(ts, x)
					}
					reg, err := tool.NewRegistry(append(ts, added)...)
					if err != nil {
						t.Error(err)
						return nil, nil
					}
					return reg, []record.Payload{&record.MCPServer{Name: "fx", State: record.MCPChanged, Tools: []string{"grown"}}}
				}
			},
		})
		h.onRequest(func(body []byte) { offered = append(offered, strings.Contains(string(body), `"grown"`)) })
		expect(t, h.run(context.Background(), "grow a tool"), fold.Replied, false)
		if len(offered) != 3 || offered[0] || !offered[1] || !offered[2] {
			t.Fatalf("the new tool was offered in requests %v, want [false true true]", offered)
		}
		rs := h.records()
		var changedAt, resultAt int = -1, -1
		for i, r := range rs {
			switch p := r.Body.(type) {
			case *record.MCPServer:
				changedAt = i
			case *record.ToolResults:
				for _, res := range p.Results {
					if res.CallID != "" && strings.Contains(res.Content, "the new tool ran") {
						resultAt = i
					}
				}
			}
		}
		if changedAt < 0 || resultAt < 0 || changedAt > resultAt {
			t.Fatalf("tools_changed at %d, the new tool's result at %d", changedAt, resultAt)
		}
	})
}
