package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/openai"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/shell"
)

// The end-to-end harness: the real agent, through a real provider client, against the simulator
// served over HTTP, with a real session on disk and the real bash tool in a temporary workspace.
// After every test the record is replayed and must be admissible and ready, the live state must
// equal the replayed one, and the next request must pass every wire format's validator.

// format is one wire format: its client of the simulator at a base URL (the agent's
// provider.Model, as cmd/rein makes it).
type format struct {
	name   string
	client func(base string) provider.Model
}

var formats = []format{
	{"anthropic", func(base string) provider.Model {
		return anthropic.New(anthropic.Config{BaseURL: base, APIKey: "test-key"})
	}},
	{"chat", func(base string) provider.Model {
		return openai.NewChat(openai.Config{BaseURL: base + "/v1", APIKey: "test-key"})
	}},
	{"responses", func(base string) provider.Model {
		return openai.NewResponses(openai.Config{BaseURL: base + "/v1", APIKey: "test-key"})
	}},
}

// eachFormat runs fn as a parallel subtest per wire format. Each has its own simulator, session
// and workspace.
func eachFormat(t *testing.T, fn func(t *testing.T, f format)) {
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			fn(t, f)
		})
	}
}

// wire is a spy around a format's real client, which does the work: it keeps a copy of the
// neutral messages of every request encoded when keep is set, times each send, and lets a test
// hook in.
type wire struct {
	provider.Model
	keep bool

	mu   sync.Mutex
	sent [][]record.Message
	// onSend, when set, is called with the start and end of every Send.
	onSend func(start, end time.Time)
	// beforeSend, when set, is called as each Send begins.
	beforeSend func()
	// onEncode, when set, is called as each request is built.
	onEncode func()
	// onValidate, when set, is told each request's size and how long validating it took.
	onValidate func(size int, took time.Duration)
	// refuse, when set, judges each request instead of the client's validator.
	refuse func(body []byte) *provider.Violation
	// arrays holds where each body sent began in memory (TestBodiesRecycled).
	arrays []*byte
}

// ReleasesBody: the spy keeps no body past Send, and every format's client reads one only until
// its Send returns, so the agent recycles bodies under every harness test.
func (w *wire) ReleasesBody() {}

func (w *wire) Encode(req provider.Request) ([]byte, error) {
	if w.onEncode != nil {
		w.onEncode()
	}
	if w.keep {
		b, _ := json.Marshal(req.Messages)
		var msgs []record.Message
		_ = json.Unmarshal(b, &msgs)
		w.mu.Lock()
		w.sent = append(w.sent, msgs)
		w.mu.Unlock()
	}
	return w.Model.Encode(req)
}

func (w *wire) Validate(body []byte) *provider.Violation { return w.judge(w.Model, body) }

// NewValidator gives the agent the client's own incremental validator, spied on as Validate is.
func (w *wire) NewValidator() provider.Validator {
	return spiedValidator{w, provider.ValidatorFor(w.Model)}
}

type spiedValidator struct {
	w *wire
	v provider.Validator
}

func (s spiedValidator) Validate(body []byte) *provider.Violation { return s.w.judge(s.v, body) }

func (w *wire) judge(v provider.Validator, body []byte) *provider.Violation {
	if w.refuse != nil {
		return w.refuse(body)
	}
	if w.onValidate == nil {
		return v.Validate(body)
	}
	start := time.Now()
	verdict := v.Validate(body)
	w.onValidate(len(body), time.Since(start))
	return verdict
}

func (w *wire) Send(ctx context.Context, body []byte, on func(provider.Event)) (provider.Reply, error) {
	if w.beforeSend != nil {
		w.beforeSend()
	}
	w.mu.Lock()
	w.arrays = append(w.arrays, unsafe.SliceData(body))
	w.mu.Unlock()
	start := time.Now()
	r, err := w.Model.Send(ctx, body, on)
	if w.onSend != nil {
		w.onSend(start, time.Now())
	}
	return r, err
}

// requests returns the neutral messages of every request encoded so far.
func (w *wire) requests() [][]record.Message {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([][]record.Message(nil), w.sent...)
}

// setup configures a harness. The zero value is a strict empty script, bash only.
type setup struct {
	script  string // JSON array of simulator steps (played strictly)
	sim     func(*sim.Options)
	cfg     func(*agent.Config)
	tools   []tool.Tool // offered after bash
	noBash  bool
	noCheck bool   // skip the end-of-test checks (benchmarks)
	unused  int    // script steps the test means to leave unplayed
	root    string // where the session directory is made; default a t.TempDir()
	ws      string // the workspace; default a t.TempDir()
}

// harness is one session under test.
type harness struct {
	tb   testing.TB
	f    format
	sim  *sim.Server
	srv  *httptest.Server
	wire *wire
	sess *session.Session
	a    *agent.Agent
	cfg  agent.Config
	ws   string

	// hook, when set, sees every request body before the simulator does, in the handler.
	hook atomic.Pointer[func(body []byte)]
	// stopped is when a stopper first stopped the exchange, in unix nanoseconds.
	stopped atomic.Int64
}

// fastRetry retries at once: backoff ceilings of a millisecond or two, retry-after capped at 5ms.
var fastRetry = provider.Policy{Base: time.Millisecond, Cap: 5 * time.Millisecond, Rand: func() float64 { return 0.5 }}

func newHarness(tb testing.TB, f format, s setup) *harness {
	tb.Helper()
	h := &harness{tb: tb, f: f, ws: s.ws}
	if h.ws == "" {
		h.ws = tb.TempDir()
	}
	opts := sim.Options{}
	if s.script != "" {
		sc, err := sim.ParseScript([]byte(`{"strict":true,"steps":` + s.script + `}`))
		if err != nil {
			tb.Fatalf("script: %v", err)
		}
		opts.Script = sc
	}
	if s.sim != nil {
		s.sim(&opts)
	}
	h.sim = sim.New(opts)
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hook := h.hook.Load(); hook != nil {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			(*hook)(body)
		}
		h.sim.ServeHTTP(w, r)
	}))
	tb.Cleanup(h.srv.Close)

	var tools []tool.Tool
	if !s.noBash {
		sh, err := shell.New(h.ws, shell.Options{Grace: 500 * time.Millisecond})
		if err != nil {
			tb.Fatal(err)
		}
		tools = append(tools, sh)
	}
	tools = append(tools, s.tools...)
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		tb.Fatal(err)
	}
	root := s.root
	if root == "" {
		root = tb.TempDir()
	}
	dir := filepath.Join(root, "session")
	sess, err := session.Create(dir, session.Options{}, &record.SessionStarted{
		Session: "test-" + f.name, Provider: f.name, Model: sim.DefaultModel, ContextWindow: 200_000, Cwd: h.ws, Version: "test",
	})
	if err != nil {
		tb.Fatal(err)
	}
	h.sess = sess
	tb.Cleanup(func() { sess.Close() })
	h.wire = &wire{Model: f.client(h.srv.URL), keep: !s.noCheck}
	h.cfg = agent.Config{
		Session: sess, Client: h.wire, Provider: f.name, Model: sim.DefaultModel, MaxTokens: 1024,
		System: "You are under test.", Runner: &tool.Runner{Tools: reg, Policy: tool.Policy{Mode: tool.ModeWorkspace}},
		Doors: agent.Doors(), Retry: fastRetry,
	}
	if s.cfg != nil {
		s.cfg(&h.cfg)
	}
	h.a = agent.New(h.cfg)
	if !s.noCheck {
		tb.Cleanup(func() {
			if n := h.sim.Pending(); n != s.unused {
				tb.Errorf("check: %d script steps were not played, want %d", n, s.unused)
			}
			h.check()
		}) // registered last, so it runs before the session closes
	}
	return h
}

// onRequest installs a hook that sees each request body before the simulator.
func (h *harness) onRequest(fn func(body []byte)) { h.hook.Store(&fn) }

// specs are the tools the agent offers, for building the next request by hand.
func (h *harness) specs() []provider.Tool {
	var out []provider.Tool
	if h.cfg.Runner != nil {
		out = append(out, h.cfg.Runner.Tools.Specs()...)
	}
	for _, d := range h.cfg.Doors {
		out = append(out, d.Spec())
	}
	return out
}

// run takes up a prompt with ctx.
func (h *harness) run(ctx context.Context, prompt string) agent.Outcome {
	h.tb.Helper()
	return h.a.TakeUp(ctx, agent.Prompt{Text: prompt})
}

// check is what every test ends with: the record replays admissibly, the session is ready for a
// prompt with no exchange in flight, the live state is the replayed one, no request the
// simulator received broke its format's rules, and the next request passes every validator.
func (h *harness) check() {
	tb := h.tb
	st, _, err := session.Replay(nil, h.sess.Path())
	if err != nil {
		tb.Errorf("check: the record does not replay: %v", err)
		return
	}
	if !st.IsReady() {
		tb.Errorf("check: the replayed session is not ready for a prompt (phase %s, owed %v)", st.Phase(), st.Owed())
	}
	if st.InFlight() {
		tb.Errorf("check: an exchange was left in flight (not quiesced)")
	}
	live := h.sess.Snapshot()
	if live.Seq() != st.Seq() || live.Phase() != st.Phase() {
		tb.Errorf("check: live state at record %d (%s), replay at %d (%s)", live.Seq(), live.Phase(), st.Seq(), st.Phase())
	}
	if a, b := mustJSON(live.Context()), mustJSON(st.Context()); a != b {
		tb.Errorf("check: the live context differs from the replayed one:\nlive   %s\nreplay %s", clipped(a), clipped(b))
	}
	for i, r := range h.sim.Requests() {
		if r.Violation != nil {
			tb.Errorf("check: request %d broke a %s rule: %v", i, r.Format, r.Violation)
		}
	}
	if err := st.Step(record.Record{Seq: st.Seq() + 1, Body: &record.UserPrompt{Turn: st.Next(), Text: "And now?"}}); err != nil {
		tb.Errorf("check: a fresh prompt is refused: %v", err)
		return
	}
	req := provider.Request{Model: sim.DefaultModel, System: st.System(), Messages: st.Context(), Tools: h.specs(), MaxTokens: 1024}
	for _, f := range formats {
		m := f.client("")
		body, err := m.Encode(req)
		if err != nil {
			tb.Errorf("check: encode the next request for %s: %v", f.name, err)
			continue
		}
		if v := m.Validate(body); v != nil {
			tb.Errorf("check: the next request breaks a %s rule: %v", f.name, v)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func clipped(s string) string {
	if len(s) > 2000 {
		return s[:1000] + " … " + s[len(s)-1000:]
	}
	return s
}

// records reads the session's record file back.
func (h *harness) records() []record.Record {
	h.tb.Helper()
	return readRecords(h.tb, h.sess.Path())
}

func readRecords(tb testing.TB, path string) []record.Record {
	tb.Helper()
	var out []record.Record
	blobs := journal.Blobs(fsys.OS{}, path)
	_, err := journal.Inspect(fsys.OS{}, path, func(seq int64, line []byte, _ record.Locus) error {
		r, err := record.DecodeWith(line, seq, blobs)
		if err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		tb.Fatalf("read the record: %v", err)
	}
	return out
}

// kinds lists the kinds of records, leaving out the events a test does not look at.
func kinds(rs []record.Record, skip ...record.Kind) []string {
	var out []string
next:
	for _, r := range rs {
		for _, k := range skip {
			if r.Kind() == k {
				continue next
			}
		}
		out = append(out, string(r.Kind()))
	}
	return out
}

// all returns the payloads of kind T in order.
func all[T record.Payload](rs []record.Record) []T {
	var out []T
	for _, r := range rs {
		if p, ok := r.Body.(T); ok {
			out = append(out, p)
		}
	}
	return out
}

// last returns the last payload of kind T, failing if there is none.
func last[T record.Payload](tb testing.TB, rs []record.Record) T {
	tb.Helper()
	ps := all[T](rs)
	if len(ps) == 0 {
		var zero T
		tb.Fatalf("the record holds no %T", zero)
		return zero
	}
	return ps[len(ps)-1]
}

// quiesced asserts the last quiesced event's reason.
func quiesced(tb testing.TB, rs []record.Record, reason string) *record.Quiesced {
	tb.Helper()
	q := last[*record.Quiesced](tb, rs)
	if q.Reason != reason {
		tb.Errorf("quiesced %q, want %q", q.Reason, reason)
	}
	return q
}

// expect asserts an outcome's reason, and that an error is present exactly when wanted.
func expect(tb testing.TB, out agent.Outcome, reason string, wantErr bool) {
	tb.Helper()
	if out.Reason != reason || (out.Err != nil) != wantErr {
		tb.Fatalf("outcome %q (err %v), want %q (error wanted: %v)", out.Reason, out.Err, reason, wantErr)
	}
}

// text joins a message's text parts.
func text(parts []record.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Type == record.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func calls(parts []record.Part) []record.Part {
	var out []record.Part
	for _, p := range parts {
		if p.Type == record.PartToolCall {
			out = append(out, p)
		}
	}
	return out
}

// stopper returns the context to take a prompt up with and the Stop that cancels it, noting the
// moment of the first Stop (see stoppedAt).
func (h *harness) stopper() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	h.tb.Cleanup(cancel)
	return ctx, func() {
		h.stopped.CompareAndSwap(0, time.Now().UnixNano())
		cancel()
	}
}

// sinceStop is the time since the first Stop of a stopper, or 0 if there was none.
func (h *harness) sinceStop() time.Duration {
	at := h.stopped.Load()
	if at == 0 {
		return 0
	}
	return time.Duration(time.Now().UnixNano() - at)
}

// stopOn stops the exchange when pred first holds for an update of the session. It subscribes
// before returning, so no update is missed.
func (h *harness) stopOn(pred func(session.Update) bool) context.Context {
	ctx, stop := h.stopper()
	h.watch(func(u session.Update) bool {
		if pred(u) {
			stop()
			return true
		}
		return false
	})
	return ctx
}

// watch calls fn with every update of the session until it returns true. The function it
// returns ends the watch once fn has seen every update published before it was called.
func (h *harness) watch(fn func(session.Update) bool) (end func()) {
	ch, unsubscribe := h.sess.Subscribe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for u := range ch {
			if fn(u) {
				return
			}
		}
	}()
	end = func() { unsubscribe(); <-done }
	h.tb.Cleanup(end)
	return end
}

// isRecord reports whether an update is a record of kind k.
func isRecord(u session.Update, k record.Kind) bool { return u.Record != nil && u.Record.Kind() == k }

// steps joins scripted steps into a JSON array.
func steps(s ...string) string { return "[" + strings.Join(s, ",") + "]" }

// bashStep is a step calling bash with a command.
func bashStep(text, command string) string {
	return fmt.Sprintf(`{"text":%q,"tool_calls":[{"name":"bash","arguments":{"command":%q}}]}`, text, command)
}

func textStep(s string) string { return fmt.Sprintf(`{"text":%q}`, s) }

// probe is a test tool that runs fn; it declares that it only reads, so every mode allows it.
type probe struct {
	name string
	fn   func(ctx context.Context, call tool.Call) tool.Result
}

func (p probe) Spec() provider.Tool {
	return provider.Tool{Name: p.name, Description: "A test tool.", Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)}
}

func (p probe) Run(ctx context.Context, call tool.Call) tool.Result { return p.fn(ctx, call) }

func (p probe) Access(json.RawMessage) tool.Access { return tool.Access{Effect: tool.EffectRead} }

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func itoa(n int) string { return strconv.Itoa(n) }

// bash returns a bash tool for the harness's workspace.
func (h *harness) bash() *shell.Tool {
	sh, err := shell.New(h.ws, shell.Options{Grace: 500 * time.Millisecond})
	if err != nil {
		h.tb.Fatal(err)
	}
	return sh
}
