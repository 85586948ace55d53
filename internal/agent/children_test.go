package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// The family harness: a parent harness whose agents door spawns children (and grandchildren)
// named child-1, child-2, … in the order they start, each a real session beside the parent's and a
// simulator of its own playing the next of the family's child scripts, so that each agent's
// requests are played in order however the agents interleave. Every agent of the family has the
// gate tool: a call {"n":N} blocks until the test opens gate N (or a Stop ends it), so a test says
// exactly when a child may finish. At the end the children are closed and every child's record must
// replay admissible and settled, with every scripted step played and no request refused.

type family struct {
	*harness
	t       *testing.T
	kids    *agent.Children
	scripts []string
	// onSend, when set before the children start, is called before each request a child sends
	// (n counts that child's requests from 1); it may block.
	onSend func(id string, n int)

	mu    sync.Mutex
	made  []*kid
	gates map[int]*gateState
}

type gateState struct {
	open, reached chan struct{}
}

// kid is one child agent of the family.
type kid struct {
	id      string
	inherit bool
	sess    *session.Session
	a       *agent.Agent
	sim     *sim.Server
	wire    *wire
}

// newFamily makes a parent on format f playing parent, whose children play childScripts in the
// order they start. await is the parent's Config.AwaitChildren; limits its agents door's limits.
func newFamily(t *testing.T, f format, parent string, await bool, limits agent.Limits, childScripts ...string) *family {
	fm := &family{t: t, scripts: childScripts, gates: map[int]*gateState{}}
	fm.kids = &agent.Children{Spawn: fm.spawn, Limits: limits}
	fm.harness = newHarness(t, f, setup{script: parent, noBash: true, tools: []tool.Tool{fm.gateTool()}, cfg: func(c *agent.Config) {
		c.Doors = append(c.Doors, fm.kids)
		c.AwaitChildren = await
	}})
	t.Cleanup(fm.finish) // runs before the parent's own check
	return fm
}

// gate returns gate n, made on first use.
func (fm *family) gate(n int) *gateState {
	fm.mu.Lock()
	defer fm.mu.Unlock()
	g := fm.gates[n]
	if g == nil {
		g = &gateState{open: make(chan struct{}), reached: make(chan struct{})}
		fm.gates[n] = g
	}
	return g
}

// open lets every call of gate n through.
func (fm *family) open(n int) { close(fm.gate(n).open) }

// reached waits until a call has reached gate n.
func (fm *family) reached(n int) {
	fm.t.Helper()
	select {
	case <-fm.gate(n).reached:
	case <-time.After(20 * time.Second):
		fm.t.Fatalf("nothing reached gate %d within 20s", n)
	}
}

// after calls then once a call has reached gate n, on a goroutine of its own.
func (fm *family) after(n int, then func()) {
	go func() {
		select {
		case <-fm.gate(n).reached:
		case <-time.After(20 * time.Second):
			fm.t.Errorf("nothing reached gate %d within 20s", n)
		}
		then()
	}()
}

func (fm *family) gateTool() tool.Tool {
	return probe{name: "gate", fn: func(ctx context.Context, call tool.Call) tool.Result {
		var args struct{ N int }
		_ = json.Unmarshal(call.Args, &args)
		g := fm.gate(args.N)
		fm.mu.Lock()
		select {
		case <-g.reached:
		default:
			close(g.reached)
		}
		fm.mu.Unlock()
		select {
		case <-g.open:
			return tool.Result{Content: fmt.Sprintf("gate %d opened", args.N), Outcome: record.OK}
		case <-ctx.Done():
			return tool.Result{Content: "stopped at the gate", IsError: true, Outcome: record.Interrupted}
		}
	}}
}

// spawn is the family's Spawner.
func (fm *family) spawn(parent *agent.Agent, inherit bool) (*agent.Agent, error) {
	fm.mu.Lock()
	n := len(fm.made) + 1
	fm.mu.Unlock()
	if n > len(fm.scripts) {
		return nil, fmt.Errorf("the test has no script for child %d", n)
	}
	id := fmt.Sprintf("child-%d", n)
	ps := parent.Session()
	var inh *record.Inherited
	if inherit {
		var err error
		if inh, err = ps.Inheritance(0); err != nil {
			return nil, err
		}
	}
	sess, err := session.Create(filepath.Join(filepath.Dir(filepath.Dir(ps.Path())), id), session.Options{}, &record.SessionStarted{
		Session: id, Provider: fm.f.name, Model: sim.DefaultModel, ContextWindow: 200_000, Cwd: fm.ws, Version: "test", Parent: ps.ID(),
	})
	if err != nil {
		return nil, err
	}
	if inh != nil {
		if err := sess.Commit(inh); err != nil {
			sess.Close()
			return nil, err
		}
	}
	sc, err := sim.ParseScript([]byte(`{"strict":true,"steps":` + fm.scripts[n-1] + `}`))
	if err != nil {
		sess.Close()
		return nil, fmt.Errorf("child %d script: %w", n, err)
	}
	s := sim.New(sim.Options{Script: sc})
	srv := httptest.NewServer(s)
	fm.t.Cleanup(srv.Close)
	reg, err := tool.NewRegistry(fm.gateTool())
	if err != nil {
		return nil, err
	}
	w := &wire{Model: fm.f.client(srv.URL), keep: true}
	if hook := fm.onSend; hook != nil {
		var n atomic.Int64
		w.beforeSend = func() { hook(id, int(n.Add(1))) }
	}
	cfg := parent.Config()
	cfg.Session, cfg.Client, cfg.AwaitChildren = sess, w, true
	cfg.Runner = &tool.Runner{Tools: reg, Policy: tool.Policy{Mode: tool.ModeWorkspace}}
	cfg.Doors = append(agent.Doors(), &agent.Children{Spawn: fm.spawn})
	a := agent.New(cfg)
	fm.mu.Lock()
	fm.made = append(fm.made, &kid{id: id, inherit: inherit, sess: sess, a: a, sim: s, wire: w})
	fm.mu.Unlock()
	return a, nil
}

// kid returns child n (1-based).
func (fm *family) kid(n int) *kid {
	fm.t.Helper()
	fm.mu.Lock()
	defer fm.mu.Unlock()
	if n > len(fm.made) {
		fm.t.Fatalf("child %d was never started (%d were)", n, len(fm.made))
	}
	return fm.made[n-1]
}

func (fm *family) count() int {
	fm.mu.Lock()
	defer fm.mu.Unlock()
	return len(fm.made)
}

// finish closes the children and checks each child's record.
func (fm *family) finish() {
	t := fm.t
	if err := fm.kids.Close(); err != nil {
		t.Errorf("close the children: %v", err)
	}
	if n := fm.a.Arrivals(); n != 0 {
		t.Errorf("%d child replies were left in the parent's inbox", n)
	}
	fm.mu.Lock()
	made := slices.Clone(fm.made)
	fm.mu.Unlock()
	for _, k := range made {
		settled(t, k.id, k.sess.Path())
		if n := k.sim.Pending(); n != 0 {
			t.Errorf("%s: %d script steps were not played", k.id, n)
		}
		for i, r := range k.sim.Requests() {
			if r.Violation != nil {
				t.Errorf("%s: request %d broke a %s rule: %v", k.id, i, r.Format, r.Violation)
			}
		}
	}
}

// settled checks that a record replays admissible, owing nothing and not in flight.
func settled(t testing.TB, name, path string) *fold.State {
	t.Helper()
	st, _, err := session.Replay(nil, path)
	if err != nil {
		t.Errorf("%s: the record does not replay: %v", name, err)
		return nil
	}
	if st.InFlight() || !st.IsReady() {
		t.Errorf("%s: the record is left unsettled: phase %s, in flight %v", name, st.Phase(), st.InFlight())
	}
	return st
}

// onStatus runs fn on each status line the parent publishes (in order) until fn returns true.
func (fm *family) onStatus(fn func(text string) bool) {
	fm.watch(func(u session.Update) bool {
		return u.Live != nil && u.Live.Kind == "status" && fn(u.Live.Text)
	})
}

// agentsCall is a tool call of the agents tool.
func agentsCall(args string) string { return fmt.Sprintf(`{"name":"agents","arguments":%s}`, args) }

func gateCall(n int) string { return fmt.Sprintf(`{"name":"gate","arguments":{"n":%d}}`, n) }

// callStep is a step making the calls, with text.
func callStep(text string, calls ...string) string {
	return fmt.Sprintf(`{"text":%q,"tool_calls":[%s]}`, text, strings.Join(calls, ","))
}

// allResults returns the tool results of the parent's record, in call order.
func allResults(rs []record.Record) []record.ToolResult {
	var out []record.ToolResult
	for _, tr := range all[*record.ToolResults](rs) {
		out = append(out, tr.Results...)
	}
	return out
}

// answerOf decodes a tool result's JSON answer (without its TURN trailer).
func answerOf(t testing.TB, r record.ToolResult) map[string]any {
	t.Helper()
	body := r.Content
	if i := strings.LastIndex(body, "\nTURN: "); i >= 0 {
		body = body[:i]
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("result %s is not a JSON answer: %q", r.CallID, r.Content)
	}
	return m
}

// protocolKinds lists the protocol records of rs.
func protocolKinds(rs []record.Record) []string {
	var out []string
	for _, r := range rs {
		if r.Class() == record.Protocol && r.Kind() != record.KindSystem {
			out = append(out, string(r.Kind()))
		}
	}
	return out
}

// TestAgentsStart: start with inherit true and false. The inheriting child begins with the
// parent's context (its turn ids continue the parent's); the other begins empty. The parent awaits
// them, and each reply reaches it as an import of source child — never a prompt or steering — and
// the model continues on it.
func TestAgentsStart(t *testing.T) {
	eachFormat(t, func(t *testing.T, f format) {
		fm := newFamily(t, f, steps(
			callStep("Two helpers.",
				agentsCall(`{"op":"start","prompt":"look at the code","inherit":true}`),
				agentsCall(`{"op":"start","prompt":"write the docs","inherit":false}`)),
			textStep("Started them."),
			textStep("One is back."),
			textStep("Both are back."),
		), true, agent.Limits{},
			steps(callStep("", gateCall(1)), textStep("The code is fine.")),
			steps(callStep("", gateCall(2)), textStep("Docs written.")),
		)
		waits := 0
		fm.onStatus(func(s string) bool {
			waits++
			switch waits {
			case 1:
				if s != "waiting for 2 child agents" {
					t.Errorf("first status %q", s)
				}
				fm.open(1)
			case 2:
				if s != "waiting for 1 child agent" {
					t.Errorf("second status %q", s)
				}
				fm.open(2)
				return true
			}
			return false
		})
		out := fm.run(context.Background(), "hand out the work")
		expect(t, out, fold.Replied, false)

		rs := fm.records()
		if got, want := protocolKinds(rs), []string{"user_prompt", "assistant_message", "tool_results", "assistant_message",
			"import", "assistant_message", "import", "assistant_message"}; !slices.Equal(got, want) {
			t.Fatalf("the parent's protocol records\n got %v\nwant %v", got, want)
		}
		quiesced(t, rs, fold.Replied)
		if n := len(all[*record.Quiesced](rs)); n != 1 {
			t.Errorf("the parent's exchange quiesced %d times, want once (it awaited its children)", n)
		}
		starts := allResults(rs)
		for i, want := range []map[string]any{{"id": "child-1", "inherit": true, "state": "running"}, {"id": "child-2", "inherit": false, "state": "running"}} {
			if got := answerOf(t, starts[i]); mustJSON(got) != mustJSON(want) {
				t.Errorf("start %d answered %v, want %v", i+1, got, want)
			}
		}
		imps := all[*record.Import](rs)
		for i, want := range []struct{ child, text string }{
			{"child-1", "[rein: child agent child-1 finished (replied). Its reply:]\nThe code is fine."},
			{"child-2", "[rein: child agent child-2 finished (replied). Its reply:]\nDocs written."},
		} {
			im := imps[i]
			if im.Source != "child" || im.Child != want.child || im.Message.Role != record.User || text(im.Message.Parts) != want.text {
				t.Errorf("import %d is %+v, want source child, child %s, text %q", i+1, im, want.child, want.text)
			}
		}
		// The model saw each reply as the newest message of the request after it arrived.
		reqs := fm.wire.requests()
		for i, r := range reqs[2:] {
			lastMsg := r[len(r)-1]
			if lastMsg.Role != record.User || text(lastMsg.Parts) != text(imps[i].Message.Parts) {
				t.Errorf("request %d ends with %+v, want the import of %s", i+3, lastMsg, imps[i].Child)
			}
		}

		parent := fm.sess.ID()
		k1, k2 := fm.kid(1), fm.kid(2)
		for _, k := range []*kid{k1, k2} {
			krs := readRecords(t, k.sess.Path())
			if ss := krs[0].Body.(*record.SessionStarted); ss.Parent != parent {
				t.Errorf("%s names parent %q, want %q", k.id, ss.Parent, parent)
			}
			quiesced(t, krs, fold.Replied)
		}
		// child-1 inherited the parent's context: its first protocol record links the parent's
		// table, and its first request opens with the parent's prompt; its turns continue the
		// parent's sequence.
		k1rs := readRecords(t, k1.sess.Path())
		inh, ok := k1rs[1].Body.(*record.Inherited)
		if !ok || inh.Parent != parent {
			t.Fatalf("child-1's second record is %T, want inherited from %s", k1rs[1].Body, parent)
		}
		first := k1.wire.requests()[0]
		if text(first[0].Parts) != "hand out the work" || text(first[len(first)-1].Parts) != "look at the code" {
			t.Errorf("child-1's first request runs from %q to %q", text(first[0].Parts), text(first[len(first)-1].Parts))
		}
		if p := all[*record.UserPrompt](k1rs)[0]; p.Turn <= inh.High {
			t.Errorf("child-1's prompt is turn %d, not past the parent's %d", p.Turn, inh.High)
		}
		// child-2 began empty.
		k2rs := readRecords(t, k2.sess.Path())
		if slices.Contains(kinds(k2rs), "inherited") {
			t.Errorf("child-2 inherited the parent's context; it was started with inherit false")
		}
		if first := k2.wire.requests()[0]; len(first) != 1 || text(first[0].Parts) != "write the docs" {
			t.Errorf("child-2's first request is %v, want only its prompt", first)
		}
	})
}

// TestAgentsMessageReadWaitList: message to a busy child is steering at its next boundary; to a
// finished one it runs it again; read and list answer the state; wait answers the reply — and a
// reply the model received through wait or read is not delivered a second time.
func TestAgentsMessageReadWaitList(t *testing.T) {
	f := formats[0]
	fm := newFamily(t, f, steps(
		callStep("Counting.", agentsCall(`{"op":"start","prompt":"count to three","inherit":false}`), gateCall(100)),
		callStep("", agentsCall(`{"op":"message","id":"child-1","text":"also say four"}`),
			agentsCall(`{"op":"list"}`), agentsCall(`{"op":"read","id":"child-1"}`)),
		callStep("", agentsCall(`{"op":"wait","id":"child-1"}`)),
		callStep("", agentsCall(`{"op":"message","id":"child-1","text":"now five"}`), agentsCall(`{"op":"wait","id":"child-1"}`)),
		callStep("", agentsCall(`{"op":"read","id":"child-1"}`), agentsCall(`{"op":"list"}`), agentsCall(`{"op":"wait"}`),
			agentsCall(`{"op":"message","id":"child-9","text":"x"}`), agentsCall(`{"op":"dance"}`)),
		textStep("All read."),
	), true, agent.Limits{},
		steps(callStep("", gateCall(1)), textStep("one two three four"), textStep("five")),
	)
	// The parent tells the child more once the child is at work (at gate 1), and the child may
	// finish once the parent has told it.
	fm.after(1, func() { fm.open(100) })
	fm.watch(func(u session.Update) bool {
		if isRecord(u, record.KindToolResults) && len(all[*record.ToolResults](fm.records())) == 2 {
			fm.open(1)
			return true
		}
		return false
	})
	out := fm.run(context.Background(), "count with a helper")
	expect(t, out, fold.Replied, false)

	rs := fm.records()
	if imps := all[*record.Import](rs); len(imps) != 0 {
		t.Errorf("the parent received %d imports; every reply was read through wait, so none is due", len(imps))
	}
	res := allResults(rs)
	if len(res) != 13 {
		t.Fatalf("%d tool results, want 13", len(res))
	}
	res = slices.Delete(res, 1, 2) // the parent's gate
	busy := answerOf(t, res[1])
	if busy["delivered"] != "at the child's next turn boundary" {
		t.Errorf("message to a busy child answered %v", busy)
	}
	list := answerOf(t, res[2])["agents"].([]any)[0].(map[string]any)
	if list["state"] != "running" || list["prompt"] != "count to three" {
		t.Errorf("list while it runs answered %v", list)
	}
	if r := answerOf(t, res[3]); r["state"] != "running" || r["reply"] != nil {
		t.Errorf("read while it runs answered %v", r)
	}
	if r := answerOf(t, res[4]); r["state"] != "replied" || r["reply"] != "one two three four" {
		t.Errorf("wait answered %v", r)
	}
	if r := answerOf(t, res[5]); r["state"] != "running" {
		t.Errorf("message to a finished child answered %v", r)
	}
	if r := answerOf(t, res[6]); r["reply"] != "five" {
		t.Errorf("wait after the second message answered %v", r)
	}
	if r := answerOf(t, res[7]); r["state"] != "replied" || r["reply"] != "five" {
		t.Errorf("read of a finished child answered %v", r)
	}
	if r := answerOf(t, res[8]); r["running"] != float64(0) || r["started"] != float64(1) {
		t.Errorf("list answered %v", r)
	} else if row := r["agents"].([]any)[0].(map[string]any); row["reply_bytes"] != float64(4) || row["reply"] != nil {
		t.Errorf("a list row is %v: the reply's size, not the reply", row)
	}
	if r := answerOf(t, res[9]); len(r["agents"].([]any)) != 1 {
		t.Errorf("wait for all answered %v", r)
	}
	for i, want := range map[int]string{10: `no child "child-9"`} {
		if !res[i].IsError || res[i].Outcome != record.Failed || !strings.Contains(res[i].Content, want) {
			t.Errorf("result %d is %+v, want an error saying %q", i, res[i], want)
		}
	}
	// The unknown op is the last result.
	if last := res[len(res)-1]; last.Outcome != record.Failed || !strings.Contains(last.Content, `not "dance"`) {
		t.Errorf("an unknown op answered %+v", last)
	}

	// The child's record: the busy message is steering at the boundary after the gate; the
	// second message opened a new exchange as its prompt.
	krs := readRecords(t, fm.kid(1).sess.Path())
	if got, want := protocolKinds(krs), []string{"user_prompt", "assistant_message", "tool_results", "steering", "assistant_message",
		"user_prompt", "assistant_message"}; !slices.Equal(got, want) {
		t.Fatalf("the child's protocol records\n got %v\nwant %v", got, want)
	}
	if s := all[*record.Steering](krs)[0]; s.Text != "also say four" {
		t.Errorf("the child's steering is %q", s.Text)
	}
	if p := all[*record.UserPrompt](krs); p[1].Text != "now five" {
		t.Errorf("the child's second prompt is %q", p[1].Text)
	}
}

// TestAgentsCancel: cancel stops a child and its own children; it answers once the child has
// ended, with the child's state, and the child's ending is not delivered again. Both records are
// settled, quiesced cancelled, the grandchild's running call answered interrupted.
func TestAgentsCancel(t *testing.T) {
	fm := newFamily(t, formats[0], steps(
		callStep("Delegating.", agentsCall(`{"op":"start","prompt":"organise the work","inherit":false}`), gateCall(100)),
		callStep("", agentsCall(`{"op":"cancel","id":"child-1"}`), agentsCall(`{"op":"cancel","id":"child-1"}`)),
		textStep("Cancelled it."),
	), true, agent.Limits{},
		steps(callStep("", agentsCall(`{"op":"start","prompt":"do the work","inherit":false}`)), textStep("Started a helper of my own.")),
		steps(callStep("", gateCall(2))), // the grandchild waits at gate 2 until it is stopped
	)
	fm.after(2, func() { fm.open(100) }) // the parent cancels once the grandchild is at work
	out := fm.run(context.Background(), "organise a team")
	expect(t, out, fold.Replied, false)

	rs := fm.records()
	if imps := all[*record.Import](rs); len(imps) != 0 {
		t.Errorf("the parent received %d imports; the cancel answered the child's ending", len(imps))
	}
	res := allResults(rs)
	cancel := answerOf(t, res[2])
	if cancel["id"] != "child-1" || cancel["state"] != "cancelled" {
		t.Errorf("cancel answered %v, want child-1 cancelled", cancel)
	}
	if again := answerOf(t, res[3]); again["state"] != "cancelled" || again["note"] != "it was not running" {
		t.Errorf("a second cancel answered %v", again)
	}
	fm.finish() // close now, so that the records below are final
	for n, want := range map[int]record.Outcome{1: record.OK, 2: record.Interrupted} {
		k := fm.kid(n)
		krs := readRecords(t, k.sess.Path())
		quiesced(t, krs, fold.Cancelled)
		if got := allResults(krs); len(got) != 1 || got[0].Outcome != want {
			t.Errorf("%s's call was answered %+v, want %s", k.id, got, want)
		}
	}
	if d := toolDuration(rs, res[2].CallID); d > 2*time.Second {
		t.Errorf("the cancel took %s", d)
	} else {
		t.Logf("cancel of a child and its child: %s from call to answer", d)
	}
}

// toolDuration is how long the call took, from its tool_finished event.
func toolDuration(rs []record.Record, callID string) time.Duration {
	for _, f := range all[*record.ToolFinished](rs) {
		if f.CallID == callID {
			return time.Duration(f.DurationMs) * time.Millisecond
		}
	}
	return -1
}

// TestAgentsLimits: past the running limit or the session's total, start is refused with a tool
// error the model reads; a freed slot can be used again; and a child's own children count
// against the same running limit.
func TestAgentsLimits(t *testing.T) {
	start := func(p string) string {
		return agentsCall(fmt.Sprintf(`{"op":"start","prompt":%q,"inherit":false}`, p))
	}
	fm := newFamily(t, formats[0], steps(
		callStep("Three at once.", start("a"), start("b"), start("c")),
		textStep("Two running."),
		textStep("One back."),
		callStep("Both back; two more.", start("d"), start("e")),
		textStep("Waiting for d."),
		textStep("All done."),
	), true, agent.Limits{Running: 2, Total: 3},
		steps(callStep("", gateCall(1)), textStep("a done")),
		// b tries a child of its own while a and b take both slots.
		steps(callStep("", start("b's helper"), gateCall(2)), textStep("b done")),
		steps(callStep("", gateCall(3)), textStep("d done")),
	)
	ones := 0
	fm.onStatus(func(s string) bool {
		switch s {
		case "waiting for 2 child agents":
			// a may finish once b's own start has been answered (b is at gate 2), so that b's
			// start meets both slots taken.
			fm.after(2, func() { fm.open(1) })
		case "waiting for 1 child agent":
			ones++
			if ones == 1 {
				fm.open(2)
			} else {
				fm.open(3)
				return true
			}
		}
		return false
	})
	out := fm.run(context.Background(), "share the work")
	expect(t, out, fold.Replied, false)

	res := allResults(fm.records())
	refused := func(r record.ToolResult, want string) {
		t.Helper()
		if !r.IsError || r.Outcome != record.Failed || !strings.Contains(r.Content, want) {
			t.Errorf("want a refusal saying %q, got %+v", want, r)
		}
	}
	refused(res[2], "agents start refused: 2 child agents are running (their own children count too), the most this session allows at once")
	if got := answerOf(t, res[3]); got["id"] != "child-3" {
		t.Errorf("a start after the first two ended answered %v, want child-3", got)
	}
	refused(res[4], "agents start refused: this session has started 3 child agents, the most one session may")
	if n := fm.count(); n != 3 {
		t.Errorf("%d children were started, want 3", n)
	}
	// b's own start was refused too: the limit counts the whole tree.
	kres := allResults(readRecords(t, fm.kid(2).sess.Path()))
	refused(kres[0], "2 child agents are running")
}

// TestAgentsSixtyStarts: sixty starts in one reply run eight (the default limit at once) and
// refuse the rest, each with a reason; nothing runs silently past the limit.
func TestAgentsSixtyStarts(t *testing.T) {
	var calls, scripts []string
	for i := 1; i <= 60; i++ {
		calls = append(calls, agentsCall(fmt.Sprintf(`{"op":"start","prompt":"task %d","inherit":false}`, i)))
	}
	for i := 1; i <= agent.DefaultRunning; i++ {
		scripts = append(scripts, steps(callStep("", gateCall(1)), textStep(fmt.Sprintf("task %d done", i))))
	}
	fm := newFamily(t, formats[0], steps(
		callStep("Sixty helpers.", calls...),
		callStep("", agentsCall(`{"op":"wait"}`)),
		textStep("Eight came back."),
	), true, agent.Limits{}, scripts...)
	fm.watch(func(u session.Update) bool {
		if isRecord(u, record.KindToolResults) {
			fm.open(1) // every child may finish once the batch is answered
			return true
		}
		return false
	})
	out := fm.run(context.Background(), "fan out")
	expect(t, out, fold.Replied, false)

	rs := fm.records()
	res := allResults(rs)
	ok, refused := 0, 0
	for _, r := range res[:60] {
		switch {
		case r.Outcome == record.OK:
			ok++
		case strings.Contains(r.Content, "8 child agents are running"):
			refused++
		default:
			t.Errorf("start answered %+v", r)
		}
	}
	if ok != agent.DefaultRunning || refused != 60-agent.DefaultRunning || fm.count() != agent.DefaultRunning {
		t.Errorf("%d started, %d refused, %d children made; want %d, %d, %d", ok, refused, fm.count(), agent.DefaultRunning, 60-agent.DefaultRunning, agent.DefaultRunning)
	}
	if rows := answerOf(t, res[60])["agents"].([]any); len(rows) != agent.DefaultRunning {
		t.Errorf("wait for all answered %d rows", len(rows))
	}
	if n := len(all[*record.Import](rs)); n != 0 {
		t.Errorf("%d imports after a wait that read every reply", n)
	}
}

// TestAgentsReplyAtBoundary: a reply that arrives while the parent works is delivered at the
// parent's next turn boundary, as an import between the tool results and the next request.
func TestAgentsReplyAtBoundary(t *testing.T) {
	fm := newFamily(t, formats[0], steps(
		callStep("One helper.", agentsCall(`{"op":"start","prompt":"be quick","inherit":false}`), gateCall(100)),
		textStep("Seen it."),
	), true, agent.Limits{},
		steps(textStep("quick")),
	)
	fm.a.OnArrival(func() { fm.open(100) }) // the parent's batch ends once the reply waits
	out := fm.run(context.Background(), "delegate")
	expect(t, out, fold.Replied, false)
	rs := fm.records()
	if got, want := protocolKinds(rs), []string{"user_prompt", "assistant_message", "tool_results", "import", "assistant_message"}; !slices.Equal(got, want) {
		t.Fatalf("protocol records %v, want %v", got, want)
	}
	reqs := fm.wire.requests()
	if m := reqs[1][len(reqs[1])-1]; text(m.Parts) != "[rein: child agent child-1 finished (replied). Its reply:]\nquick" {
		t.Errorf("the second request ends with %+v", m)
	}
}

// TestAgentsRevive: without awaiting (the host's way), the parent's exchange ends at its reply; a
// child's later reply waits in the inbox, the owner is told (OnArrival), and TakeUpArrivals runs a
// new exchange opened by the import.
func TestAgentsRevive(t *testing.T) {
	fm := newFamily(t, formats[0], steps(
		callStep("One helper.", agentsCall(`{"op":"start","prompt":"take your time","inherit":false}`)),
		textStep("Started; I will hear back."),
		textStep("Got the reply."),
	), false, agent.Limits{},
		steps(callStep("", gateCall(1)), textStep("here it is")),
	)
	arrived := make(chan struct{}, 1)
	fm.a.OnArrival(func() { arrived <- struct{}{} })
	expect(t, fm.run(context.Background(), "delegate"), fold.Replied, false)
	if out, ok := fm.a.TakeUpArrivals(context.Background()); ok {
		t.Fatalf("TakeUpArrivals with nothing waiting ran an exchange: %+v", out)
	}
	fm.open(1)
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the child's reply did not arrive within 20s")
	}
	out, ok := fm.a.TakeUpArrivals(context.Background())
	if !ok {
		t.Fatal("TakeUpArrivals found nothing after the arrival")
	}
	expect(t, out, fold.Replied, false)
	rs := fm.records()
	if got, want := kinds(rs, record.KindSessionStarted, record.KindSystem, record.KindTurnStarted, record.KindToolStarted, record.KindToolFinished),
		[]string{"user_prompt", "assistant_message", "tool_results", "assistant_message", "quiesced", "import", "assistant_message", "quiesced"}; !slices.Equal(got, want) {
		t.Fatalf("records\n got %v\nwant %v", got, want)
	}
	for _, q := range all[*record.Quiesced](rs) {
		if q.Reason != fold.Replied {
			t.Errorf("an exchange quiesced %s", q.Reason)
		}
	}
}

// TestAgentsStopWhileAwaiting: a Stop while the parent awaits its children ends the parent's
// exchange cancelled at once; stopping the children (what rein run's Ctrl-C does) cancels each, and
// every record is settled cancelled, with nothing delivered to the stopped parent.
func TestAgentsStopWhileAwaiting(t *testing.T) {
	fm := newFamily(t, formats[0], steps(
		callStep("Two helpers.",
			agentsCall(`{"op":"start","prompt":"one","inherit":false}`),
			agentsCall(`{"op":"start","prompt":"two","inherit":false}`)),
		textStep("Waiting for them."),
	), true, agent.Limits{},
		steps(callStep("", gateCall(1))),
		steps(callStep("", gateCall(2))),
	)
	ctx, stop := fm.stopper()
	fm.onStatus(func(s string) bool { // the parent awaits; stop once both children are at work
		fm.after(1, func() { fm.after(2, stop) })
		return true
	})
	out := fm.run(ctx, "delegate")
	expect(t, out, fold.Cancelled, false)
	if d := fm.sinceStop(); d > time.Second { // at once (the children wait at their gates for ever), with room for a loaded machine
		t.Errorf("the parent took %s to quiesce after the Stop", d)
	}
	quiesced(t, fm.records(), fold.Cancelled)
	if n := fm.kids.Running(); n != 2 {
		t.Fatalf("%d children running after the parent's Stop, want 2 (a parent's Stop is not theirs)", n)
	}
	start := time.Now()
	fm.kids.Stop()
	t.Logf("two children stopped and settled in %s", time.Since(start).Round(time.Microsecond))
	for n := 1; n <= 2; n++ {
		k := fm.kid(n)
		krs := readRecords(t, k.sess.Path())
		quiesced(t, krs, fold.Cancelled)
		settled(t, k.id, k.sess.Path())
	}
	if n := fm.a.Arrivals(); n != 0 {
		t.Errorf("%d replies of stopped children reached the parent", n)
	}
}

// TestAgentsLateMessage: a message that reaches a child after its run's last turn boundary is not
// lost: the run after it takes it up, and both runs' replies reach the parent.
func TestAgentsLateMessage(t *testing.T) {
	fm := newFamily(t, formats[0], steps(
		callStep("One helper.", agentsCall(`{"op":"start","prompt":"answer","inherit":false}`), gateCall(100)),
		callStep("", agentsCall(`{"op":"message","id":"child-1","text":"and one more thing"}`), gateCall(101)),
		textStep("First answer in."),
		textStep("Second answer in."),
	), true, agent.Limits{},
		steps(textStep("first answer"), callStep("", gateCall(2)), textStep("second answer")),
	)
	// child-1's first request is held on the wire until the parent's message waits in the child:
	// the message misses that run's last boundary.
	release := make(chan struct{})
	fm.onSend = func(id string, n int) {
		if id == "child-1" && n == 1 {
			fm.open(100)
			<-release
		}
	}
	finished := 0
	fm.watch(func(u session.Update) bool {
		if isRecord(u, record.KindToolFinished) {
			if finished++; finished == 3 { // start, gate 100, message
				close(release)
				return true
			}
		}
		return false
	})
	var once sync.Once
	fm.a.OnArrival(func() { once.Do(func() { fm.open(101) }) })
	fm.onStatus(func(s string) bool {
		fm.open(2)
		return true
	})
	out := fm.run(context.Background(), "ask a helper")
	expect(t, out, fold.Replied, false)

	res := allResults(fm.records())
	if m := answerOf(t, res[2]); m["delivered"] != "at the child's next turn boundary" {
		t.Errorf("the message answered %v", m)
	}
	var got []string
	for _, im := range all[*record.Import](fm.records()) {
		got = append(got, text(im.Message.Parts))
	}
	if want := []string{"[rein: child agent child-1 finished (replied). Its reply:]\nfirst answer",
		"[rein: child agent child-1 finished (replied). Its reply:]\nsecond answer"}; !slices.Equal(got, want) {
		t.Errorf("the parent's imports\n got %q\nwant %q", got, want)
	}
	krs := readRecords(t, fm.kid(1).sess.Path())
	var prompts []string
	for _, p := range all[*record.UserPrompt](krs) {
		prompts = append(prompts, p.Text)
	}
	if want := []string{"answer", "and one more thing"}; !slices.Equal(prompts, want) {
		t.Errorf("the child's prompts %q, want %q", prompts, want)
	}
}
