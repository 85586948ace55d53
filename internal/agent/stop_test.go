package agent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/procs"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// stopCase is a Stop in one phase or wait of an exchange. arm returns the context to take the
// prompt up with, cancelled at the moment the phase is reached; verify looks at the record after
// the Stop.
type stopCase struct {
	name   string
	script string // played by the stopped exchange; "Back." is appended for the next one
	setup  func(s *setup)
	arm    func(h *harness, ws string) context.Context
	verify func(t testing.TB, h *harness, rs []record.Record)
}

// hooked wraps a tool and calls after once it has run: a Stop landing exactly between two calls
// of a batch.
type hooked struct {
	tool.Tool
	after func()
}

func (h hooked) Run(ctx context.Context, c tool.Call) tool.Result {
	r := h.Tool.Run(ctx, c)
	h.after()
	return r
}

func (h hooked) Access(args json.RawMessage) tool.Access {
	if a, ok := h.Tool.(tool.Accessor); ok {
		return a.Access(args)
	}
	return tool.Access{Effect: tool.EffectRead}
}

// stopCases are the phases and waits of DESIGN §7 where a Stop must end the exchange at once.
func stopCases() []stopCase {
	return []stopCase{
		{
			name:   "while the request is built",
			script: steps(),
			arm: func(h *harness, _ string) context.Context {
				ctx, stop := h.stopper()
				h.wire.onEncode = func() { stop(); h.wire.onEncode = nil }
				return ctx
			},
			verify: func(t testing.TB, h *harness, rs []record.Record) {
				noReply(t, rs)
			},
		},
		{
			name:   "before the first token",
			script: steps(`{"text":"A slow reply.","delay_ms":30000}`),
			arm: func(h *harness, _ string) context.Context {
				ctx, stop := h.stopper()
				h.onRequest(func([]byte) { stop() }) // the request is on the wire
				return ctx
			},
			verify: func(t testing.TB, h *harness, rs []record.Record) {
				noReply(t, rs)
			},
		},
		{
			name:   "mid-stream",
			script: steps(`{"text":"one two three four five six seven eight nine ten","tool_calls":[{"name":"bash","arguments":{"command":"touch never"}}],"delay_ms":50}`),
			arm: func(h *harness, _ string) context.Context {
				return h.stopOn(func(u session.Update) bool { return u.Live != nil && u.Live.Kind == "text" })
			},
			verify: func(t testing.TB, h *harness, rs []record.Record) {
				msg := last[*record.AssistantMessage](t, rs)
				said := text(msg.Parts)
				if said == "" || !strings.HasPrefix("one two three four five six seven eight nine ten", said) {
					t.Errorf("committed %q, want a prefix of the text", said)
				}
				if len(calls(msg.Parts)) != 0 || msg.StopReason != provider.StopCancelled {
					t.Errorf("committed %+v (stop %q), want text only, stop cancelled", msg.Parts, msg.StopReason)
				}
				if _, err := os.Stat(filepath.Join(h.ws, "never")); err == nil {
					t.Errorf("the call of a stopped stream ran")
				}
			},
		},
		{
			name:   "mid-stream in a tool call",
			script: steps(`{"text":"Writing.","tool_calls":[{"name":"bash","arguments":{"command":"echo this call is cut off before its arguments end"}}],"delay_ms":50}`),
			arm: func(h *harness, _ string) context.Context {
				return h.stopOn(func(u session.Update) bool { return u.Live != nil && u.Live.Kind == "tool_args" })
			},
			verify: func(t testing.TB, h *harness, rs []record.Record) {
				msg := last[*record.AssistantMessage](t, rs)
				if text(msg.Parts) != "Writing." || len(calls(msg.Parts)) != 0 {
					t.Errorf("committed %+v, want the text without the incomplete call", msg.Parts)
				}
				if len(all[*record.ToolResults](rs)) != 0 {
					t.Errorf("results recorded for a call never committed")
				}
			},
		},
		{
			name:   "during a retry sleep",
			script: steps(`{"status":429,"retry_after":"30"}`),
			setup: func(s *setup) {
				s.cfg = func(c *agent.Config) { c.Retry = provider.Policy{Cap: time.Minute} }
			},
			arm: func(h *harness, _ string) context.Context {
				return h.stopOn(func(u session.Update) bool { return isRecord(u, record.KindRetryScheduled) })
			},
			verify: func(t testing.TB, h *harness, rs []record.Record) {
				noReply(t, rs)
				if w := last[*record.RetryScheduled](t, rs); w.DelayMs != 30000 {
					t.Errorf("retry scheduled %+v, want the provider's 30 s", w)
				}
			},
		},
		{
			name:   "while a tool runs",
			script: steps(`{"tool_calls":[{"name":"bash","arguments":{"command":"sleep 30 & echo $$ > ready; wait"}},{"name":"bash","arguments":{"command":"touch never"}}]}`),
			arm: func(h *harness, ws string) context.Context {
				ctx, stop := h.stopper()
				pgid := fifo(h.tb, filepath.Join(ws, "ready"), stop)
				h.tb.Cleanup(func() { groupGone(h.tb, <-pgid) })
				return ctx
			},
			verify: func(t testing.TB, h *harness, rs []record.Record) {
				res := results(t, rs)
				if res[0].Outcome != record.Interrupted || !strings.Contains(res[0].Content, "interrupted") {
					t.Errorf("the running call answered %+v, want interrupted", res[0])
				}
				if res[1].Outcome != record.NotExecuted {
					t.Errorf("the call after it answered %+v, want not_executed", res[1])
				}
				if fin := all[*record.ToolFinished](rs); len(fin) != 1 || fin[0].Outcome != record.Interrupted {
					t.Errorf("tool_finished %+v", fin)
				}
			},
		},
		{
			name:   "between tool results",
			script: steps(`{"tool_calls":[{"name":"bash","arguments":{"command":"echo first > first.txt; echo first"}},{"name":"bash","arguments":{"command":"touch never"}}]}`),
			setup:  func(s *setup) { s.noBash = true },
			arm: func(h *harness, _ string) context.Context {
				return h.stopAfterFirstTool()
			},
			verify: func(t testing.TB, h *harness, rs []record.Record) {
				res := results(t, rs)
				if res[0].Outcome != record.OK || !strings.HasPrefix(res[0].Content, "first\n") {
					t.Errorf("the finished call answered %+v, want its real result", res[0])
				}
				if res[1].Outcome != record.NotExecuted {
					t.Errorf("the next call answered %+v, want not_executed", res[1])
				}
				if _, err := os.Stat(filepath.Join(h.ws, "never")); err == nil {
					t.Errorf("the call after the Stop ran")
				}
				if n := len(all[*record.ToolStarted](rs)); n != 1 {
					t.Errorf("%d tool_started, want 1", n)
				}
			},
		},
		{
			name:   "waiting for approval",
			script: steps(`{"tool_calls":[{"name":"bash","arguments":{"command":"touch never"}}]}`),
			arm: func(h *harness, _ string) context.Context {
				ctx, stop := h.stopper()
				h.cfg.Runner.Policy = tool.Policy{Mode: tool.ModeAsk}
				h.cfg.Runner.Approver = tool.ApproverFunc(func(ctx context.Context, _ tool.Call) (bool, error) {
					stop() // the person presses Stop instead of answering
					<-ctx.Done()
					return false, ctx.Err()
				})
				return ctx
			},
			verify: func(t testing.TB, h *harness, rs []record.Record) {
				res := results(t, rs)
				if res[0].Outcome != record.NotExecuted {
					t.Errorf("the call awaiting approval answered %+v, want not_executed", res[0])
				}
			},
		},
	}
}

// TestStop stops an exchange in every phase and wait, for every wire format: the exchange ends
// cancelled with the record admissible, and the next prompt works.
func TestStop(t *testing.T) {
	for _, c := range stopCases() {
		t.Run(c.name, func(t *testing.T) {
			eachFormat(t, func(t *testing.T, f format) {
				s := setup{script: strings.TrimSuffix(c.script, "]") + "," + textStep("Back.") + "]"}
				if c.script == "[]" {
					s.script = steps(textStep("Back."))
				}
				if c.setup != nil {
					c.setup(&s)
				}
				h := newHarness(t, f, s)
				ctx := c.arm(h, h.ws)
				out := h.run(ctx, "go")
				stopped := h.sinceStop()
				expect(t, out, fold.Cancelled, false)
				rs := h.records()
				q := quiesced(t, rs, fold.Cancelled)
				c.verify(t, h, rs)
				for _, tr := range all[*record.ToolResults](rs) {
					for _, r := range tr.Results {
						if !strings.HasSuffix(r.Content, "TURN: "+strconv.FormatInt(all[*record.AssistantMessage](rs)[0].Turn, 10)) {
							t.Errorf("result %s lacks its trailer: %q", r.CallID, r.Content)
						}
					}
				}
				t.Logf("Stop to quiesced: %v; quiesced answering %v", stopped, q.Answered)

				out = h.run(context.Background(), "carry on")
				expect(t, out, fold.Replied, false)
				if n := h.sim.Pending(); n != 0 {
					t.Errorf("%d script steps left", n)
				}
			})
		})
	}
}

// stopAfterFirstTool replaces bash with a wrapper that stops the exchange as soon as the first
// call has finished.
func (h *harness) stopAfterFirstTool() context.Context {
	ctx, stop := h.stopper()
	reg, err := tool.NewRegistry(hooked{Tool: h.bash(), after: stop})
	if err != nil {
		h.tb.Fatal(err)
	}
	h.cfg.Runner.Tools = reg
	return ctx
}

func noReply(t testing.TB, rs []record.Record) {
	t.Helper()
	if n := len(all[*record.AssistantMessage](rs)); n != 0 {
		t.Errorf("%d assistant messages committed, want none", n)
	}
}

func results(t testing.TB, rs []record.Record) []record.ToolResult {
	t.Helper()
	return last[*record.ToolResults](t, rs).Results
}

// fifo makes a named pipe at path and, in the background, reads one line from it (a process
// group id written by a command that is now running), then calls then. It returns the id.
func fifo(tb testing.TB, path string, then func()) <-chan int {
	tb.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		tb.Fatal(err)
	}
	out := make(chan int, 1)
	go func() {
		f, err := os.Open(path) // blocks until the command opens it to write
		if err != nil {
			out <- 0
			then()
			return
		}
		line, _ := bufio.NewReader(f).ReadString('\n')
		f.Close()
		pgid, _ := strconv.Atoi(strings.TrimSpace(line))
		out <- pgid
		then()
	}()
	return out
}

// groupGone waits for every process of group pgid to be gone and reports how long it took. There is
// no notification for another process group's end, so it polls, bounded.
func groupGone(tb testing.TB, pgid int) time.Duration {
	tb.Helper()
	if pgid <= 0 {
		tb.Errorf("no process group id was read")
		return 0
	}
	start := time.Now()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(5 * time.Second)
	for {
		if !groupAlive(pgid) {
			d := time.Since(start)
			tb.Logf("process group %d gone %v after the exchange ended", pgid, d)
			return d
		}
		select {
		case <-tick.C:
		case <-deadline:
			tb.Errorf("process group %d still has live processes 5 s after the Stop", pgid)
			return time.Since(start)
		}
	}
}

// groupAlive reports whether any process of group pgid is alive (zombies are not).
func groupAlive(pgid int) bool {
	live, err := procs.Live(pgid)
	if err != nil {
		return !errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
	}
	return len(live) > 0
}
