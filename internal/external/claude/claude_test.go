package claude_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/external"
	"github.com/reinhq/rein/internal/external/claude"
	"github.com/reinhq/rein/internal/external/claude/claudetest"
	"github.com/reinhq/rein/internal/provider/sim"
)

// These tests run the real Claude Code against rein's simulator, one Turn at a time; the host's
// tests (internal/host, external_test.go) run it behind a conversation's Stop.

type sink struct {
	mu       sync.Mutex
	session  string
	version  string
	items    []external.Item
	approve  func(ctx context.Context, a external.Approval) bool
	asked    chan external.Approval
	onItem   func(external.Item)
	startedC chan struct{}
	retried  chan struct{} // a value for each retry item
}

func newSink() *sink {
	return &sink{asked: make(chan external.Approval, 8), startedC: make(chan struct{}), retried: make(chan struct{}, 16)}
}

func (s *sink) Started(session, version string) error {
	s.mu.Lock()
	s.session, s.version = session, version
	s.mu.Unlock()
	close(s.startedC)
	return nil
}

func (s *sink) Item(it external.Item) error {
	s.mu.Lock()
	s.items = append(s.items, it)
	f := s.onItem
	s.mu.Unlock()
	if it.Kind == external.ItemRetry {
		s.retried <- struct{}{}
	}
	if f != nil {
		f(it)
	}
	return nil
}

func (s *sink) Approve(ctx context.Context, a external.Approval) bool {
	s.asked <- a
	if s.approve != nil {
		return s.approve(ctx, a)
	}
	<-ctx.Done()
	return false
}

func (s *sink) kinds() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var k []string
	for _, it := range s.items {
		k = append(k, it.Kind)
	}
	return strings.Join(k, ",")
}

type fixture struct {
	t   *testing.T
	b   *claude.Backend
	sim *sim.Server
	env []string
	ws  string
	// arrived receives a value as each request reaches the simulator.
	arrived chan struct{}
}

func newFixture(t *testing.T, script string) *fixture {
	path := claudetest.Find(t)
	s := sim.New(sim.Options{})
	if script != "" {
		sc, err := sim.ParseScript([]byte(script))
		if err != nil {
			t.Fatal(err)
		}
		s.SetScript(sc)
	}
	arrived := make(chan struct{}, 64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			select {
			case arrived <- struct{}{}:
			default:
			}
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return &fixture{t: t, b: claude.New(claude.Options{Path: path}), sim: s, env: claudetest.Env(t, srv.URL), ws: t.TempDir(), arrived: arrived}
}

func (f *fixture) turn(ctx context.Context, prompt, resume, mode string, s external.Sink) external.Result {
	return f.b.Turn(ctx, external.Turn{Prompt: prompt, Resume: resume, Cwd: f.ws, Model: "claude-sonnet-4-5", Mode: mode, Env: f.env}, s)
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestTurnCompletesAndResumes(t *testing.T) {
	f := newFixture(t, `{"steps":[{"text":"Let me look.","tool_calls":[{"name":"Bash","arguments":{"command":"echo hi-from-bash"}}]},{"text":"One file, a.txt."},{"text":"Still one file."}]}`)
	s := newSink()
	res := f.turn(ctxFor(t, 90*time.Second), "list the files", "", "full", s)
	if res.Status != external.StatusCompleted || res.Reply != "One file, a.txt." || res.Err != nil {
		t.Fatalf("turn: %+v", res)
	}
	if s.session == "" || res.Session != s.session || !strings.HasPrefix(s.version, "2.1.") {
		t.Fatalf("session %q (result %q), version %q", s.session, res.Session, s.version)
	}
	if k := s.kinds(); k != "text,tool_call,tool_result,text" {
		t.Fatalf("items %s", k)
	}
	if it := s.items[2]; !strings.Contains(it.Text, "hi-from-bash") || it.Status != "completed" || it.ID != s.items[1].ID {
		t.Fatalf("tool result item %+v", it)
	}
	s2 := newSink()
	res2 := f.turn(ctxFor(t, 90*time.Second), "and now?", res.Session, "full", s2)
	if res2.Status != external.StatusCompleted || res2.Reply != "Still one file." || res2.Session != res.Session {
		t.Fatalf("resumed turn: %+v (first session %s)", res2, res.Session)
	}
	// The resumed request carried the first turn's history.
	reqs := f.sim.Requests()
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "One file, a.txt.") || !strings.Contains(last, "and now?") {
		t.Fatalf("the resumed request does not carry the session's history: %s", clipS(last, 400))
	}
}

func clipS(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// A session Claude Code cannot find is refused before the turn begins, and the turn says why, in
// Claude Code's words, as external.ErrSessionGone (the agent then starts a new session).
func TestResumeUnknownSession(t *testing.T) {
	f := newFixture(t, `[{"text":"never played"}]`)
	res := f.turn(ctxFor(t, 90*time.Second), "hello", "11111111-2222-3333-4444-555555555555", "full", newSink())
	if res.Status != external.StatusFailed || res.Err == nil || !strings.Contains(res.Err.Error(), "No conversation found") || !errors.Is(res.Err, external.ErrSessionGone) {
		t.Fatalf("turn: %+v", res)
	}
	if n := f.sim.Pending(); n != 1 {
		t.Fatalf("the simulator played a step")
	}
}
