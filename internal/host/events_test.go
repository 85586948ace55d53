package host_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"testing"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
)

// TestEventsReplay: the stream replays every record from the start, from Last-Event-ID and from
// ?after=, in order, with nothing missing or repeated.
func TestEventsReplay(t *testing.T) {
	r := newRig(t, rigOptions{bash: true, script: steps(`{"text":"Looking.","tool_calls":[{"name":"bash","arguments":{"command":"echo hi"}}]}`, `{"text":"Done."}`)})
	id := r.create("replay")
	w := r.events(id, 0)
	r.send(id, "do it")
	w.idle()
	recs := r.records(id)
	w.through(int64(len(recs)))
	var got []int64
	for _, e := range w.seen {
		if e.Seq > 0 {
			got = append(got, e.Seq)
		}
	}
	if want := seqs(1, int64(len(recs))); !slices.Equal(got, want) {
		t.Fatalf("events from the start: %v, want %v", got, want)
	}
	k := int64(len(recs) / 2)
	for _, how := range []string{"header", "query"} {
		seen := rawEvents(t, r, id, k, how, int64(len(recs)))
		if want := seqs(k+1, int64(len(recs))); !slices.Equal(seen, want) {
			t.Errorf("events after %d by %s: %v, want %v", k, how, seen, want)
		}
	}
}

func seqs(from, to int64) []int64 {
	var out []int64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

// rawEvents reads a stream with plain HTTP, resuming after k by header or query, until record last.
func rawEvents(t *testing.T, r *rig, id string, k int64, how string, last int64) []int64 {
	t.Helper()
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	url := r.srv.URL + "/api/conversations/" + id + "/events"
	if how == "query" {
		url += fmt.Sprintf("?after=%d", k)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if how == "header" {
		req.Header.Set("Last-Event-ID", fmt.Sprint(k))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	rd := provider.NewSSEReader(resp.Body)
	var out []int64
	for {
		ev, err := rd.Next()
		if err != nil {
			t.Fatalf("after %v: %v", out, err)
		}
		if ev.Event != "record" {
			continue
		}
		var s int64
		fmt.Sscan(ev.ID, &s)
		out = append(out, s)
		if s >= last {
			return out
		}
	}
}

// TestEventsReconnect cuts the connection again and again while an exchange runs: the client
// reconnects with Last-Event-ID and receives every record exactly once, in order; a client copy of
// the state built by applying every event (and every event again, in a shuffled replay) converges
// on the host's state.
func TestEventsReconnect(t *testing.T) {
	script := steps(
		`{"text":"one","tool_calls":[{"name":"bash","arguments":{"command":"echo 1"}}]}`,
		`{"text":"two","tool_calls":[{"name":"bash","arguments":{"command":"echo 2"}}]}`,
		`{"text":"three","tool_calls":[{"name":"bash","arguments":{"command":"echo 3"}}]}`,
		slowText("", 40, 5),
	)
	r := newRig(t, rigOptions{bash: true, script: script})
	id := r.create("reconnect")
	w := r.events(id, 0)
	r.send(id, "go")
	for range 6 {
		w.until("a record", func(e api.Event) bool { return e.Seq > 0 })
		r.srv.CloseClientConnections()
	}
	w.idle()
	final := r.get(id).State
	w.through(final.Seq)
	var got []int64
	var st api.State
	for _, e := range w.seen {
		if e.Seq > 0 {
			got = append(got, e.Seq)
		}
		st = client.Apply(st, e)
	}
	if want := seqs(1, final.Seq); !slices.Equal(got, want) {
		t.Fatalf("records received across reconnections: %v, want %v", got, want)
	}
	if mustJSON(st) != mustJSON(final) {
		t.Fatalf("the client's copy\n%s\nthe host's\n%s", mustJSON(st), mustJSON(final))
	}
	// Applying every event twice, in any order, converges too.
	evs := append(slices.Clone(w.seen), w.seen...)
	rand.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
	var again api.State
	for _, e := range evs {
		again = client.Apply(again, e)
	}
	if mustJSON(again) != mustJSON(final) {
		t.Fatalf("after a shuffled double replay\n%s\nthe host's\n%s", mustJSON(again), mustJSON(final))
	}
}

// TestWorkingAgrees holds a scripted run at each step — idle, the agent starting, a rate-limit
// wait, streaming, a tool running, stopped — and checks that the conversation's GET state, its
// list entry, the events stream's latest state and api.Working all say the same.
func TestWorkingAgrees(t *testing.T) {
	r := newRig(t, rigOptions{bash: true, script: steps(
		`{"status":429,"retry_after":"60"}`,
		`{"status":429,"retry_after":"60"}`,
		slowText("", 400, 50),
		`{"tool_calls":[{"name":"bash","arguments":{"command":"sleep 30"}}]}`,
	)})
	id := r.create("working")
	w := r.events(id, 0)
	agree := func(step string, want bool) {
		t.Helper()
		v := r.get(id)
		list, err := r.c.List(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(list, func(l api.View) bool { return l.ID == id })
		if i < 0 {
			t.Fatalf("%s: not listed", step)
		}
		if mustJSON(list[i].State) != mustJSON(v.State) {
			t.Errorf("%s: the list says %s, GET says %s", step, mustJSON(list[i].State), mustJSON(v.State))
		}
		var st api.State
		w.catchUp(v.State.Seq)
		for _, e := range w.seen {
			st = client.Apply(st, e)
		}
		if mustJSON(st) != mustJSON(v.State) {
			t.Errorf("%s: the events say %s, GET says %s", step, mustJSON(st), mustJSON(v.State))
		}
		if v.State.Working != want || api.Working(v.State) != want || list[i].State.Working != want {
			t.Errorf("%s: working %v, Working() %v, listed %v; want %v", step, v.State.Working, api.Working(v.State), list[i].State.Working, want)
		}
		t.Logf("%s: %s", step, mustJSON(v.State))
	}
	agree("idle", false)
	r.gate.close()
	r.send(id, "first")
	<-r.gate.reached()
	agree("the agent starting", true)
	r.gate.open()
	w.record(record.KindRetryScheduled)
	agree("waiting on a retry", true)
	r.stop(id)
	w.idle()
	agree("stopped", false)
	r.send(id, "second")
	w.record(record.KindRetryScheduled)
	r.stop(id)
	w.idle()
	r.send(id, "third")
	w.live("text")
	agree("streaming", true)
	r.stop(id)
	w.idle()
	agree("stopped again", false)
	r.send(id, "fourth")
	w.record(record.KindToolStarted)
	agree("running a tool", true)
	r.stop(id)
	w.idle()
	agree("finally", false)
}
