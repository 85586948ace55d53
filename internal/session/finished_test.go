package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

const fakeKey = "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

// A batch written as the agent writes it (each call's tool_started committed, its tool_finished
// appended with its result) loses no finished result to a power cut once the next call has
// started: the commit of the next tool_started syncs it. The kept result is redacted exactly as
// the batch's tool_results would have been, and what a resume answers with is that result.
func TestFinishedDurableBeforeNextCall(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("REIN_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (rerun with REIN_SEED=%d)", seed, seed)
	red := secrets(t) // the exact value of secret, and every well-known key shape
	for run := range 200 {
		rng := rand.New(rand.NewPCG(seed, uint64(run)))
		mem := fsys.NewMem()
		s, err := Create("/r/s", Options{FS: mem, Redact: red}, started("s"))
		must(t, err)
		must(t, s.Append(&record.UserPrompt{Turn: 1, Text: "go"}))
		n := 2 + rng.IntN(4)
		parts := []record.Part{}
		for i := range n {
			parts = append(parts, record.Part{Type: record.PartToolCall, CallID: fmt.Sprintf("c%d", i), Name: "bash", Args: json.RawMessage(`{}`)})
		}
		must(t, s.Commit(&record.AssistantMessage{Turn: 2, Parts: parts, StopReason: "tool_use"}, &record.ToolStarted{CallID: "c0", Name: "bash"}))
		// The crash comes while call k runs (k == n: after the last call finished, before the
		// batch's results).
		k := rng.IntN(n + 1)
		want := map[string]record.ToolResult{}
		for i := range min(k+1, n) {
			id := fmt.Sprintf("c%d", i)
			if i > 0 {
				must(t, s.Commit(&record.ToolStarted{CallID: id, Name: "bash"}))
			}
			if i == k {
				break // running at the crash
			}
			content := fold.WithTrailer(fmt.Sprintf("output %d\nkey=%s\nsecret=%s", i, fakeKey, secret), 2)
			must(t, s.Append(&record.ToolFinished{CallID: id, Outcome: record.OK, Content: content}))
			want[id] = record.ToolResult{CallID: id, Content: red.Redact(content), Outcome: record.OK}
		}
		mem.Crash(rng)

		s2, _, err := Open("/r/s/record.jsonl", Options{FS: mem, Redact: red})
		if err != nil {
			t.Fatalf("run %d (seed %d): %v", run, seed, err)
		}
		st := s2.Snapshot()
		for i := range n {
			id := fmt.Sprintf("c%d", i)
			got, ok := st.Finished(id)
			w, finished := want[id]
			// Every finished call but the newest was followed by a commit; the newest is
			// durable only if a later call started (k == n leaves it to the batch's results).
			synced := finished && (i < k-1 || i == k-1 && k < n)
			switch {
			case synced && !ok:
				t.Fatalf("run %d (seed %d): call %s finished and the next call started, yet the crash lost its result", run, seed, id)
			case ok && !reflect.DeepEqual(got, w):
				t.Fatalf("run %d (seed %d): call %s kept %+v, want %+v", run, seed, id, got, w)
			case ok && !finished:
				t.Fatalf("run %d (seed %d): call %s never finished, yet keeps a result", run, seed, id)
			}
		}
		// Settling writes the kept results through the redactor again: the same bytes.
		kept := map[string]record.ToolResult{}
		for id := range want {
			if r, ok := st.Finished(id); ok {
				kept[id] = r
			}
		}
		plan := st.QuiescePlan(fold.Crashed)
		must(t, s2.Commit(plan, &record.Quiesced{Reason: fold.Crashed}))
		settled := s2.Snapshot().Context()[2].Parts
		if len(settled) != n {
			t.Fatalf("run %d (seed %d): the settled batch answers %d calls, want %d", run, seed, len(settled), n)
		}
		for _, p := range settled {
			w, ok := kept[p.CallID]
			switch {
			case ok && (p.Text != w.Content || p.Outcome != w.Outcome || p.IsError != w.IsError):
				t.Fatalf("run %d (seed %d): the settled result of %s is %+v, its kept result %+v", run, seed, p.CallID, p, w)
			case !ok && p.Outcome == record.OK:
				t.Fatalf("run %d (seed %d): %s kept no result, yet is answered ok", run, seed, p.CallID)
			}
		}
		s2.Close()
		b, err := mem.ReadFile("/r/s/record.jsonl")
		must(t, err)
		if bytes.Contains(b, []byte(fakeKey)) || bytes.Contains(b, []byte(secret)) {
			t.Fatalf("run %d (seed %d): a key reached the record", run, seed)
		}
	}
}
