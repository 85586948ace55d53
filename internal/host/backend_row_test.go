package host_test

import (
	"context"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/external"
	"github.com/reinhq/rein/internal/host"
)

// echoProgram is an external back-end that answers every turn at once with the prompt it got.
type echoProgram struct{}

func (echoProgram) Kind() string                          { return api.BackendCodex }
func (echoProgram) Check(context.Context) (string, error) { return "0.169.0", nil }
func (echoProgram) Close() error                          { return nil }
func (echoProgram) Turn(ctx context.Context, t external.Turn, s external.Sink) external.Result {
	if err := s.Started("thread-1", "0.169.0"); err != nil {
		return external.Result{Status: external.StatusFailed, Err: err}
	}
	return external.Result{Status: external.StatusCompleted, Reply: "heard: " + t.Prompt, Session: "thread-1"}
}

// A conversation on an external back-end says so in every view of it: live, resting (from its
// index row) and after a restart (the index reopened, the record not replayed).
func TestBackendInRestingView(t *testing.T) {
	r := newRig(t, rigOptions{quiet: true, backends: []string{api.BackendCodex},
		external: func(s host.Setup) *agent.External {
			return &agent.External{Backend: echoProgram{}, Approver: s.Approver, Turn: external.Turn{Mode: "full"}}
		}})
	v, _, err := r.c.CreateOn(ctxT(t), client.NewOp(), "", api.BackendCodex)
	if err != nil || v.Backend != api.BackendCodex {
		t.Fatalf("create on codex: %+v %v", v, err)
	}
	r.send(v.ID, "hello")
	r.settle(v.ID)
	listed := func(when string) {
		t.Helper()
		vs, err := r.c.List(ctxT(t))
		if err != nil || len(vs) != 1 || vs[0].Backend != api.BackendCodex {
			t.Fatalf("%s: the list says %+v (%v), want the conversation on codex", when, vs, err)
		}
	}
	listed("live")
	if err := r.h.Rest(); err != nil {
		t.Fatal(err)
	}
	listed("resting")
	r.restart()
	listed("after a restart")
}
