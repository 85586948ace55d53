package host_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/hook"
	"github.com/reinhq/rein/internal/record"
)

// holdScript: one bash call a hook holds until the workspace has "approved", then a reply.
var holdScript = steps(`{"tool_calls":[{"name":"bash","arguments":{"command":"echo ran >> ran.txt"}}]}`, `{"text":"done"}`)

// holdingHooks holds every call until the workspace has a file named approved.
func holdingHooks(t *testing.T, ws string) func(cfg *agent.Config) {
	p := filepath.Join(t.TempDir(), "hold.sh")
	body := "#!/usr/bin/env bash\n[ -e approved ] || echo '{\"decision\":\"hold\",\"reason\":\"waiting for a review\"}'\n"
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	set := &hook.Set{Workspace: ws, Hooks: []hook.Hook{{Event: record.HookPreTool, Command: p, Timeout: time.Minute, Source: "test"}}}
	return func(cfg *agent.Config) { cfg.Hooks = set }
}

// A held conversation is listed and viewed with its hold, survives a host restart, and a release
// through the API runs the call exactly once.
func TestHeldConversationSurvivesRestart(t *testing.T) {
	r := newRig(t, rigOptions{bash: true, script: holdScript})
	r.opts.agent = holdingHooks(t, r.ws)
	r.restart() // the agents are built with the hooks from here on
	id := r.create("hold")
	r.send(id, "run it")
	r.settle(id)
	v := r.get(id)
	if v.State.Hold == nil || v.State.Hold.Reason != "waiting for a review" || v.State.Hold.By != "hook" {
		t.Fatalf("state %+v, want the hold", v.State)
	}
	r.restart()
	list, err := r.c.List(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].State.Hold == nil || list[0].State.Hold.Reason != "waiting for a review" {
		t.Fatalf("list after a restart %+v, want the held conversation with its reason", list)
	}
	if _, err := os.Stat(filepath.Join(r.ws, "ran.txt")); err == nil {
		t.Fatal("the held call ran")
	}
	if err := os.WriteFile(filepath.Join(r.ws, "approved"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := r.c.Release(ctxT(t), id, client.NewOp())
	if err != nil || !res.Released {
		t.Fatalf("release: %+v %v", res, err)
	}
	r.settle(id)
	if b, _ := os.ReadFile(filepath.Join(r.ws, "ran.txt")); string(b) != "ran\n" {
		t.Errorf("ran.txt holds %q: the released call runs exactly once", b)
	}
	v = r.get(id)
	if v.State.Hold != nil || v.State.Working {
		t.Errorf("state after the release %+v", v.State)
	}
	if res, err := r.c.Release(ctxT(t), id, client.NewOp()); err != nil || res.Released {
		t.Errorf("a release of a conversation not held: %+v %v", res, err)
	}
	if got := lastResult(t, r.records(id)); got.Outcome != record.OK {
		t.Errorf("result %+v", got)
	}
}

// A Stop of a held conversation answers its call not_executed; the call never runs.
func TestStopOfHeldConversation(t *testing.T) {
	r := newRig(t, rigOptions{bash: true, script: holdScript})
	r.opts.agent = holdingHooks(t, r.ws)
	r.restart()
	id := r.create("hold")
	r.send(id, "run it")
	r.settle(id)
	if res := r.stop(id); !res.Stopped {
		t.Fatalf("stop: %+v", res)
	}
	got := lastResult(t, r.records(id))
	if got.Outcome != record.NotExecuted || !strings.Contains(got.Content, "held (waiting for a review)") {
		t.Errorf("result %+v", got)
	}
	if v := r.get(id); v.State.Hold != nil || v.State.Working {
		t.Errorf("state after the Stop %+v", v.State)
	}
	if _, err := os.Stat(filepath.Join(r.ws, "ran.txt")); err == nil {
		t.Error("the held call ran")
	}
}

// A person's approval nobody answers before the host stops parks the call; after the restart the
// conversation is held, a release asks the person again, and the call runs once approved.
func TestUnansweredApprovalParksAcrossRestart(t *testing.T) {
	r := newRig(t, rigOptions{bash: true, ask: true, script: askScript})
	id := r.create("ask")
	w := r.events(id, 0)
	r.send(id, "run it")
	asked(t, w)
	r.restart()
	v := r.get(id)
	if v.State.Hold == nil || v.State.Hold.By != "approval" || len(v.State.Approvals) != 0 {
		t.Fatalf("state after the restart %+v, want held by the approval, none asked", v.State)
	}
	w = r.events(id, v.State.Seq)
	if res, err := r.c.Release(ctxT(t), id, client.NewOp()); err != nil || !res.Released {
		t.Fatalf("release: %+v %v", res, err)
	}
	a, _ := asked(t, w)
	if _, err := r.c.Approve(ctxT(t), id, client.NewOp(), a.CallID, true); err != nil {
		t.Fatal(err)
	}
	w.idle()
	got := lastResult(t, r.records(id))
	if got.Outcome != record.OK || !strings.Contains(got.Content, "ran-after-approval") {
		t.Fatalf("result %+v", got)
	}
}

// A message to a held conversation releases it: the held call is asked about again (and runs, the
// hook now letting it), and the message is delivered once the held window is answered.
func TestMessageReleasesHeldConversation(t *testing.T) {
	r := newRig(t, rigOptions{bash: true, script: holdScript})
	r.opts.agent = holdingHooks(t, r.ws)
	r.restart()
	id := r.create("hold")
	r.send(id, "run it")
	r.settle(id)
	if v := r.get(id); v.State.Hold == nil {
		t.Fatalf("not held: %+v", v.State)
	}
	if err := os.WriteFile(filepath.Join(r.ws, "approved"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sent := r.send(id, "it is reviewed now")
	r.settle(id)
	if b, _ := os.ReadFile(filepath.Join(r.ws, "ran.txt")); string(b) != "ran\n" {
		t.Errorf("ran.txt holds %q", b)
	}
	recs := r.records(id)
	var steered, released bool
	for _, rec := range recs {
		switch b := rec.Body.(type) {
		case *record.Steering:
			steered = steered || (b.Submission == sent.MessageID && b.Text == "it is reviewed now")
		case *record.Released:
			released = released || b.By == "message"
		}
	}
	if !steered || !released {
		t.Errorf("released by the message %v, the message delivered as steering %v", released, steered)
	}
	if v := r.get(id); v.State.Hold != nil || v.State.Working {
		t.Errorf("state %+v", v.State)
	}
}
