package host_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// The Stop decision table (DESIGN §12.3), one state per test, through the HTTP API.

// Nothing in flight: a quiet success that writes nothing.
func TestStopNothingInFlight(t *testing.T) {
	r := newRig(t, rigOptions{})
	id := r.create("quiet")
	w := r.events(id, 0)
	before := r.get(id).State.Seq
	res := r.stop(id)
	if res.Stopped || res.Interrupted || len(res.Withdrawn) != 0 || res.Replayed {
		t.Fatalf("stop with nothing in flight answered %+v", res)
	}
	if after := r.get(id).State.Seq; after != before {
		t.Fatalf("a quiet Stop wrote records %d..%d", before+1, after)
	}
	// And after an exchange has ended.
	r.send(id, "hello")
	w.idle()
	before = r.get(id).State.Seq
	if res := r.stop(id); res.Stopped {
		t.Fatalf("stop after the exchange ended answered %+v", res)
	}
	if after := r.get(id).State.Seq; after != before {
		t.Fatalf("a quiet Stop wrote records %d..%d", before+1, after)
	}
	if _, ok := lastOf[*record.Stop](r.records(id)); ok {
		t.Fatal("a quiet Stop was recorded")
	}
}

// Accepted only: messages waiting behind the running exchange — queued, or steering not yet
// delivered — are withdrawn, their text and attachments answered, and never reach the provider.
func TestStopWithdrawsAccepted(t *testing.T) {
	r := newRig(t, rigOptions{script: steps(slowText("", 400, 50))})
	id := r.create("withdraw")
	w := r.events(id, 0)
	first := r.send(id, "first")
	w.live("text")
	att := []record.Attachment{{Name: "notes.txt", MediaType: "text/plain", Text: "attached words"}}
	queued, err := r.c.Send(ctxT(t), id, api.Message{Op: client.NewOp(), Text: "second, queued", Attachments: att, Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	steer := r.send(id, "third, as steering")
	if v := r.get(id); !v.State.Working || len(v.State.Submissions) != 3 {
		t.Fatalf("before the Stop: %+v", v.State)
	}
	res := r.stop(id)
	if !res.Stopped || !res.Interrupted {
		t.Fatalf("stop answered %+v", res)
	}
	want := []api.Taken{
		{ID: queued.MessageID, Text: "second, queued", Attachments: att},
		{ID: steer.MessageID, Text: "third, as steering", Attachments: []record.Attachment{}},
	}
	if mustJSON(res.Withdrawn) != mustJSON(want) {
		t.Fatalf("withdrawn\n got %s\nwant %s", mustJSON(res.Withdrawn), mustJSON(want))
	}
	w.idle()
	recs := r.records(id)
	if s := submission(recs, first.MessageID); s.State != api.Cancelled {
		t.Errorf("the running message ended %s, want cancelled", s.State)
	}
	for _, m := range want {
		if s := submission(recs, m.ID); s.State != api.Withdrawn || s.Reason != "cancelled before it started" {
			t.Errorf("%s ended %+v, want withdrawn", m.ID, s)
		}
	}
	if n := len(r.sim.Requests()); n != 1 {
		t.Errorf("%d provider requests, want only the first message's", n)
	}
	if r.requestsWith("second") != 0 || r.requestsWith("third") != 0 {
		t.Error("a withdrawn message reached the provider")
	}
	if v := r.get(id); v.State.Working || len(v.State.Submissions) != 0 {
		t.Errorf("after the Stop: %+v", v.State)
	}
}

// The agent starting: the prompt is committed and no request has gone out. The start is stopped
// with no provider call, and the conversation stays open for the next message.
func TestStopAgentStarting(t *testing.T) {
	r := newRig(t, rigOptions{})
	id := r.create("starting")
	w := r.events(id, 0)
	r.gate.close()
	m := r.send(id, "hold on")
	<-r.gate.reached()
	res := r.stop(id)
	if !res.Stopped || !res.Interrupted || len(res.Withdrawn) != 0 {
		t.Fatalf("stop answered %+v", res)
	}
	r.gate.open()
	w.idle()
	recs := r.records(id)
	if s := submission(recs, m.MessageID); s.State != api.Cancelled {
		t.Errorf("the message ended %+v, want cancelled", s)
	}
	if q, _ := lastOf[*record.Quiesced](recs); q.Reason != fold.Cancelled {
		t.Errorf("quiesced %+v, want cancelled", q)
	}
	if n := len(r.sim.Requests()); n != 0 {
		t.Errorf("%d provider requests after a Stop at the start, want none", n)
	}
	next := r.send(id, "and now")
	w.idle()
	if s := submission(r.records(id), next.MessageID); s.State != api.Answered {
		t.Errorf("the next message ended %+v, want answered", s)
	}
}

// Waiting on a rate-limit retry: the sleep (here a 30 s retry-after) ends at once.
func TestStopDuringRetry(t *testing.T) {
	r := newRig(t, rigOptions{script: steps(`{"status":429,"retry_after":"60"}`)})
	id := r.create("retry")
	w := r.events(id, 0)
	m := r.send(id, "rate limited")
	w.record(record.KindRetryScheduled)
	if v := r.get(id); !v.State.Working {
		t.Fatalf("waiting on a retry does not read working: %+v", v.State)
	}
	start := time.Now()
	if res := r.stop(id); !res.Stopped || !res.Interrupted {
		t.Fatalf("stop answered %+v", res)
	}
	w.idle()
	t.Logf("stop to quiesced during a retry wait: %v", time.Since(start))
	recs := r.records(id)
	if q, _ := lastOf[*record.Quiesced](recs); q.Reason != fold.Cancelled {
		t.Errorf("quiesced %+v, want cancelled", q)
	}
	if s := submission(recs, m.MessageID); s.State != api.Cancelled {
		t.Errorf("the message ended %+v", s)
	}
	if n := len(r.sim.Requests()); n != 1 {
		t.Errorf("%d provider requests, want the one that was refused", n)
	}
}

// Streaming: the stream is cut, what was said is committed, the exchange quiesces.
func TestStopStreaming(t *testing.T) {
	r := newRig(t, rigOptions{script: steps(slowText("", 400, 50))})
	id := r.create("streaming")
	w := r.events(id, 0)
	r.send(id, "talk slowly")
	w.live("text")
	w.live("text")
	if res := r.stop(id); !res.Stopped || !res.Interrupted {
		t.Fatalf("stop answered %+v", res)
	}
	w.idle()
	recs := r.records(id)
	am, ok := lastOf[*record.AssistantMessage](recs)
	if !ok || am.StopReason != provider.StopCancelled || len(am.Parts) == 0 {
		t.Errorf("the stopped reply committed %+v", am)
	}
	if q, _ := lastOf[*record.Quiesced](recs); q.Reason != fold.Cancelled {
		t.Errorf("quiesced %+v, want cancelled", q)
	}
}

// Running a tool: the process is stopped, the call answered interrupted, the exchange quiesced.
func TestStopRunningTool(t *testing.T) {
	r := newRig(t, rigOptions{bash: true, script: steps(`{"tool_calls":[{"name":"bash","arguments":{"command":"echo running; sleep 30; echo finished"}}]}`)})
	id := r.create("tool")
	w := r.events(id, 0)
	r.send(id, "run it")
	w.record(record.KindToolStarted)
	// tool_started is durable before the call is judged and run; the command's own first line
	// says it runs (a Stop before that answers not_executed, truthfully).
	w.live("tool_output")
	start := time.Now()
	if res := r.stop(id); !res.Stopped || !res.Interrupted {
		t.Fatalf("stop answered %+v", res)
	}
	w.idle()
	t.Logf("stop to quiesced while a tool ran: %v", time.Since(start))
	recs := r.records(id)
	tr, ok := lastOf[*record.ToolResults](recs)
	if !ok || len(tr.Results) != 1 || tr.Results[0].Outcome != record.Interrupted {
		t.Fatalf("tool results %+v, want one interrupted", tr)
	}
	if q, _ := lastOf[*record.Quiesced](recs); q.Reason != fold.Cancelled {
		t.Errorf("quiesced %+v, want cancelled", q)
	}
}

// A turn is only a precondition: a Stop naming a turn no longer in hand does nothing.
func TestStopTurnPrecondition(t *testing.T) {
	r := newRig(t, rigOptions{script: steps(slowText("", 400, 50))})
	id := r.create("precondition")
	w := r.events(id, 0)
	r.send(id, "go")
	e := w.record(record.KindUserPrompt)
	var p record.UserPrompt
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		t.Fatal(err)
	}
	w.live("text")
	res, err := r.c.Stop(ctxT(t), id, p.Turn+7)
	if err != nil || res.Stopped || res.Reason == "" {
		t.Fatalf("stop naming another turn answered %+v, %v", res, err)
	}
	if !r.get(id).State.Working {
		t.Fatal("a Stop naming another turn stopped the exchange")
	}
	if res, err := r.c.Stop(ctxT(t), id, p.Turn); err != nil || !res.Stopped || !res.Interrupted {
		t.Fatalf("stop naming the turn in hand answered %+v, %v", res, err)
	}
	w.idle()
	if res, err := r.c.Stop(ctxT(t), id, p.Turn); err != nil || res.Stopped {
		t.Fatalf("stop naming a finished turn answered %+v, %v", res, err)
	}
}

// Each press is its own operation: a Stop pressed after a new send stops that send, while a retry
// of an earlier press replays its answer and stops nothing new.
func TestStopEachPress(t *testing.T) {
	r := newRig(t, rigOptions{script: steps(slowText("", 400, 50), slowText("", 400, 50))})
	id := r.create("presses")
	w := r.events(id, 0)
	r.send(id, "one")
	w.live("text")
	p1 := client.NewOp()
	first, err := r.c.StopOp(ctxT(t), id, p1, 0)
	if err != nil || !first.Stopped {
		t.Fatalf("first press: %+v, %v", first, err)
	}
	w.idle()
	m2 := r.send(id, "two")
	w.live("text")
	again, err := r.c.StopOp(ctxT(t), id, p1, 0)
	if err != nil || !again.Replayed || !again.Stopped {
		t.Fatalf("a retry of the first press answered %+v, %v", again, err)
	}
	if !r.get(id).State.Working {
		t.Fatal("a replayed press stopped the new send")
	}
	if _, err := r.c.StopOp(ctxT(t), id, p1, 3); client.Code(err) != "op_conflict" {
		t.Fatalf("the first press's id with another turn: %v, want op_conflict", err)
	}
	if res := r.stop(id); !res.Stopped || !res.Interrupted {
		t.Fatalf("second press: %+v", res)
	}
	w.idle()
	if s := submission(r.records(id), m2.MessageID); s.State != api.Cancelled {
		t.Errorf("the second send ended %+v, want cancelled", s)
	}
	stops := 0
	for _, rec := range r.records(id) {
		if _, ok := rec.Body.(*record.Stop); ok {
			stops++
		}
	}
	if stops != 2 {
		t.Errorf("%d Stop records, want 2", stops)
	}
}

// Operation ids: a repeated send with the same id and payload replays; another payload is refused.
func TestOperationIDs(t *testing.T) {
	r := newRig(t, rigOptions{})
	ctx := ctxT(t)
	op := client.NewOp()
	v, replayed, err := r.c.Create(ctx, op, "ops")
	if err != nil || replayed {
		t.Fatalf("create: %v %v", replayed, err)
	}
	again, replayed, err := r.c.Create(ctx, op, "ops")
	if err != nil || !replayed || again.ID != v.ID {
		t.Fatalf("create replay: %+v %v %v", again, replayed, err)
	}
	if _, _, err := r.c.Create(ctx, op, "another"); client.Code(err) != "op_conflict" {
		t.Fatalf("create with a used id and another title: %v", err)
	}
	if all, _ := r.c.List(ctx); len(all) != 1 {
		t.Fatalf("%d conversations after a create and its replays", len(all))
	}
	id := v.ID
	w := r.events(id, 0)
	m := api.Message{Op: client.NewOp(), Text: "once"}
	first, err := r.c.Send(ctx, id, m)
	if err != nil || first.Replayed {
		t.Fatal(first, err)
	}
	w.idle()
	second, err := r.c.Send(ctx, id, m)
	if err != nil || !second.Replayed || second.MessageID != first.MessageID || second.State != api.Answered {
		t.Fatalf("send replay answered %+v, %v", second, err)
	}
	m.Text = "twice"
	if _, err := r.c.Send(ctx, id, m); client.Code(err) != "op_conflict" {
		t.Fatalf("send with a used id and another text: %v", err)
	}
	n := 0
	for _, rec := range r.records(id) {
		if s, ok := rec.Body.(*record.Submission); ok && s.Op == m.Op {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d submissions recorded under one op id, want 1", n)
	}
	if got := r.requestsWith("once"); got != 1 {
		t.Errorf("the message reached the provider %d times", got)
	}
	// Missing op ids are refused by name.
	if _, err := r.c.Send(ctx, id, api.Message{Text: "no id"}); client.Code(err) != "bad_request" {
		t.Errorf("send without an op id: %v", err)
	}
	if _, err := r.c.StopOp(ctx, id, "", 0); client.Code(err) != "bad_request" {
		t.Errorf("stop without an op id: %v", err)
	}
}

var _ = slices.Equal[[]string]
