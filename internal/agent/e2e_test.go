package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
)

// TestToolSession runs a multi-step tool session: tool calls, their results, a final text.
func TestToolSession(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(
			bashStep("Let me look.", "echo hello > a.txt && ls"),
			`{"tool_calls":[{"name":"bash","arguments":{"command":"cat a.txt"}},{"name":"bash","arguments":{"command":"mkdir -p sub && cd sub && pwd"}}]}`,
			bashStep("", "pwd"),
			textStep("Done: a.txt says hello."),
		)})
		out := h.run(context.Background(), "make a file and read it")
		expect(t, out, fold.Replied, false)

		rs := h.records()
		got := kinds(rs, record.KindSessionStarted, record.KindSystem, record.KindTurnStarted)
		want := []string{
			"user_prompt",
			"assistant_message", "tool_started", "tool_finished", "tool_results",
			"assistant_message", "tool_started", "tool_finished", "tool_started", "tool_finished", "tool_results",
			"assistant_message", "tool_started", "tool_finished", "tool_results",
			"assistant_message", "quiesced",
		}
		if !slices.Equal(got, want) {
			t.Fatalf("record kinds\n got %v\nwant %v", got, want)
		}
		quiesced(t, rs, fold.Replied)
		msgs := all[*record.AssistantMessage](rs)
		results := all[*record.ToolResults](rs)
		for i, tr := range results {
			for _, r := range tr.Results {
				if !strings.HasSuffix(r.Content, "\n"+fold.Trailer(msgs[i].Turn)) {
					t.Errorf("result %s does not end with %q: %q", r.CallID, fold.Trailer(msgs[i].Turn), r.Content)
				}
				if r.Outcome != record.OK {
					t.Errorf("result %s outcome %s: %q", r.CallID, r.Outcome, r.Content)
				}
			}
		}
		if c := results[1].Results[0].Content; !strings.HasPrefix(c, "hello\n") {
			t.Errorf("cat a.txt answered %q", c)
		}
		// The working directory persists across calls.
		if c := results[2].Results[0].Content; !strings.HasPrefix(c, filepath.Join(h.ws, "sub")+"\n") {
			t.Errorf("pwd after cd answered %q, want %s/sub", c, h.ws)
		}
		if _, err := os.Stat(filepath.Join(h.ws, "a.txt")); err != nil {
			t.Errorf("the tool did not run in the workspace: %v", err)
		}
		if text(msgs[len(msgs)-1].Parts) != "Done: a.txt says hello." {
			t.Errorf("final text %q", text(msgs[len(msgs)-1].Parts))
		}
		// Each request carried the results before it: the second request's last message answers
		// the first call.
		reqs := h.wire.requests()
		if len(reqs) != 4 {
			t.Fatalf("%d requests, want 4", len(reqs))
		}
		lastMsg := reqs[1][len(reqs[1])-1]
		if lastMsg.Role != record.User || lastMsg.Parts[0].Type != record.PartToolResult || !strings.Contains(lastMsg.Parts[0].Text, "a.txt") {
			t.Errorf("the second request ends with %+v", lastMsg)
		}
	})
}
