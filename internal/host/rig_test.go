package host_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/checkpoint"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/store/pgstore"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/shell"
)

// The rig: a real host on a temporary REIN root, each conversation's agent talking through the
// real Anthropic client to the simulator served over HTTP, and the host's real HTTP API served by
// httptest and driven with internal/client. After every test each record is replayed and checked
// (checkRecord).

const token = "test-token-0123456789abcdef0123456789"

type rigOptions struct {
	script    string // the simulator's steps, a JSON array; "" plays the policy
	simDelay  time.Duration
	simLog    int  // keep only this many simulator requests (0: all)
	bash      bool // offer the bash tool in a temporary workspace
	ask       bool // with bash: permission mode ask, every call put to the person through the host
	idleAfter time.Duration
	noCheck   bool         // skip the end-of-test record checks
	quiet     bool         // keep host log lines out of the test log
	limits    host.Limits  // the API's connection caps and timeouts (zero: the defaults)
	caps      caps         // the host's caps on conversations
	fs        fsys.FS      // the sessions' file system (nil: the OS's)
	agentErr  func() error // when it returns an error, building a conversation's agent fails with it
	web       fs.FS        // the files served at / (nil: none)
	// agent, when set, adjusts each conversation's agent configuration before it is built.
	agent func(cfg *agent.Config)
	// checkpoints takes checkpoints of the workspace (and offers rewinds with files).
	checkpoints bool
	// external, when set, runs the turns of a conversation created on an external back-end
	// (the host offers those named in backends) in the program it returns (external_test.go).
	external func(s host.Setup) *agent.External
	backends []string
	// store, when set, is the URL of the PostgreSQL database the host keeps its conversations in,
	// shared with other hosts (shared_test.go); storeOpts are the store's options.
	store     string
	storeOpts pgstore.Options
	// noAdvertise leaves the host's URL out of its leases: other hosts cannot hand requests on
	// to it, and refuse them naming it.
	noAdvertise bool
}

// caps are the host's caps on conversations (host.Config).
type caps struct {
	maxConversations, maxOpen int
	createRate                float64
	createBurst               int
}

type rig struct {
	t    testing.TB
	opts rigOptions
	root string
	ws   string

	sim    *sim.Server
	simSrv *httptest.Server
	gate   *gate

	repo  *checkpoint.Repo // the workspace's checkpoints, with opts.checkpoints
	h     *host.Host
	st    *pgstore.Store // with opts.store
	srv   *httptest.Server
	conns *host.Gate
	c     *client.Client
}

func newRig(t testing.TB, opts rigOptions) *rig {
	t.Helper()
	r := &rig{t: t, opts: opts, root: t.TempDir(), ws: t.TempDir(), gate: &gate{}}
	simOpts := sim.Options{Delay: opts.simDelay, MaxLogged: opts.simLog}
	if opts.script != "" {
		sc, err := sim.ParseScript([]byte(opts.script))
		if err != nil {
			t.Fatalf("script: %v", err)
		}
		simOpts.Script = sc
	}
	r.sim = sim.New(simOpts)
	r.simSrv = httptest.NewServer(r.sim)
	t.Cleanup(r.simSrv.Close)
	if opts.checkpoints {
		repo, err := checkpoint.Open(r.root, r.ws, checkpoint.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r.repo = repo
	}
	r.open()
	t.Cleanup(r.finish)
	return r
}

// finish closes the host, opens and closes it once more — so that what a shutdown left waiting is
// settled, as at any restart — and checks every record.
func (r *rig) finish() {
	r.close()
	if r.opts.noCheck || r.t.Failed() {
		return
	}
	r.open()
	r.close()
	r.checkAll()
}

// config is the host's configuration: the wiring of cmd/rein/serve.go with the simulator.
func (r *rig) config() host.Config {
	var log io.Writer = testLog{r.t}
	if r.opts.quiet {
		log = io.Discard
	}
	wire := &gatedWire{gate: r.gate, Model: anthropic.New(anthropic.Config{BaseURL: r.simSrv.URL, APIKey: "sim"})}
	return host.Config{
		Root: r.root, Cwd: r.ws, Provider: "sim", Model: sim.DefaultModel, Window: 200_000, Version: "test",
		IdleAfter: r.opts.idleAfter, Log: log, Session: session.Options{FS: r.opts.fs},
		MaxConversations: r.opts.caps.maxConversations, MaxOpen: r.opts.caps.maxOpen,
		CreateRate: r.opts.caps.createRate, CreateBurst: r.opts.caps.createBurst, Checkpoints: r.repo, Backends: r.opts.backends,
		NewAgentFor: func(sess *session.Session, s host.Setup) (*agent.Agent, error) {
			if s.Provider != "sim" {
				return nil, fmt.Errorf("this host talks to provider sim, not %s", s.Provider)
			}
			if r.opts.agentErr != nil {
				if err := r.opts.agentErr(); err != nil {
					return nil, err
				}
			}
			cfg := agent.Config{Session: sess, Client: wire, Provider: "sim", Model: s.Model, MaxTokens: 1024,
				System: "You are under test.", Window: 200_000, Checkpoints: r.repo}
			if r.opts.bash {
				sh, err := shell.New(r.ws, shell.Options{Grace: 200 * time.Millisecond})
				if err != nil {
					return nil, err
				}
				reg, err := tool.NewRegistry(sh)
				if err != nil {
					return nil, err
				}
				mode := tool.ModeWorkspace
				if r.opts.ask {
					mode = tool.ModeAsk
				}
				cfg.Runner = &tool.Runner{Tools: reg, Policy: tool.Policy{Mode: mode}, Approver: s.Approver, Owned: []io.Closer{sh}}
			}
			if r.opts.agent != nil {
				r.opts.agent(&cfg)
			}
			if r.opts.external != nil && s.Backend != "" && s.Backend != api.BackendRein {
				cfg.External = r.opts.external(s)
			}
			return agent.New(cfg), nil
		},
	}
}

// open starts the host and its API.
func (r *rig) open() {
	r.t.Helper()
	cfg := r.config()
	// The API checks the Host header against its listen address, and a host over a store gives
	// other hosts its URL in its leases: listen first.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		r.t.Fatal(err)
	}
	if r.opts.store != "" {
		st, err := pgstore.Open(context.Background(), r.opts.store, r.opts.storeOpts)
		if err != nil {
			r.t.Fatalf("open the store: %v", err)
		}
		if !r.opts.noAdvertise {
			st.SetAdvertise("http://" + ln.Addr().String())
		}
		r.st = st
		cfg.Store = st
		cfg.Session.Replicate = func(path string, file *journal.Writer) (session.Journal, error) { return st.Replicate(path, file) }
	}
	h, err := host.Open(cfg)
	if err != nil {
		r.t.Fatalf("open the host: %v", err)
	}
	r.h = h
	// Served as rein serve serves it: its timeouts, through its gate.
	r.srv = httptest.NewUnstartedServer(nil)
	r.srv.Listener.Close()
	r.srv.Config, r.conns = host.NewServer(h, token, ln.Addr().String(), r.opts.web).HTTPServer(ln, r.opts.limits)
	r.srv.Listener = r.conns
	r.srv.Start()
	r.c = client.New(r.srv.URL, token, nil)
}

// close stops the API and closes the host, as a clean shutdown does.
func (r *rig) close() {
	if r.srv != nil {
		r.srv.CloseClientConnections()
		r.srv.Close()
		r.srv = nil
	}
	if r.h != nil {
		if err := r.h.Close(); err != nil {
			r.t.Errorf("close the host: %v", err)
		}
		r.h = nil
	}
	if r.st != nil {
		r.st.Close()
		r.st = nil
	}
}

// restart closes the host and opens it again on the same root.
func (r *rig) restart() {
	r.t.Helper()
	r.close()
	r.open()
}

type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// gate holds the agent before it builds a request, while closed: the exchange's prompt is
// committed and no provider call has been made — the agent is starting.
type gate struct {
	mu      sync.Mutex
	held    chan struct{} // closed to let the agent go; nil when the gate is open
	arrived chan struct{} // closed when an agent reaches the closed gate
}

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held, g.arrived = make(chan struct{}), make(chan struct{})
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held != nil {
		close(g.held)
		g.held = nil
	}
}

func (g *gate) pass() {
	g.mu.Lock()
	held, arrived := g.held, g.arrived
	if held != nil {
		select {
		case <-arrived:
		default:
			close(arrived)
		}
	}
	g.mu.Unlock()
	if held != nil {
		<-held
	}
}

func (g *gate) reached() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.arrived
}

// gatedWire is the Anthropic client behind the gate: each request is built once the gate lets it.
type gatedWire struct {
	provider.Model
	gate *gate
}

func (w *gatedWire) Encode(req provider.Request) ([]byte, error) {
	w.gate.pass()
	return w.Model.Encode(req)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// create makes a conversation through the API.
func (r *rig) create(title string) string {
	r.t.Helper()
	v, _, err := r.c.Create(ctxT(r.t), client.NewOp(), title)
	if err != nil {
		r.t.Fatalf("create: %v", err)
	}
	return v.ID
}

// send sends text through the API.
func (r *rig) send(id, text string) api.SendResult {
	r.t.Helper()
	res, err := r.c.Send(ctxT(r.t), id, api.Message{Op: client.NewOp(), Text: text})
	if err != nil {
		r.t.Fatalf("send %q: %v", text, err)
	}
	return res
}

func (r *rig) stop(id string) api.StopResult {
	r.t.Helper()
	res, err := r.c.Stop(ctxT(r.t), id, 0)
	if err != nil {
		r.t.Fatalf("stop: %v", err)
	}
	return res
}

func (r *rig) get(id string) api.View {
	r.t.Helper()
	v, err := r.c.Get(ctxT(r.t), id)
	if err != nil {
		r.t.Fatalf("get %s: %v", id, err)
	}
	return v
}

// settle waits, without subscribing, until the conversation has no exchange running.
func (r *rig) settle(id string) {
	r.t.Helper()
	c, err := r.h.Get(id)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := c.Wait(ctxT(r.t)); err != nil {
		r.t.Fatalf("conversation %s did not settle: %v", id, err)
	}
}

// events subscribes to a conversation's events for the rest of the test.
func (r *rig) events(id string, after int64) *watch {
	ctx, cancel := context.WithCancel(context.Background())
	r.t.Cleanup(cancel)
	return &watch{t: r.t, s: r.c.Events(ctx, id, after), now: func() int64 { return r.get(id).State.Seq }}
}

// watch reads an events stream.
type watch struct {
	t    testing.TB
	s    *client.Stream
	now  func() int64 // the conversation's record number now
	seen []api.Event
}

// until reads events until pred holds for one, and returns it.
func (w *watch) until(what string, pred func(api.Event) bool) api.Event {
	w.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case e, ok := <-w.s.C:
			if !ok {
				w.t.Fatalf("waiting for %s: the stream ended: %v", what, w.s.Err())
			}
			w.seen = append(w.seen, e)
			if pred(e) {
				return e
			}
		case <-timeout:
			w.t.Fatalf("waiting for %s: nothing after %d events", what, len(w.seen))
		}
	}
}

// catchUp waits until the events read carry the state as of record seq.
func (w *watch) catchUp(seq int64) {
	w.t.Helper()
	for _, e := range w.seen {
		if e.Seq > 0 && e.State.Seq >= seq {
			return
		}
	}
	w.until(fmt.Sprintf("state as of record %d", seq), func(e api.Event) bool { return e.Seq > 0 && e.State.Seq >= seq })
}

// through waits until record seq itself has been read.
func (w *watch) through(seq int64) {
	w.t.Helper()
	for _, e := range w.seen {
		if e.Seq >= seq {
			return
		}
	}
	w.until(fmt.Sprintf("record %d", seq), func(e api.Event) bool { return e.Seq >= seq })
}

// record waits for a record of kind.
func (w *watch) record(kind record.Kind) api.Event {
	w.t.Helper()
	return w.until(string(kind), func(e api.Event) bool { return e.Kind == string(kind) })
}

// idle waits until the conversation is not working: for a record, written now or later, whose
// event says so. (An event's state is as of its record or later, so an event read late from an
// earlier part of the stream may carry an older state than the conversation has now.)
func (w *watch) idle() api.Event {
	w.t.Helper()
	mark := w.now()
	return w.until("not working", func(e api.Event) bool { return e.Seq >= mark && !e.State.Working })
}

// live waits for a live event of kind.
func (w *watch) live(kind string) api.Event {
	w.t.Helper()
	return w.until("live "+kind, func(e api.Event) bool { return e.Live != nil && e.Live.Kind == kind })
}

// records reads a record file back.
func records(t testing.TB, path string) []record.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		rec, err := record.DecodeWith(sc.Bytes(), int64(len(out)+1), journal.Blobs(fsys.OS{}, path))
		if err != nil {
			t.Fatalf("%s: record %d: %v", path, len(out)+1, err)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func (r *rig) path(id string) string {
	return filepath.Join(session.ProjectDir(r.root, r.ws), id, "record.jsonl")
}

func (r *rig) records(id string) []record.Record { return records(r.t, r.path(id)) }

// checkAll checks every record under the root.
func (r *rig) checkAll() {
	entries, err := session.List(r.root, r.ws)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, e := range entries {
		checkRecord(r.t, e.Path, true)
	}
}

// checkRecord replays a record and checks the host's promises over it: it is admissible; no
// submission is delivered twice, or after it was withdrawn or otherwise ended; no Stop is followed
// by a prompt carrying a submission accepted before it (a press acts on what was there when it
// arrived); and, when settled, every submission has ended and the log owes nothing.
func checkRecord(t testing.TB, path string, settled bool) {
	t.Helper()
	st, _, err := session.Replay(nil, path)
	if err != nil {
		t.Fatalf("%s is not admissible: %v", path, err)
	}
	recs := records(t, path)
	state := map[string]string{}
	accepted := map[string]int64{}
	delivered := map[string]int64{}
	var lastStop int64
	startStopped := map[string]int64{} // submissions taken up after a Stop pressed while they started
	deliver := func(seq int64, id string, prompt bool) {
		if id == "" {
			return
		}
		if s := state[id]; s != api.Accepted {
			t.Errorf("%s: record %d delivers %s, which is %q", path, seq, id, s)
		}
		if prev, ok := delivered[id]; ok {
			t.Errorf("%s: record %d delivers %s again (first at %d)", path, seq, id, prev)
		}
		if prompt && lastStop > 0 && accepted[id] < lastStop {
			// Only as the exchange whose start that Stop stopped: it must end cancelled.
			startStopped[id] = seq
		}
		delivered[id] = seq
		state[id] = api.Delivered
	}
	for _, rec := range recs {
		switch b := rec.Body.(type) {
		case *record.Submission:
			if b.State == api.Accepted {
				accepted[b.ID] = rec.Seq
			}
			if b.State == api.Withdrawn && state[b.ID] != api.Accepted {
				t.Errorf("%s: record %d withdraws %s, which is %q", path, rec.Seq, b.ID, state[b.ID])
			}
			if b.State == record.SubmissionHanded {
				break // handed to the running exchange: still accepted, as clients see it
			}
			state[b.ID] = string(b.State)
		case *record.UserPrompt:
			deliver(rec.Seq, b.Submission, true)
		case *record.Steering:
			deliver(rec.Seq, b.Submission, false)
		case *record.Stop:
			lastStop = rec.Seq
		}
	}
	for id, seq := range startStopped {
		if s := state[id]; s != api.Cancelled {
			t.Errorf("%s: record %d takes up %s, accepted before a Stop, which ended %q, not cancelled", path, seq, id, s)
		}
	}
	if !settled {
		return
	}
	for id, s := range state {
		if s == api.Accepted || s == api.Delivered {
			t.Errorf("%s: submission %s is still %s", path, id, s)
		}
	}
	if st.InFlight() || !st.IsReady() {
		t.Errorf("%s: the record ends unsettled: phase %s, in flight %v", path, st.Phase(), st.InFlight())
	}
}

// kinds lists the kinds of recs, leaving out the ones in skip.
func kinds(recs []record.Record, skip ...record.Kind) []string {
	var out []string
next:
	for _, r := range recs {
		for _, k := range skip {
			if r.Kind() == k {
				continue next
			}
		}
		out = append(out, string(r.Kind()))
	}
	return out
}

// submission returns the last lifecycle record of submission id.
func submission(recs []record.Record, id string) *record.Submission {
	var out *record.Submission
	for _, r := range recs {
		if s, ok := r.Body.(*record.Submission); ok && s.ID == id {
			out = s
		}
	}
	return out
}

func lastOf[T record.Payload](recs []record.Record) (T, bool) {
	var zero T
	for i := len(recs) - 1; i >= 0; i-- {
		if v, ok := recs[i].Body.(T); ok {
			return v, true
		}
	}
	return zero, false
}

// requestsWith counts the simulator's requests whose body contains s.
func (r *rig) requestsWith(s string) int {
	n := 0
	for _, q := range r.sim.Requests() {
		if strings.Contains(string(q.Body), s) {
			n++
		}
	}
	return n
}

func steps(ss ...string) string { return "[" + strings.Join(ss, ",") + "]" }

// slowText is a step that streams n words, each after delay ms, for conversation conv.
func slowText(conv string, n, delay int) string {
	words := make([]string, n)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	c := ""
	if conv != "" {
		c = fmt.Sprintf(`"conversation":%q,`, conv)
	}
	return fmt.Sprintf(`{%s"text":%q,"delay_ms":%d}`, c, strings.Join(words, " "), delay)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var _ = fold.Replied
