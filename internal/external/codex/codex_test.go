package codex

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/external"
	"github.com/reinhq/rein/internal/procs"
	"github.com/reinhq/rein/internal/provider/sim"
)

// The tests below run the real Codex CLI against rein's simulator. Codex starts in 0.2–2 s on a
// loaded machine, so every wait is generous and nothing is timed.

const turnWithin = 90 * time.Second

func TestCompletedTurn(t *testing.T) {
	r := newRig(t, `{"steps":[{"text":"Two files, a.txt and b.txt.","chunks":3}]}`, sim.Options{})
	s := newSink()
	ctx, cancel := context.WithTimeout(context.Background(), turnWithin)
	defer cancel()
	res := r.turn(ctx, "what is here?", "", "workspace", s)
	if res.Status != external.StatusCompleted || res.Err != nil {
		t.Fatalf("result %+v; want completed", res)
	}
	if res.Reply != "Two files, a.txt and b.txt." {
		t.Errorf("reply %q", res.Reply)
	}
	if s.started != 1 || s.session == "" || s.session != res.Session || !strings.HasPrefix(s.version, "0.169.") {
		t.Errorf("started %d times with session %q version %q; result session %q", s.started, s.session, s.version, res.Session)
	}
	if it, ok := s.find(external.ItemText, ""); !ok || it.Text != res.Reply {
		t.Errorf("no text item with the reply: %+v", s.items)
	}
	reqs := r.sim.Requests()
	if len(reqs) == 0 || reqs[0].Conversation != r.conv {
		t.Fatalf("the simulator's requests do not name the rig's conversation %q: %d requests", r.conv, len(reqs))
	}
	if pid, _ := r.started(); !procs.Alive(pid) {
		t.Errorf("the app-server of a completed turn was not kept")
	}
	r.closed(t)
}

// TestCommandTurn has Codex run a command its shell tool offers, then resumes the thread: in the
// app-server kept from the first turn, or (PerTurn) in a new one.
func TestCommandTurn(t *testing.T) {
	for _, perTurn := range []bool{false, true} {
		t.Run(map[bool]string{false: "kept", true: "per-turn"}[perTurn], func(t *testing.T) { commandTurn(t, perTurn) })
	}
}

func commandTurn(t *testing.T, perTurn bool) {
	r := newRig(t, `{"steps":[
		{"text":"Let me look.","tool_calls":[{"name":"exec_command","arguments":{"cmd":"echo hi; exit 3"}}]},
		{"text":"It said hi."},
		{"text":"Still here."}]}`, sim.Options{})
	r.b.opts.PerTurn = perTurn
	s := newSink()
	ctx, cancel := context.WithTimeout(context.Background(), turnWithin)
	defer cancel()
	res := r.turn(ctx, "run it", "", "workspace", s)
	if res.Status != external.StatusCompleted || res.Reply != "It said hi." {
		t.Fatalf("result %+v; want completed with the last message", res)
	}
	if !offers(r.sim.Requests()[0].Body, "exec_command") {
		t.Fatalf("Codex's request does not offer exec_command; the script must name the shell tool it offers")
	}
	cmd, ok := s.find(external.ItemCommand, "started")
	if !ok || !strings.Contains(cmd.Text, "echo hi") {
		t.Errorf("no command started: %+v", s.items)
	}
	if out, ok := s.find(external.ItemToolResult, ""); !ok || !strings.Contains(out.Text, "hi") || !strings.Contains(out.Text, "exit status 3") {
		t.Errorf("no command result with its output and exit status: %+v", s.items)
	}
	if !s.has(external.ItemCommand, "failed") {
		t.Errorf("the command that exited 3 is not failed: %+v", s.items)
	}
	if perTurn {
		gone(t, nil)
	}

	again := newSink()
	res2 := r.turn(ctx, "and now?", res.Session, "workspace", again)
	if res2.Status != external.StatusCompleted || res2.Reply != "Still here." || res2.Session != res.Session {
		t.Fatalf("resumed turn %+v; want completed in thread %s", res2, res.Session)
	}
	if _, n := r.started(); n != map[bool]int{false: 1, true: 2}[perTurn] {
		t.Errorf("%d app-servers started for two turns", n)
	}
	if again.session != res.Session || !strings.HasPrefix(again.version, "0.169.") {
		t.Errorf("the resumed turn started with %q %q", again.session, again.version)
	}
	r.closed(t)
}

// TestKeptServerDied kills the app-server kept between turns: the next turn starts another and
// resumes the thread there.
func TestKeptServerDied(t *testing.T) {
	r := newRig(t, `{"steps":[{"text":"One."},{"text":"Two."}]}`, sim.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), turnWithin)
	defer cancel()
	res := r.turn(ctx, "one", "", "workspace", newSink())
	if res.Status != external.StatusCompleted {
		t.Fatalf("first turn: %+v", res)
	}
	pid, _ := r.started()
	killTree(pid)
	procs.AwaitGone([]int{pid}, 10*time.Second)
	res2 := r.turn(ctx, "two", res.Session, "workspace", newSink())
	if res2.Status != external.StatusCompleted || res2.Reply != "Two." || res2.Session != res.Session {
		t.Fatalf("the turn after the kept app-server died: %+v", res2)
	}
	if _, n := r.started(); n != 2 {
		t.Errorf("%d app-servers started; want a second one", n)
	}
	r.closed(t)
}

// offers reports whether a Responses request body offers the tool name.
func offers(body []byte, name string) bool {
	var req struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	json.Unmarshal(body, &req)
	for _, tl := range req.Tools {
		if tl.Name == name {
			return true
		}
	}
	return false
}

// A stopCase is one state a Stop can find a Codex turn in.
type stopCase struct {
	name   string
	mode   string
	script string // the steps of the stopped turn; a last step answers the resumed turn
	// warm runs a turn to completion first (the script's first step), so the stopped turn runs
	// in the app-server kept from it.
	warm bool
	opts sim.Options
	// ready waits until the turn is in the state, and returns what of the tree it read then.
	ready func(t testing.TB, r *rig, s *sink) []procs.Proc
	// check looks at what the sink holds after the Stop.
	check func(t testing.TB, res external.Result, s *sink)
}

var stopCases = []stopCase{
	{
		name:   "starting",
		script: `{"steps":[{"text":"Resumed."}]}`,
		ready: func(t testing.TB, r *rig, s *sink) []procs.Proc {
			// The app-server is running; initialize has not been answered (Codex takes longer
			// than this to start, and Started would say otherwise).
			if !eventually(30*time.Second, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.pid != 0 }) {
				t.Fatal("the app-server never started")
			}
			return tree(t)
		},
	},
	{
		name:   "streaming",
		script: `{"steps":[{"text":"A long answer that keeps streaming while the person decides to stop it, word by slow word.","delay_ms":150},{"text":"Resumed."}]}`,
		ready: func(t testing.TB, r *rig, s *sink) []procs.Proc {
			if !eventually(60*time.Second, func() bool {
				for _, q := range r.sim.Requests() {
					if q.Outcome == sim.Streaming {
						return true
					}
				}
				return false
			}) {
				t.Fatal("the simulator never streamed")
			}
			time.Sleep(400 * time.Millisecond) // a few deltas
			return tree(t)
		},
		check: func(t testing.TB, res external.Result, s *sink) {
			if it, ok := s.find(external.ItemText, "incomplete"); !ok || !strings.HasPrefix(it.Text, "A long") {
				t.Errorf("the message cut off is not reported incomplete: %+v", s.items)
			}
		},
	},
	{
		name:   "mid-tool",
		script: `{"steps":[{"text":"Waiting.","tool_calls":[{"name":"exec_command","arguments":{"cmd":"sh -c 'sleep 31 & sleep 32'"}}]},{"text":"Resumed."}]}`,
		ready: func(t testing.TB, r *rig, s *sink) []procs.Proc {
			s.await(t, 60*time.Second, "the command to start", func(s *sink) bool { return s.has(external.ItemCommand, "started") })
			var ps []procs.Proc
			if !eventually(30*time.Second, func() bool {
				ps = tree(t)
				n := 0
				for _, p := range ps {
					if p.Comm == "sleep" {
						n++
					}
				}
				return n == 2
			}) {
				t.Fatalf("the command's two sleeps never ran: %+v", ps)
			}
			return ps
		},
	},
	{
		name:   "mid-tool-kept",
		warm:   true,
		script: `{"steps":[{"text":"Ready."},{"text":"Waiting.","tool_calls":[{"name":"exec_command","arguments":{"cmd":"sleep 35"}}]},{"text":"Resumed."}]}`,
		ready: func(t testing.TB, r *rig, s *sink) []procs.Proc {
			s.await(t, 60*time.Second, "the command to start", func(s *sink) bool { return s.has(external.ItemCommand, "started") })
			var ps []procs.Proc
			if !eventually(30*time.Second, func() bool {
				ps = tree(t)
				for _, p := range ps {
					if p.Comm == "sleep" {
						return true
					}
				}
				return false
			}) {
				t.Fatalf("the command's sleep never ran: %+v", ps)
			}
			if _, n := r.started(); n != 1 {
				t.Errorf("%d app-servers started; want the stopped turn in the kept one", n)
			}
			return ps
		},
	},
	{
		name:   "429-retry",
		script: `{"steps":[{"status":429,"retry_after":"30"},{"text":"Resumed."}]}`,
		ready: func(t testing.TB, r *rig, s *sink) []procs.Proc {
			s.await(t, 60*time.Second, "Codex to wait to retry", func(s *sink) bool { return s.has(external.ItemRetry, "") })
			return tree(t)
		},
	},
	{
		name:   "approval",
		mode:   "ask",
		script: `{"steps":[{"text":"May I?","tool_calls":[{"name":"exec_command","arguments":{"cmd":"sleep 33"}}]},{"text":"Resumed."}]}`,
		ready: func(t testing.TB, r *rig, s *sink) []procs.Proc {
			s.await(t, 60*time.Second, "an approval request", func(s *sink) bool { return len(s.approvals) > 0 })
			return tree(t)
		},
		check: func(t testing.TB, res external.Result, s *sink) {
			if a := s.approvals[0]; a.Tool != "command" || !strings.Contains(a.Summary, "sleep 33") {
				t.Errorf("approval %+v; want the command", a)
			}
		},
	},
}

// TestStop stops a Codex turn in each state: the turn ends interrupted, no process of the tree is
// left, and the next turn resumes the thread and is answered.
func TestStop(t *testing.T) {
	for _, c := range stopCases {
		t.Run(c.name, func(t *testing.T) {
			took := stopOnce(t, c, true)
			t.Logf("Stop to turn returned: %v", took)
		})
	}
}

// stopOnce runs one stopCase and returns the time from the Stop to Turn's return.
func stopOnce(t testing.TB, c stopCase, again bool) time.Duration {
	r := newRig(t, c.script, c.opts)
	s := newSink()
	mode := c.mode
	if mode == "" {
		mode = "workspace"
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type ended struct {
		res external.Result
		at  time.Time
	}
	resume := ""
	if c.warm {
		ctx0, cancel0 := context.WithTimeout(context.Background(), turnWithin)
		defer cancel0()
		res := r.turn(ctx0, "get ready", "", mode, newSink())
		if res.Status != external.StatusCompleted {
			t.Fatalf("the turn before: %+v", res)
		}
		resume = res.Session
	}
	done := make(chan ended, 1)
	go func() {
		res := r.turn(ctx, "do the thing", resume, mode, s)
		done <- ended{res, time.Now()}
	}()
	seen := c.ready(t, r, s)
	stopAt := time.Now()
	cancel()
	var e ended
	select {
	case e = <-done:
	case <-time.After(turnWithin):
		t.Fatal("the turn did not return after the Stop")
	}
	if e.res.Status != external.StatusInterrupted {
		t.Fatalf("result %+v; want interrupted", e.res)
	}
	gone(t, seen)
	s.mu.Lock()
	if c.check != nil {
		c.check(t, e.res, s)
	}
	started := s.started
	s.mu.Unlock()
	if c.name == "starting" && started == 0 && e.res.Session != "" {
		t.Errorf("stopped before Codex named a thread, yet the session is %q", e.res.Session)
	}
	if c.name != "starting" && e.res.Session == "" {
		t.Errorf("stopped turn names no session")
	}
	if again {
		ctx2, cancel2 := context.WithTimeout(context.Background(), turnWithin)
		defer cancel2()
		res := r.turn(ctx2, "go on", e.res.Session, mode, newSink())
		if res.Status != external.StatusCompleted || res.Reply != "Resumed." {
			t.Fatalf("the turn after the Stop: %+v; want completed with %q", res, "Resumed.")
		}
		if e.res.Session != "" && res.Session != e.res.Session {
			t.Errorf("the turn after the Stop is in thread %s, not the stopped one %s", res.Session, e.res.Session)
		}
		r.closed(t)
	}
	return e.at.Sub(stopAt)
}

// TestStopRacingTurnStart stops turns at moments spread over turn/start: before it is sent, before
// it is answered, before the turn has started (when Codex refuses the interrupt and rein sends it
// again on turn/started) and after. Every turn ends interrupted with nothing left running.
func TestStopRacingTurnStart(t *testing.T) {
	runs := 20
	if testing.Short() {
		runs = 5
	}
	r := newRig(t, `{"steps":[{"conversation":"none","text":"never"}]}`, sim.Options{Delay: 200 * time.Millisecond})
	refusals := 0
	r.b.onRefusal = func() { refusals++ }
	session := ""
	for i := range runs {
		s := newSink()
		ctx, cancel := context.WithCancel(context.Background())
		delay := time.Duration(i%10) * 2 * time.Millisecond
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			s.await(t, turnWithin, "Started", func(s *sink) bool { return s.started > 0 })
			time.Sleep(delay)
			cancel()
		}()
		res := r.turn(ctx, "say something slowly", session, "workspace", s)
		<-stopped
		cancel()
		if res.Status != external.StatusInterrupted {
			t.Fatalf("run %d (stop %v after Started): %+v; want interrupted", i, delay, res)
		}
		gone(t, nil)
		if res.Session != "" {
			session = res.Session
		}
	}
	t.Logf("%d runs; Codex refused the first interrupt %d times, and took the one sent again on turn/started", runs, refusals)
	ctx, cancel := context.WithTimeout(context.Background(), turnWithin)
	defer cancel()
	res := r.turn(ctx, "are you there?", session, "workspace", newSink())
	if res.Status != external.StatusCompleted || !strings.Contains(res.Reply, "simulator") {
		t.Fatalf("the turn after the Stops: %+v; want the simulator's answer", res)
	}
	r.closed(t)
}

// TestKilledMidTurn kills the Codex process with SIGKILL while its command runs: the turn fails,
// saying how the app-server ended, and the thread resumes.
func TestKilledMidTurn(t *testing.T) {
	r := newRig(t, `{"steps":[{"text":"Waiting.","tool_calls":[{"name":"exec_command","arguments":{"cmd":"sleep 34"}}]},{"text":"Resumed."}]}`, sim.Options{})
	s := newSink()
	ctx, cancel := context.WithTimeout(context.Background(), turnWithin)
	defer cancel()
	done := make(chan external.Result, 1)
	go func() { done <- r.turn(ctx, "wait", "", "full", s) }()
	s.await(t, 60*time.Second, "the command to start", func(s *sink) bool { return s.has(external.ItemCommand, "started") })
	seen := tree(t)
	// The app-server itself: the native codex program below the node launcher, else the leader.
	victim := 0
	for _, p := range seen {
		if p.Comm == "codex" {
			victim = p.PID
			break
		}
	}
	if victim == 0 {
		r.mu.Lock()
		victim = r.pid
		r.mu.Unlock()
	}
	syscall.Kill(victim, syscall.SIGKILL)
	var res external.Result
	select {
	case res = <-done:
	case <-time.After(turnWithin):
		t.Fatal("the turn did not return after codex was killed")
	}
	if res.Status != external.StatusFailed || res.Err == nil {
		t.Fatalf("result %+v; want failed", res)
	}
	msg := res.Err.Error()
	if !strings.Contains(msg, "codex app-server") || !(strings.Contains(msg, "signal") || strings.Contains(msg, "exit status")) {
		t.Errorf("the error %q does not say how the app-server ended", msg)
	}
	t.Logf("killed codex (pid %d): %v", victim, res.Err)
	gone(t, seen)
	res2 := r.turn(ctx, "go on", res.Session, "full", newSink())
	if res2.Status != external.StatusCompleted || res2.Reply != "Resumed." {
		t.Fatalf("the turn after the kill: %+v", res2)
	}
	r.closed(t)
}

// TestCloseDuringTurn closes the back-end while a turn runs: the turn completes, and its
// app-server is not kept after it; a later turn's is.
func TestCloseDuringTurn(t *testing.T) {
	r := newRig(t, `{"steps":[{"text":"A reply that takes a moment to stream.","delay_ms":100},{"text":"Later."}]}`, sim.Options{})
	s := newSink()
	ctx, cancel := context.WithTimeout(context.Background(), turnWithin)
	defer cancel()
	done := make(chan external.Result, 1)
	go func() { done <- r.turn(ctx, "hello", "", "workspace", s) }()
	s.await(t, 60*time.Second, "Started", func(s *sink) bool { return s.started > 0 })
	if err := r.b.Close(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.Status != external.StatusCompleted {
		t.Fatalf("result %+v; want completed", res)
	}
	gone(t, nil)
	res = r.turn(ctx, "later", res.Session, "workspace", newSink())
	if pid, _ := r.started(); res.Status != external.StatusCompleted || !procs.Alive(pid) {
		t.Fatalf("the turn after Close: %+v, its app-server kept: %v", res, procs.Alive(pid))
	}
	r.closed(t)
}

// A thread Codex has no rollout for is refused before the turn begins, in Codex's words, as
// external.ErrSessionGone (the agent then starts a new thread); nothing is played, nothing left.
func TestResumeUnknownThread(t *testing.T) {
	r := newRig(t, `{"steps":[{"text":"never played"}]}`, sim.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), turnWithin)
	defer cancel()
	res := r.turn(ctx, "hello", "01a2339b-4ba9-72c1-aec1-000000000000", "workspace", newSink())
	if res.Status != external.StatusFailed || !errors.Is(res.Err, external.ErrSessionGone) || !strings.Contains(res.Err.Error(), "no rollout found") {
		t.Fatalf("turn: %+v", res)
	}
	if n := len(r.sim.Requests()); n != 0 {
		t.Errorf("the simulator received %d requests", n)
	}
	r.closed(t)
}
