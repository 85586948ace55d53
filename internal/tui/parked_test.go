package tui

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/record"
)

// releasingHost is the fake host that also releases held conversations.
type releasingHost struct{ *fakeHost }

func (h releasingHost) Release(ctx context.Context, id, op string) error {
	h.log("release %s %s", id, op)
	return nil
}

// A held conversation: the scrollback shows the hook's answer and the hold, the status line says
// held and why, and /release asks the host to release it.
func TestHeldShownAndReleased(t *testing.T) {
	f := newFake()
	f.caps = append(f.caps, api.CapRelease)
	d := newDriver(t, releasingHost{f}, Options{})
	called := func(prefix string) func() bool {
		return func() bool {
			for _, c := range f.Calls() {
				if strings.HasPrefix(c, prefix) {
					return true
				}
			}
			return false
		}
	}
	d.typ("push it")
	d.press("enter")
	d.until("the send", called("send c-new"))
	d.until("the events", called("events c-new after=0"))
	s := &stream{}
	args, _ := json.Marshal(map[string]string{"command": "git push"})
	sub := api.Submission{ID: "m-op-1", Op: "op-1", State: api.Delivered, Text: "push it", Attachments: []record.Attachment{}}
	s.state.Submissions = []api.Submission{sub}
	s.working(true)
	evs := []api.Event{s.rec(started()), s.rec(&record.UserPrompt{Turn: 1, Text: "push it", Submission: sub.ID})}
	s.state.Turn = 2
	evs = append(evs,
		s.rec(&record.AssistantMessage{Turn: 2, StopReason: "tool_use", Model: "sim-1", Parts: []record.Part{{Type: record.PartToolCall, CallID: "c1", Name: "bash", Args: args}}}),
		s.rec(&record.ToolStarted{CallID: "c1", Name: "bash"}),
		s.rec(&record.Hook{Event: record.HookPreTool, Command: "./guard.sh", CallID: "c1", Tool: "bash", Decision: record.HookHold, Reason: "waiting for a review"}),
	)
	s.state.Hold = &api.Hold{CallID: "c1", Reason: "waiting for a review", By: "hook"}
	evs = append(evs, s.rec(&record.Hold{CallID: "c1", Reason: "waiting for a review", By: "hook"}))
	f.push(evs...)
	d.waitScreen("pre_tool hook ./guard.sh: hold (waiting for a review)")
	d.waitScreen("⏸ held c1: waiting for a review")
	d.waitScreen("⏸ held: waiting for a review")
	slashCmd(d, "/release")
	d.until("the release", called("release c-new"))
}
