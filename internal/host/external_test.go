package host_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/external"
	"github.com/reinhq/rein/internal/external/claude"
	"github.com/reinhq/rein/internal/external/claude/claudetest"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/procs"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
)

// Conversations whose turns run in the real Claude Code, behind the real host: a Stop in every
// state ends the turn and the program's whole tree, the conversation stays resumable, and the
// next prompt is answered in the same Claude Code session (--resume). Skipped, saying why, where
// Claude Code is not installed (REIN_CLAUDE).

// ccRig is the host rig with Claude Code as the conversations' back-end, pointed at the rig's
// simulator through a door that signals each request's arrival.
type ccRig struct {
	*rig
	arrived chan struct{}
}

func newClaudeRig(t testing.TB, script, mode string) *ccRig {
	path := claudetest.Find(t)
	c := &ccRig{arrived: make(chan struct{}, 64)}
	var env []string
	c.rig = newRig(t, rigOptions{script: script, quiet: true, backends: []string{api.BackendClaude},
		external: func(s host.Setup) *agent.External {
			return &agent.External{Backend: claude.New(claude.Options{Path: path}), Approver: s.Approver,
				Turn: external.Turn{Cwd: c.ws, Model: "claude-sonnet-4-5", Mode: mode, Env: env}}
		}})
	door := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			select {
			case c.arrived <- struct{}{}:
			default:
			}
		}
		c.sim.ServeHTTP(w, r)
	}))
	t.Cleanup(door.Close)
	env = claudetest.Env(t, door.URL)
	return c
}

func (c *ccRig) createClaude() string {
	c.t.Helper()
	v, _, err := c.c.CreateOn(ctxT(c.t), client.NewOp(), "", api.BackendClaude)
	if err != nil {
		c.t.Fatalf("create: %v", err)
	}
	if v.Backend != api.BackendClaude {
		c.t.Fatalf("created on back-end %q", v.Backend)
	}
	return v.ID
}

// slowBash is a Bash step whose command signals through a FIFO that it runs, then sleeps 30 s
// under a marker the test finds it by.
func slowBash(t testing.TB) (step, marker string, started <-chan struct{}) {
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	marker = fmt.Sprintf("30.%06d", rand.IntN(1_000_000))
	ch := make(chan struct{})
	go func() {
		if f, err := os.Open(fifo); err == nil {
			f.Close()
		}
		close(ch)
	}()
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	cmd := fmt.Sprintf("echo started > %s; sleep %s; echo done", fifo, marker)
	return fmt.Sprintf(`{"text":"Running it.","tool_calls":[{"name":"Bash","arguments":{"command":%q}}]}`, cmd), marker, ch
}

type ccCase struct {
	script  string
	mode    string
	marker  string
	before  bool // the Stop comes before Claude Code has said its session
	trigger func(c *ccRig, id string, ev *watch)
	// queued sends a second message, queued behind the first, before the Stop.
	queued bool
}

func ccCases(t testing.TB) map[string]ccCase {
	step, marker, started := slowBash(t)
	return map[string]ccCase{
		"queued": {mode: "full", marker: marker, script: "[" + step + "]", queued: true,
			trigger: func(c *ccRig, id string, ev *watch) { <-started }},
		"starting": {mode: "full", before: true, trigger: func(c *ccRig, id string, ev *watch) {
			// Claude Code is running (a process the test started) and has said nothing yet.
			for !claudeRunning() {
				time.Sleep(time.Millisecond) // a process's start has no signal to wait on
			}
		}},
		"streaming": {mode: "full", script: `[{"text":"` + strings.Repeat("word ", 200) + `","chunks":200,"delay_ms":50}]`,
			trigger: func(c *ccRig, id string, ev *watch) {
				ev.record(record.KindExternalSession)
				<-c.arrived
			}},
		"mid-tool": {mode: "full", marker: marker, script: "[" + step + "]",
			trigger: func(c *ccRig, id string, ev *watch) { <-started }},
		"retry": {mode: "full", script: `[{"status":429,"retry_after":"30","should_retry":true},{"status":429,"retry_after":"30","should_retry":true}]`,
			trigger: func(c *ccRig, id string, ev *watch) {
				ev.until("a retry item", func(e api.Event) bool {
					return e.Kind == string(record.KindExternalItem) && strings.Contains(string(e.Payload), `"item":"retry"`)
				})
			}},
		"approval": {mode: "ask", script: `[{"text":"Making it.","tool_calls":[{"name":"Bash","arguments":{"command":"touch made.txt"}}]}]`,
			trigger: func(c *ccRig, id string, ev *watch) {
				ev.until("an approval asked", func(e api.Event) bool { return len(e.State.Approvals) > 0 })
			}},
	}
}

var ccStates = []string{"queued", "starting", "streaming", "mid-tool", "retry", "approval"}

func TestClaudeStop(t *testing.T) {
	for _, state := range ccStates {
		t.Run(state, func(t *testing.T) {
			took := runClaudeStop(t, state, true)
			t.Logf("Stop to quiesced (%s): %s", state, took)
		})
	}
}

// runClaudeStop runs one state's scenario and returns how long the Stop took to quiesce the
// conversation; with next, it then checks the next prompt is answered in the same session.
func runClaudeStop(t testing.TB, state string, next bool) time.Duration {
	cs := ccCases(t)[state]
	c := newClaudeRig(t, cs.script, cs.mode)
	id := c.createClaude()
	w := claudetest.Watch(t)
	ev := c.events(id, 0)
	first := c.send(id, "run the slow thing")
	var second api.SendResult
	if cs.queued {
		cs.trigger(c, id, ev)
		res, err := c.c.Send(ctxT(t), id, api.Message{Op: client.NewOp(), Text: "then the second thing", Queue: true})
		if err != nil || res.State != api.Accepted {
			t.Fatalf("send queued: %+v %v", res, err)
		}
		second = res
	} else {
		cs.trigger(c, id, ev)
	}
	w.Look()
	at := time.Now()
	if res := c.stop(id); !res.Stopped {
		t.Fatalf("the Stop stopped nothing: %+v", res)
	}
	c.settle(id)
	took := time.Since(at)
	if left := w.Left(); len(left) > 0 {
		t.Fatalf("processes of Claude Code's tree left: %+v", left)
	}
	if cs.marker != "" {
		if m := claudetest.Marked(cs.marker); len(m) > 0 {
			t.Fatalf("the command Claude Code ran is still running: %v", m)
		}
	}
	if w.Seen() == 0 {
		t.Fatal("no process of Claude Code's was seen: the Stop was not put to a running program")
	}
	if v := c.get(id); v.State.Working || len(v.State.Approvals) > 0 {
		t.Fatalf("after the Stop the conversation works: %+v", v.State)
	}
	recs := c.records(id)
	q, _ := lastOf[*record.Quiesced](recs)
	if q == nil || q.Reason != fold.Cancelled {
		t.Fatalf("the stopped exchange quiesced %+v", q)
	}
	if s := submission(recs, first.MessageID); s == nil || s.State != api.Cancelled {
		t.Fatalf("the stopped message ended %+v", s)
	}
	if cs.queued {
		if s := submission(recs, second.MessageID); s == nil || s.State != api.Withdrawn {
			t.Fatalf("the queued message ended %+v, not withdrawn", s)
		}
		if n := c.requestsWith("then the second thing"); n != 0 {
			t.Fatalf("the withdrawn message reached the provider %d times", n)
		}
	}
	es, _ := lastOf[*record.ExternalSession](recs)
	if cs.before != (es == nil) {
		t.Fatalf("stopped before Claude Code said its session: %v; its session recorded: %+v", cs.before, es)
	}
	if !next {
		return took
	}
	sc, err := sim.ParseScript([]byte(`[{"text":"Answered after the Stop."}]`))
	if err != nil {
		t.Fatal(err)
	}
	c.sim.SetScript(sc)
	c.send(id, "are you there?")
	c.settle(id)
	recs = c.records(id)
	imp, _ := lastOf[*record.Import](recs)
	if imp == nil || imp.Source != api.BackendClaude || imp.Message.Role != record.Assistant || imp.Message.Parts[0].Text != "Answered after the Stop." {
		t.Fatalf("the next prompt's reply imported as %+v", imp)
	}
	es2, _ := lastOf[*record.ExternalSession](recs)
	if es2 == nil || imp.External != es2.ID || (es != nil && es2.ID != es.ID) {
		t.Fatalf("the next turn ran in session %+v (the stopped one in %+v, the reply names %q)", es2, es, imp.External)
	}
	if q, _ := lastOf[*record.Quiesced](recs); q == nil || q.Reason != fold.Replied {
		t.Fatalf("the next exchange quiesced %+v", q)
	}
	return took
}

// A Claude Code killed mid-turn (SIGKILL, from outside) is reported as it happened: a failure
// saying how the program died, the exchange aborted, and the command it ran ended with it. The
// next prompt resumes the session.
func TestClaudeCrash(t *testing.T) {
	step, marker, started := slowBash(t)
	c := newClaudeRig(t, "["+step+"]", "full")
	id := c.createClaude()
	w := claudetest.Watch(t)
	c.send(id, "run the slow thing")
	<-started
	ps, _ := procs.Tree(os.Getpid())
	killed := 0
	for _, p := range ps {
		if p.PPID == os.Getpid() && p.Comm == "claude" {
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
			killed++
		}
	}
	if killed != 1 {
		t.Fatalf("killed %d claude processes: %+v", killed, ps)
	}
	c.settle(id)
	if left := w.Left(); len(left) > 0 {
		t.Fatalf("processes left: %+v", left)
	}
	if m := claudetest.Marked(marker); len(m) > 0 {
		t.Fatalf("the command Claude Code ran is still running: %v", m)
	}
	recs := c.records(id)
	f, _ := lastOf[*record.Failure](recs)
	q, _ := lastOf[*record.Quiesced](recs)
	if f == nil || !strings.Contains(f.Message, "without a result") || !strings.Contains(f.Message, "killed") || q == nil || q.Reason != fold.Aborted {
		t.Fatalf("the crash was recorded as failure %+v, quiesced %+v", f, q)
	}
	if imp, _ := lastOf[*record.Import](recs); imp != nil {
		t.Fatalf("a crashed turn imported a reply: %+v", imp)
	}
	sc, _ := sim.ParseScript([]byte(`[{"text":"Back again."}]`))
	c.sim.SetScript(sc)
	c.send(id, "are you there?")
	c.settle(id)
	if imp, _ := lastOf[*record.Import](c.records(id)); imp == nil || imp.Message.Parts[0].Text != "Back again." {
		t.Fatalf("after the crash the next prompt got %+v", imp)
	}
}

// The items Claude Code reports are recorded as external_item events, and an approval the
// person answers through the host decides the call.
func TestClaudeItemsAndApproval(t *testing.T) {
	c := newClaudeRig(t, `[{"text":"Making it.","tool_calls":[{"name":"Bash","arguments":{"command":"touch made.txt"}}]},{"text":"Made."}]`, "ask")
	id := c.createClaude()
	ev := c.events(id, 0)
	c.send(id, "make a file")
	e := ev.until("an approval asked", func(e api.Event) bool { return len(e.State.Approvals) > 0 })
	a := e.State.Approvals[0]
	if a.Name != "Bash" || !strings.Contains(a.Args, "touch made.txt") {
		t.Fatalf("asked %+v", a)
	}
	if _, err := c.c.Approve(ctxT(t), id, client.NewOp(), a.CallID, true); err != nil {
		t.Fatal(err)
	}
	c.settle(id)
	if _, err := os.Stat(filepath.Join(c.ws, "made.txt")); err != nil {
		t.Fatalf("the allowed call did not run: %v", err)
	}
	var items []string
	for _, r := range c.records(id) {
		if it, ok := r.Body.(*record.ExternalItem); ok {
			items = append(items, it.Item+":"+it.Status)
		}
	}
	if want := []string{"text:", "tool_call:started", "tool_result:completed", "text:"}; !slices.Equal(items, want) {
		t.Fatalf("items %v, want %v", items, want)
	}
	imp, _ := lastOf[*record.Import](c.records(id))
	if imp == nil || imp.Message.Parts[0].Text != "Made." {
		t.Fatalf("imported %+v", imp)
	}
}

// A restarted host keeps a conversation's back-end (its record says it), and the next prompt
// resumes the Claude Code session the record names.
func TestClaudeRestart(t *testing.T) {
	c := newClaudeRig(t, `[{"text":"First."},{"text":"Second."}]`, "full")
	id := c.createClaude()
	c.send(id, "one")
	c.settle(id)
	first, _ := lastOf[*record.ExternalSession](c.records(id))
	c.restart()
	c.send(id, "two")
	c.settle(id)
	recs := c.records(id)
	imp, _ := lastOf[*record.Import](recs)
	es, _ := lastOf[*record.ExternalSession](recs)
	if first == nil || imp == nil || imp.Source != api.BackendClaude || imp.Message.Parts[0].Text != "Second." || es.ID != first.ID || imp.External != first.ID {
		t.Fatalf("after a restart: reply %+v in session %+v (first %+v)", imp, es, first)
	}
	// The resumed request carried the first exchange.
	reqs := c.sim.Requests()
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "First.") {
		t.Fatalf("the resumed turn's request does not carry the first reply")
	}
}

// BenchmarkClaudeStop measures Stop to quiesced per state, through the host, over b.N runs each
// (go test ./internal/host -run X -bench ClaudeStop -benchtime 10x); it reports p50 and p99.
func BenchmarkClaudeStop(b *testing.B) {
	for _, state := range ccStates {
		b.Run(state, func(b *testing.B) {
			var ds []time.Duration
			for range b.N {
				ds = append(ds, runClaudeStop(b, state, false))
			}
			sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
			b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(ds[(len(ds)*99)/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// claudeRunning reports whether the test process has a claude child.
func claudeRunning() bool {
	ps, _ := procs.Tree(os.Getpid())
	for _, p := range ps {
		if p.PPID == os.Getpid() && p.Comm == "claude" {
			return true
		}
	}
	return false
}
