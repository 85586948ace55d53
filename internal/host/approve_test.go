package host_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
)

// askScript: one bash call the ask policy puts to the person, then a reply.
var askScript = steps(`{"tool_calls":[{"name":"bash","arguments":{"command":"echo ran-after-approval"}}]}`, `{"text":"done"}`)

// asked waits for the approval of a call to be published, in the record and the state.
func asked(t *testing.T, w *watch) (record.Approval, api.State) {
	t.Helper()
	e := w.until("an approval asked", func(e api.Event) bool { return e.Kind == string(record.KindApproval) })
	var a record.Approval
	if err := json.Unmarshal(e.Payload, &a); err != nil {
		t.Fatal(err)
	}
	if a.State != record.ApprovalAsked || a.Name != "bash" || !strings.Contains(a.Args, "ran-after-approval") || a.CallID == "" {
		t.Fatalf("approval asked %+v", a)
	}
	if len(e.State.Approvals) != 1 || e.State.Approvals[0].CallID != a.CallID || !e.State.Working {
		t.Fatalf("state %+v, want the call pending and the conversation working", e.State)
	}
	return a, e.State
}

func lastResult(t *testing.T, recs []record.Record) record.ToolResult {
	t.Helper()
	tr, ok := lastOf[*record.ToolResults](recs)
	if !ok || len(tr.Results) != 1 {
		t.Fatalf("tool results %+v, want one", tr)
	}
	return tr.Results[0]
}

func TestApproveAllowed(t *testing.T) {
	r := newRig(t, rigOptions{bash: true, ask: true, script: askScript})
	caps, err := r.c.Capabilities(ctxT(t))
	if err != nil || !caps.Has("approvals.v1") || !caps.Has("model.v1") {
		t.Fatalf("capabilities %+v %v", caps, err)
	}
	id := r.create("ask")
	w := r.events(id, 0)
	r.send(id, "run it")
	a, _ := asked(t, w)
	if v := r.get(id); len(v.State.Approvals) != 1 {
		t.Fatalf("GET state %+v, want the pending approval", v.State)
	}
	op := client.NewOp()
	res, err := r.c.Approve(ctxT(t), id, op, a.CallID, true)
	if err != nil || res.State != record.ApprovalAllowed || res.Replayed {
		t.Fatalf("approve: %+v %v", res, err)
	}
	// The same op replays; the same op with another answer is refused.
	if res, err := r.c.Approve(ctxT(t), id, op, a.CallID, true); err != nil || !res.Replayed {
		t.Fatalf("approve again: %+v %v", res, err)
	}
	if _, err := r.c.Approve(ctxT(t), id, op, a.CallID, false); client.Code(err) != "op_conflict" {
		t.Fatalf("approve with another answer: %v, want op_conflict", err)
	}
	// An answered call is no longer waiting.
	if _, err := r.c.Approve(ctxT(t), id, client.NewOp(), a.CallID, true); client.Code(err) != "not_found" {
		t.Fatalf("approve an answered call: %v, want not_found", err)
	}
	e := w.idle()
	if len(e.State.Approvals) != 0 {
		t.Errorf("approvals after the exchange: %+v", e.State.Approvals)
	}
	got := lastResult(t, r.records(id))
	if got.Outcome != record.OK || !strings.Contains(got.Content, "ran-after-approval") {
		t.Fatalf("result %+v, want ok with the output", got)
	}
	if _, err := r.c.Approve(ctxT(t), id, client.NewOp(), "no-such-call", true); client.Code(err) != "not_found" {
		t.Fatalf("approve an unknown call: %v, want not_found", err)
	}
}

func TestApproveDenied(t *testing.T) {
	r := newRig(t, rigOptions{bash: true, ask: true, script: askScript})
	id := r.create("ask")
	w := r.events(id, 0)
	r.send(id, "run it")
	a, _ := asked(t, w)
	if res, err := r.c.Approve(ctxT(t), id, client.NewOp(), a.CallID, false); err != nil || res.State != record.ApprovalDenied {
		t.Fatalf("deny: %+v %v", res, err)
	}
	w.idle()
	recs := r.records(id)
	got := lastResult(t, recs)
	if got.Outcome != record.Denied || !strings.Contains(got.Content, "declined") {
		t.Fatalf("result %+v, want denied, saying the person declined", got)
	}
	if r.requestsWith("the person declined") == 0 {
		t.Error("the model was not told the call was declined")
	}
	if strings.Contains(got.Content, "ran-after-approval") {
		t.Error("a denied call ran")
	}
	var states []string
	for _, rec := range recs {
		if ap, ok := rec.Body.(*record.Approval); ok {
			states = append(states, ap.State+"/"+ap.By)
		}
	}
	if !slices.Equal(states, []string{"asked/", "denied/user"}) {
		t.Errorf("approval records %v", states)
	}
}

func TestApproveStopEndsTheWait(t *testing.T) {
	r := newRig(t, rigOptions{bash: true, ask: true, script: askScript})
	id := r.create("ask")
	w := r.events(id, 0)
	r.send(id, "run it")
	a, _ := asked(t, w)
	if res := r.stop(id); !res.Stopped || !res.Interrupted {
		t.Fatalf("stop answered %+v", res)
	}
	e := w.idle()
	if len(e.State.Approvals) != 0 {
		t.Errorf("approvals after the Stop: %+v", e.State.Approvals)
	}
	if got := lastResult(t, r.records(id)); got.Outcome != record.NotExecuted {
		t.Fatalf("result %+v, want not_executed", got)
	}
	if _, err := r.c.Approve(ctxT(t), id, client.NewOp(), a.CallID, true); client.Code(err) != "not_found" {
		t.Fatalf("approve after the Stop: %v, want not_found", err)
	}
}

func TestSetModel(t *testing.T) {
	r := newRig(t, rigOptions{script: steps(slowText("", 200, 20), `{"text":"one"}`, `{"text":"two"}`)})
	id := r.create("model")
	w := r.events(id, 0)
	r.send(id, "first")
	w.record(record.KindUserPrompt)
	w.live("text") // the request with the old model is made before the Stop below
	if _, err := r.c.SetModel(ctxT(t), id, client.NewOp(), "sim-2", ""); client.Code(err) != "busy" {
		t.Fatalf("switch while working: %v, want busy", err)
	}
	r.stop(id)
	w.idle()
	r.send(id, "second")
	w.idle()
	if n := r.requestsWith(`"model":"sim-2"`); n != 0 {
		t.Fatalf("%d requests with the new model before the switch", n)
	}
	op := client.NewOp()
	res, err := r.c.SetModel(ctxT(t), id, op, "sim-2", "")
	if err != nil || res.Model != "sim-2" || res.Provider != "sim" || res.Replayed {
		t.Fatalf("switch: %+v %v", res, err)
	}
	if res, err := r.c.SetModel(ctxT(t), id, op, "sim-2", ""); err != nil || !res.Replayed {
		t.Fatalf("switch again: %+v %v", res, err)
	}
	if _, err := r.c.SetModel(ctxT(t), id, op, "sim-3", ""); client.Code(err) != "op_conflict" {
		t.Fatalf("same op, another model: %v, want op_conflict", err)
	}
	if _, err := r.c.SetModel(ctxT(t), id, client.NewOp(), "x", "elsewhere"); client.Code(err) != "bad_request" {
		t.Fatalf("switch to a provider the host does not talk to: %v, want bad_request", err)
	}
	mc, ok := lastOf[*record.ModelChanged](r.records(id))
	if !ok || mc.Model != "sim-2" || mc.Op != op {
		t.Fatalf("model_changed %+v", mc)
	}
	r.send(id, "third")
	w.idle()
	if n := r.requestsWith(`"model":"sim-2"`); n != 1 {
		t.Fatalf("%d requests with the new model after the switch, want 1", n)
	}
	// A conversation reopened after a restart keeps its model.
	r.restart()
	r.send(id, "fourth")
	r.settle(id)
	if n := r.requestsWith(`"model":"sim-2"`); n != 2 {
		t.Fatalf("%d requests with the new model after a restart, want 2", n)
	}
	if n := r.requestsWith(`"model":"` + sim.DefaultModel + `"`); n != 2 {
		t.Errorf("%d requests with the old model, want 2", n)
	}
}
