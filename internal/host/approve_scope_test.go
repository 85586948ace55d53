package host_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/record"
)

// An answer "allow for this conversation" grants the exact commands asked about, recorded with the
// answer: a later call of the same command runs without asking, after a host restart too; another
// command still asks; a command whose words do not tell what it does can only be allowed once.
func TestApproveForTheConversation(t *testing.T) {
	r := newRig(t, rigOptions{bash: true, ask: true, script: steps(
		`{"tool_calls":[{"name":"bash","arguments":{"command":"echo granted-run"}}]}`,
		`{"tool_calls":[{"name":"bash","arguments":{"command":"echo granted-run"}}]}`,
		`{"text":"first done"}`,
		`{"tool_calls":[{"name":"bash","arguments":{"command":"echo granted-run"}}]}`,
		`{"tool_calls":[{"name":"bash","arguments":{"command":"echo other > out.txt"}}]}`,
		`{"text":"second done"}`,
	)})
	caps, err := r.c.Capabilities(ctxT(t))
	if err != nil || !caps.Has("approval-scope.v1") {
		t.Fatalf("capabilities %+v %v", caps, err)
	}
	id := r.create("scope")
	w := r.events(id, 0)
	r.send(id, "run it twice")
	e := w.until("an approval asked", func(e api.Event) bool { return e.Kind == string(record.KindApproval) })
	var a record.Approval
	if err := json.Unmarshal(e.Payload, &a); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Rules, []string{"bash(echo granted-run)"}) || len(e.State.Approvals) != 1 || !slices.Equal(e.State.Approvals[0].Rules, a.Rules) {
		t.Fatalf("asked %+v with state %+v, want the rule bash(echo granted-run) offered", a, e.State.Approvals)
	}
	if _, err := r.c.ApproveScoped(ctxT(t), id, client.NewOp(), a.CallID, false, "conversation"); client.Code(err) != "bad_request" {
		t.Fatalf("a denial for the conversation: %v, want bad_request", err)
	}
	if _, err := r.c.ApproveScoped(ctxT(t), id, client.NewOp(), a.CallID, true, "forever"); client.Code(err) != "bad_request" {
		t.Fatalf("an unknown scope: %v, want bad_request", err)
	}
	res, err := r.c.ApproveScoped(ctxT(t), id, client.NewOp(), a.CallID, true, "conversation")
	if err != nil || res.State != record.ApprovalAllowed || res.Scope != "conversation" {
		t.Fatalf("allow for the conversation: %+v %v", res, err)
	}
	w.idle()
	if n := countApprovals(r.records(id), record.ApprovalAsked); n != 1 {
		t.Fatalf("%d approvals asked in the first exchange, want 1: the second call is granted", n)
	}

	// After a restart the grant holds: the same command runs unasked, another asks.
	r.restart()
	w = r.events(id, 0)
	r.send(id, "again")
	e = w.until("the other command asked", func(e api.Event) bool {
		return e.Kind == string(record.KindApproval) && strings.Contains(string(e.Payload), "out.txt")
	})
	a = record.Approval{}
	if err := json.Unmarshal(e.Payload, &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Rules) != 0 {
		t.Fatalf("a command writing a file offers rules %q; its words do not tell all it does: %s", a.Rules, e.Payload)
	}
	if _, err := r.c.ApproveScoped(ctxT(t), id, client.NewOp(), a.CallID, true, "conversation"); client.Code(err) != "bad_request" {
		t.Fatalf("allowing for the conversation a call with no rule: %v, want bad_request", err)
	}
	if _, err := r.c.Approve(ctxT(t), id, client.NewOp(), a.CallID, true); err != nil {
		t.Fatal(err)
	}
	w.idle()
	recs := r.records(id)
	if n := countApprovals(recs, record.ApprovalAsked); n != 2 {
		t.Fatalf("%d approvals asked in all, want 2 (the first command once, the other once)", n)
	}
	ran := 0
	for _, rec := range recs {
		if tr, ok := rec.Body.(*record.ToolResults); ok {
			for _, res := range tr.Results {
				if res.Outcome == record.OK && strings.Contains(res.Content, "granted-run") {
					ran++
				}
			}
		}
	}
	if ran != 3 {
		t.Fatalf("the granted command ran %d times, want 3", ran)
	}
	if _, err := os.Stat(filepath.Join(r.ws, "out.txt")); err != nil {
		t.Fatalf("the command allowed once did not run: %v", err)
	}
}

func countApprovals(recs []record.Record, state string) int {
	n := 0
	for _, rec := range recs {
		if a, ok := rec.Body.(*record.Approval); ok && a.State == state {
			n++
		}
	}
	return n
}
