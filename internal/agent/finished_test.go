package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// snapshotter is a test tool that copies the record file as it stands while it runs: what a
// SIGKILL at that moment would leave on disk.
type snapshotter struct {
	path *string
	got  *[]byte
}

func (s snapshotter) tool() probe {
	return probe{name: "snapshot", fn: func(context.Context, tool.Call) tool.Result {
		b, err := os.ReadFile(*s.path)
		if err != nil {
			return tool.Failure("snapshot: %v", err)
		}
		*s.got = b
		return tool.Result{Content: "snapshot taken", Outcome: record.OK}
	}}
}

// settleSnapshot opens a copy of a record taken mid-batch as a resume would, settles it (reason
// crashed) and returns its records.
func settleSnapshot(t *testing.T, h *harness, snap []byte) []record.Record {
	t.Helper()
	if snap == nil {
		t.Fatal("the snapshot tool never ran")
	}
	dir := filepath.Join(t.TempDir(), "crashed")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "record.jsonl")
	if err := os.WriteFile(path, snap, 0o644); err != nil {
		t.Fatal(err)
	}
	sess, _, err := session.Open(path, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	cfg := h.cfg
	cfg.Session = sess
	if err := agent.New(cfg).Settle(h.ws, "test"); err != nil {
		t.Fatal(err)
	}
	return readRecords(t, path)
}

// A kill while the third call of a batch runs: the resume answers the two calls that finished
// with their own results, byte for byte what the uninterrupted batch recorded (an error stays an
// error), the running call interrupted and the unstarted one not_executed.
func TestCrashMidBatchKeepsFinished(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		var path string
		var snap []byte
		h := newHarness(t, f, setup{
			script: steps(`{"text":"Four steps.","tool_calls":[`+
				`{"name":"bash","arguments":{"command":"printf 'one\\n\"two\"\\ttab\\n'"}},`+
				`{"name":"bash","arguments":{"command":"echo broken >&2; exit 3"}},`+
				`{"name":"snapshot","arguments":{}},`+
				`{"name":"bash","arguments":{"command":"echo four"}}]}`, textStep("Done.")),
			tools: []tool.Tool{snapshotter{&path, &snap}.tool()},
		})
		path = h.sess.Path()
		expect(t, h.run(context.Background(), "go"), fold.Replied, false)
		whole := results(t, h.records())

		rs := settleSnapshot(t, h, snap)
		quiesced(t, rs, fold.Crashed)
		got := results(t, rs)
		if len(got) != 4 {
			t.Fatalf("the settled batch answers %d calls, want 4", len(got))
		}
		for i := range 2 {
			if !reflect.DeepEqual(got[i], whole[i]) {
				t.Errorf("call %d finished before the crash; resumed it answers\n%+v\nwhere the batch answered\n%+v", i, got[i], whole[i])
			}
		}
		if whole[1].Outcome != record.Failed || !whole[1].IsError {
			t.Errorf("the failing call was answered %+v", whole[1])
		}
		if got[2].Outcome != record.Interrupted || got[3].Outcome != record.NotExecuted {
			t.Errorf("the running call is answered %s and the unstarted one %s, want interrupted and not_executed", got[2].Outcome, got[3].Outcome)
		}
	})
}

// A result that rests on an eviction recorded only with the batch's results is not kept, nor is
// any answer after it in the batch: killed before the results land, the record holds no
// eviction, so those calls are answered interrupted and the context is as it was.
func TestCrashAfterEvictionKeepsNothingProvisional(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		var path string
		var snap []byte
		h := newHarness(t, f, setup{
			script: steps(textStep("First answer."),
				`{"text":"Tidying up.","tool_calls":[`+
					`{"name":"bash","arguments":{"command":"echo before"}},`+
					`{"name":"context","arguments":{"op":"evict","from":1,"to":2,"note":"the first exchange"}},`+
					`{"name":"context","arguments":{"op":"survey"}},`+
					`{"name":"snapshot","arguments":{}}]}`, textStep("Done.")),
			tools: []tool.Tool{snapshotter{&path, &snap}.tool()},
		})
		path = h.sess.Path()
		expect(t, h.run(context.Background(), "first"), fold.Replied, false)
		expect(t, h.run(context.Background(), "second"), fold.Replied, false)
		whole := results(t, h.records())
		if whole[1].Outcome != record.OK {
			t.Fatalf("the eviction failed: %+v", whole[1])
		}

		rs := settleSnapshot(t, h, snap)
		got := results(t, rs)
		if !reflect.DeepEqual(got[0], whole[0]) {
			t.Errorf("the call before the eviction is answered %+v, want %+v", got[0], whole[0])
		}
		for i := 1; i < 4; i++ {
			if got[i].Outcome != record.Interrupted {
				t.Errorf("call %d is answered %s, want interrupted (its answer rested on an eviction never recorded)", i, got[i].Outcome)
			}
		}
		if n := len(all[*record.Evicted](rs)); n != 0 {
			t.Errorf("the settled record holds %d evictions, want none", n)
		}
	})
}
