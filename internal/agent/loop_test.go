package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// TestSteering: a line sent while a tool runs is delivered as steering at the next turn boundary,
// after the batch's results and before the next request.
func TestSteering(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		var h *harness
		h = newHarness(t, f, setup{
			script: steps(`{"tool_calls":[{"name":"probe","arguments":{}}]}`, textStep("Noted.")),
			tools: []tool.Tool{probe{"probe", func(context.Context, tool.Call) tool.Result {
				h.a.Steer("also look at b.txt")
				return tool.Result{Content: "probed", Outcome: record.OK}
			}}},
		})
		out := h.run(context.Background(), "go")
		expect(t, out, fold.Replied, false)
		if len(out.Withdrawn) != 0 {
			t.Errorf("withdrawn %v", out.Withdrawn)
		}
		rs := h.records()
		ks := kinds(rs, record.KindSessionStarted, record.KindSystem, record.KindToolStarted, record.KindToolFinished)
		want := []string{"user_prompt", "turn_started", "assistant_message", "tool_results", "steering", "turn_started", "assistant_message", "quiesced"}
		if !slices.Equal(ks, want) {
			t.Fatalf("record kinds\n got %v\nwant %v", ks, want)
		}
		st := last[*record.Steering](t, rs)
		if st.Text != "also look at b.txt" || st.Source != "user" {
			t.Errorf("steering %+v", st)
		}
		// The second request ends with the results and the line, in one user message.
		reqs := h.wire.requests()
		m := reqs[1][len(reqs[1])-1]
		if m.Role != record.User || len(m.Parts) != 2 || m.Parts[0].Type != record.PartToolResult || m.Parts[1].Text != "also look at b.txt" {
			t.Errorf("the second request ends with %+v", m)
		}
	})
}

// TestStopWithdrawsSteering: a Stop hands back the steering still waiting; it is never delivered.
func TestStopWithdrawsSteering(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		var h *harness
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h = newHarness(t, f, setup{
			script: steps(`{"tool_calls":[{"name":"probe","arguments":{}}]}`, textStep("Fresh start.")),
			tools: []tool.Tool{probe{"probe", func(context.Context, tool.Call) tool.Result {
				h.a.Steer("one more thing")
				cancel()
				return tool.Result{Content: "probed", Outcome: record.OK}
			}}},
		})
		out := h.run(ctx, "go")
		expect(t, out, fold.Cancelled, false)
		if len(out.Withdrawn) != 1 || out.Withdrawn[0].Text != "one more thing" {
			t.Errorf("withdrawn %+v, want the waiting line", out.Withdrawn)
		}
		out = h.run(context.Background(), "again")
		expect(t, out, fold.Replied, false)
		if st := all[*record.Steering](h.records()); len(st) != 0 {
			t.Errorf("withdrawn steering was delivered: %+v", st)
		}
	})
}

// TestTurnLimit: an exchange that keeps calling tools ends at its turn limit with reason limit,
// every call answered.
func TestTurnLimit(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{
			script: steps(bashStep("1", "echo 1"), bashStep("2", "echo 2"), bashStep("3", "echo 3"), textStep("Done.")),
			cfg:    func(c *agent.Config) { c.MaxTurns = 2 },
		})
		out := h.run(context.Background(), "loop")
		expect(t, out, fold.Limit, false)
		rs := h.records()
		quiesced(t, rs, fold.Limit)
		if n := len(all[*record.AssistantMessage](rs)); n != 2 {
			t.Errorf("%d assistant turns, want 2", n)
		}
		if n := len(all[*record.ToolResults](rs)); n != 2 {
			t.Errorf("%d results, want every call answered", n)
		}
		if fl := last[*record.Failure](t, rs); !strings.Contains(fl.Message, "limit of 2 turns") {
			t.Errorf("failure %q", fl.Message)
		}
		out = h.run(context.Background(), "continue")
		expect(t, out, fold.Replied, false)
	})
}

// TestDoors: the model surveys its context, evicts a span with a note, reads an evicted turn back
// byte for byte as it was sent, greps it, and is refused a read of the turn being written.
func TestDoors(t *testing.T) {
	call := func(name, args string) string {
		return `{"tool_calls":[{"name":"` + name + `","arguments":` + args + `}]}`
	}
	const note = "alpha and beta checks: both printed their marker"
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(
			bashStep("Checking alpha.", "echo alpha-marker"),                    // turn 2
			bashStep("Checking beta.", "echo beta-marker"),                      // turn 3
			call("context", `{"op":"survey"}`),                                  // turn 4
			call("context", `{"op":"evict","from":2,"to":3,"note":"`+note+`"}`), // turn 5
			call("transcript", `{"op":"read","turns":[2]}`),                     // turn 6
			call("transcript", `{"op":"grep","pattern":"alpha-marker"}`),        // turn 7
			call("transcript", `{"op":"read","turns":[8]}`),                     // turn 8: itself
			call("transcript", `{"op":"index"}`),                                // turn 9
			textStep("All done."),                                               // turn 10
		)})
		out := h.run(context.Background(), "check alpha and beta, then tidy up")
		expect(t, out, fold.Replied, false)
		rs := h.records()
		res := map[int64]record.ToolResult{}
		var turn int64
		for i, r := range rs {
			switch b := r.Body.(type) {
			case *record.AssistantMessage:
				turn = b.Turn
			case *record.ToolResults:
				res[turn] = b.Results[0]
				if turn == 5 {
					ev, ok := rs[i+1].Body.(*record.Evicted)
					if !ok || ev.From != 2 || ev.To != 3 || ev.Note != note || ev.By != record.ByModel {
						t.Errorf("the record after turn 5's results is %s %+v, want the model's eviction", rs[i+1].Kind(), rs[i+1].Body)
					}
				}
			}
		}
		for id, r := range res {
			if id != 8 && r.Outcome != record.OK {
				t.Errorf("turn %d's call answered %s: %s", id, r.Outcome, r.Content)
			}
		}

		var survey struct {
			Rows  [][]any `json:"rows"`
			Bytes int64   `json:"bytes"`
		}
		decodeAnswer(t, res[4], &survey)
		if len(survey.Rows) != 4 || survey.Bytes == 0 {
			t.Errorf("survey %+v, want 4 rows", survey)
		}
		decodeAnswer(t, res[5], &survey)
		if len(survey.Rows) != 4 || survey.Rows[1][3] != "residue" || survey.Rows[1][0] != 2.0 || survey.Rows[1][1] != 3.0 {
			t.Errorf("survey after the eviction %+v, want the residue over 2–3 second", survey.Rows)
		}

		// The request after the eviction carries the residue in place of turns 2 and 3.
		reqs := h.wire.requests()
		after := reqs[4]
		if len(after) != 6 || !strings.Contains(text(after[1].Parts), "turns 2–3 have left your context") || !strings.Contains(text(after[1].Parts), note) {
			t.Errorf("the request after the eviction: %s", clipped(mustJSON(after)))
		}

		// Turn 2 read back is exactly what was sent while it was in the context.
		var read struct {
			Turns []struct {
				Turn     int64             `json:"turn"`
				Held     string            `json:"held"`
				Messages []json.RawMessage `json:"messages"`
			} `json:"turns"`
		}
		decodeAnswer(t, res[6], &read)
		if len(read.Turns) != 1 || read.Turns[0].Turn != 2 || read.Turns[0].Held != "under [2, 3]" {
			t.Fatalf("read %+v", read)
		}
		sent := reqs[2][1:3] // [prompt, turn 2 (call, results), turn 3 (call, results)]
		for i, m := range read.Turns[0].Messages {
			if string(m) != mustJSON(sent[i]) {
				t.Errorf("turn 2 message %d read back as\n%s\nwas sent as\n%s", i, m, mustJSON(sent[i]))
			}
		}

		var grep struct {
			Hits  [][]any `json:"hits"`
			Total int     `json:"total"`
		}
		decodeAnswer(t, res[7], &grep)
		if grep.Total < 2 || grep.Hits[0][0] != 2.0 {
			t.Errorf("grep %+v, want hits in turn 2", grep)
		}
		if r := res[8]; !r.IsError || !strings.Contains(r.Content, "turn 8 is being written now") {
			t.Errorf("the read of the unclosed turn answered %+v", r)
		}
		if !strings.Contains(res[9].Content, `"under [2, 3]"`) {
			t.Errorf("index %s", res[9].Content)
		}
	})
}

// TestEvictionsInOneBatch: two evictions in one reply are judged in order, each against the
// context the one before it leaves; one that no longer fits is refused truthfully and the
// session goes on.
func TestEvictionsInOneBatch(t *testing.T) {
	evict := func(from, to int, note string) string {
		return fmt.Sprintf(`{"name":"context","arguments":{"op":"evict","from":%d,"to":%d,"note":%q}}`, from, to, note)
	}
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(
			bashStep("a", "echo a"), bashStep("b", "echo b"), bashStep("c", "echo c"), // turns 2–4
			`{"tool_calls":[`+evict(2, 3, "a and b")+`,`+evict(3, 4, "b and c")+`,`+evict(2, 4, "a, b and c")+`]}`, // turn 5
			textStep("Tidy."),
		)})
		out := h.run(context.Background(), "go")
		expect(t, out, fold.Replied, false)
		rs := h.records()
		res := results(t, rs[:len(rs)-4])
		if res[0].Outcome != record.OK || res[1].Outcome != record.Failed || res[2].Outcome != record.OK {
			t.Fatalf("results %+v, want ok, error (reaches into the new residue), ok", res)
		}
		if !strings.Contains(res[1].Content, "reach into the residue over 2–3") {
			t.Errorf("the refusal says %q", res[1].Content)
		}
		ev := all[*record.Evicted](rs)
		if len(ev) != 2 || ev[0].From != 2 || ev[0].To != 3 || ev[1].From != 2 || ev[1].To != 4 {
			t.Errorf("evictions %+v, want 2–3 then 2–4 around it", ev)
		}
	})
}

func decodeAnswer(t testing.TB, r record.ToolResult, v any) {
	t.Helper()
	body, _, ok := strings.Cut(r.Content, "\nTURN: ")
	if !ok {
		t.Fatalf("result without a trailer: %q", r.Content)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("decode %q: %v", clipped(body), err)
	}
}

// TestResumeAfterCrash: a session left with a started call and an unstarted one is settled on
// resume — interrupted and not_executed, reason crashed — and a new prompt then works.
func TestResumeAfterCrash(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{script: steps(textStep("Picking up where we were."))})
		path := h.sess.Path()
		if err := h.sess.Append(
			&record.System{Text: h.cfg.System},
			&record.UserPrompt{Turn: 1, Text: "build it"},
			&record.TurnStarted{Attempt: 1},
			&record.AssistantMessage{Turn: 2, StopReason: "tool_use", Model: "sim-1", Parts: []record.Part{
				{Type: record.PartText, Text: "Two steps."},
				{Type: record.PartToolCall, CallID: "call_a", Name: "bash", Args: json.RawMessage(`{"command":"make"}`)},
				{Type: record.PartToolCall, CallID: "call_b", Name: "bash", Args: json.RawMessage(`{"command":"make test"}`)},
			}},
		); err != nil {
			t.Fatal(err)
		}
		if err := h.sess.Commit(&record.ToolStarted{CallID: "call_a", Name: "bash"}); err != nil {
			t.Fatal(err)
		}
		h.sess.Close() // the crash: nothing more is written

		sess, _, err := session.Open(path, session.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sess.Close() })
		h.sess = sess
		h.cfg.Session = sess
		h.a = agent.New(h.cfg)
		if err := h.a.Settle(h.ws, "test"); err != nil {
			t.Fatal(err)
		}
		rs := h.records()
		q := quiesced(t, rs, fold.Crashed)
		if !slices.Equal(q.Answered, []string{"call_a", "call_b"}) {
			t.Errorf("answered %v", q.Answered)
		}
		res := results(t, rs)
		if res[0].Outcome != record.Interrupted || res[1].Outcome != record.NotExecuted {
			t.Errorf("results %+v, want interrupted then not_executed", res)
		}
		for _, r := range res {
			if !strings.Contains(r.Content, "crash") || !strings.HasSuffix(r.Content, "\nTURN: 2") {
				t.Errorf("result %q does not say it was a crash, or lacks its trailer", r.Content)
			}
		}
		if _, ok := rs[len(rs)-1].Body.(*record.SessionResumed); !ok {
			t.Errorf("the last record is %s, want session_resumed", rs[len(rs)-1].Kind())
		}
		out := h.run(context.Background(), "where were we?")
		expect(t, out, fold.Replied, false)
	})
}

// panicDoor is a door that panics when called.
type panicDoor struct{}

func (panicDoor) Spec() provider.Tool {
	return provider.Tool{Name: "explode", Description: "Panics.", Schema: json.RawMessage(`{"type":"object"}`)}
}

func (panicDoor) Run(context.Context, *agent.Agent, int64, tool.Call) (tool.Result, []record.Payload) {
	panic("the door fell off")
}

// TestPanic: a panic in the loop is recovered; the exchange is aborted with the calls it owes
// answered truthfully, and the next prompt works.
func TestPanic(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		h := newHarness(t, f, setup{
			script: steps(`{"tool_calls":[{"name":"bash","arguments":{"command":"echo ran"}},{"name":"explode","arguments":{}},{"name":"bash","arguments":{"command":"touch never"}}]}`, textStep("Recovered.")),
			cfg:    func(c *agent.Config) { c.Doors = append(c.Doors, panicDoor{}) },
		})
		out := h.run(context.Background(), "go")
		expect(t, out, fold.Aborted, true)
		if !strings.Contains(out.Err.Error(), "the door fell off") {
			t.Errorf("error %v", out.Err)
		}
		rs := h.records()
		quiesced(t, rs, fold.Aborted)
		if fl := last[*record.Failure](t, rs); !strings.Contains(fl.Message, "panicked") {
			t.Errorf("failure %q", fl.Message)
		}
		res := results(t, rs)
		want := []record.Outcome{record.OK, record.Interrupted, record.NotExecuted}
		for i, r := range res {
			if r.Outcome != want[i] {
				t.Errorf("result %d: %s, want %s: %s", i, r.Outcome, want[i], r.Content)
			}
		}
		if !strings.HasPrefix(res[0].Content, "ran\n") {
			t.Errorf("the finished call lost its result: %q", res[0].Content)
		}

		h.wire.onEncode = func() { h.wire.onEncode = nil; panic("encode blew up") }
		out = h.run(context.Background(), "again")
		expect(t, out, fold.Aborted, true)
		quiesced(t, h.records(), fold.Aborted)

		out = h.run(context.Background(), "and again")
		expect(t, out, fold.Replied, false)
	})
}
