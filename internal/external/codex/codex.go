// Package codex runs a conversation's turns in Codex, through `codex app-server`: JSON-RPC 2.0
// over the program's standard input and output, one JSON message a line (protocol v2 of the
// Codex 0.169 releases; Known lists the series rein speaks).
//
// A Turn runs in an app-server, the leader of its own process group: initialize (answered with
// Codex's user agent, which names its version; one rein does not know is refused), the
// initialized notification, thread/start — or thread/resume with Turn.Resume — then turn/start
// with the prompt. The turn's notifications (items started and completed, agent message deltas,
// errors Codex will or will not retry) go to the Sink as they arrive, and turn/completed{status}
// ends the turn. The thread lives in Codex's own rollout files under CODEX_HOME.
//
// The app-server of a completed turn is kept for the next turn of the same environment,
// directory, mode and model, which then needs only turn/start (about 60 ms a turn instead of
// about 600 ms on a loaded machine, BenchmarkTurnStart) and finds Codex's background command
// sessions as Codex left them; Close ends it, tree and all. Options.PerTurn starts one per turn
// instead. A stopped or failed turn always ends its app-server.
//
// A Stop (ctx ending) before turn/start is sent kills the app-server at once. After it, rein sends
// turn/interrupt. Codex refuses an interrupt ("no active turn to interrupt") until the turn has
// started — turn/start is answered before turn/started — so a refused interrupt is sent again
// when turn/started arrives, within StartWait of the Stop. Once Codex accepts it, the turn has
// external.InterruptGrace to end with turn/completed{interrupted}; either way the app-server is
// then ended, tree and all — gently (its input closed, which it takes as the end) when it ended
// the turn, else killed — because Codex leaves the interrupted command running (its unified exec
// sessions outlive the turn) and a later turn must not find it. Killing stops the whole tree
// first, then kills it, including the processes Codex runs in sessions of their own.
//
// Permission modes map onto Codex's approval policy and sandbox: ask → untrusted (Codex runs only
// the commands it trusts as reading, and asks about every other) in a workspace-write sandbox;
// workspace → never ask, workspace-write; full → never ask, danger-full-access; read-only →
// never ask, read-only. In ask, Codex's command and file-change approval requests go to
// Sink.Approve; one pending when the turn is stopped is answered cancel (a denial that also ends
// the turn), and declined otherwise.
package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/external"
)

// StartWait is how long after a Stop a refused interrupt waits for the turn to start, to be sent
// again, before the app-server is ended.
const StartWait = 5 * time.Second

// Options configure the Codex back-end.
type Options struct {
	// Path is the codex executable; "" looks "codex" up on PATH.
	Path string
	// PerTurn starts a new app-server for every turn, so none runs between turns. By default the
	// app-server of a completed turn is kept for the next (until Close), which saves starting
	// Codex and resuming the thread: about half a second a turn (BenchmarkTurnStart).
	PerTurn bool
}

// New returns the Codex back-end.
func New(opts Options) external.Backend { return &backend{opts: opts} }

type backend struct {
	opts Options

	mu   sync.Mutex
	idle *server // the app-server of the last completed turn, kept for the next
	gen  int     // how many times Close was called: a turn begun before a Close keeps nothing
	// Tests watch the Turn through these: the app-server's pid once started, and Codex's
	// refusals of an interrupt before its turn started.
	onStart   func(pid int)
	onRefusal func()
}

func (b *backend) Kind() string { return external.KindCodex }

func (b *backend) path() (string, error) {
	if b.opts.Path != "" {
		return b.opts.Path, nil
	}
	p, err := exec.LookPath("codex")
	if err != nil {
		return "", fmt.Errorf("find codex: %w; install it (npm install -g @openai/codex@%s) or name its path", err, Pin)
	}
	return p, nil
}

// Check runs codex --version and refuses a version whose protocol rein does not know.
func (b *backend) Check(ctx context.Context) (string, error) {
	path, err := b.path()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("run %s --version: %w", path, err)
	}
	v, err := parseVersion(string(out))
	if err != nil {
		return "", fmt.Errorf("read %s --version: %w", path, err)
	}
	return v, known(v)
}

// policy is Codex's approval policy and sandbox mode for one of rein's permission modes.
func policy(mode string) (approval, sandbox string, err error) {
	switch mode {
	case "ask":
		return "untrusted", "workspace-write", nil
	case "workspace", "":
		return "never", "workspace-write", nil
	case "full":
		return "never", "danger-full-access", nil
	case "read-only":
		return "never", "read-only", nil
	}
	return "", "", fmt.Errorf("unknown permission mode %q (the modes are read-only, ask, workspace, full)", mode)
}

// Turn runs one turn: in the app-server kept from the last turn when it suits this one, else in a
// new one (see the package doc).
func (b *backend) Turn(ctx context.Context, t external.Turn, sink external.Sink) external.Result {
	failed := func(err error) external.Result {
		return external.Result{Status: external.StatusFailed, Session: t.Resume, Err: err}
	}
	approval, sandbox, err := policy(t.Mode)
	if err != nil {
		return failed(err)
	}
	path, err := b.path()
	if err != nil {
		return failed(err)
	}
	if ctx.Err() != nil {
		return external.Result{Status: external.StatusInterrupted, Session: t.Resume}
	}
	key := keyOf(t)
	b.mu.Lock()
	gen := b.gen
	b.mu.Unlock()
	s := b.take(key)
	announced := "" // the thread Started has reported, so a turn put to a second app-server says it once
	for {
		fresh := s == nil
		if fresh {
			if s, err = start(path, t.Cwd, t.Env); err != nil {
				return failed(err)
			}
			s.key = key
			if b.onStart != nil {
				b.onStart(s.pgid)
			}
		}
		r := &run{b: b, s: s, t: t, sink: sink, ctx: ctx, approval: approval, sandbox: sandbox, session: t.Resume, announced: announced}
		res := r.do()
		announced = r.announced
		if !fresh && !r.reached && res.Status == external.StatusFailed && exited(s) {
			// The kept app-server had died while it waited: the turn never reached it (turn/start
			// was not answered), so it is put to a new one.
			s.kill(nil)
			s = nil
			continue
		}
		switch {
		case r.killed:
		case res.Status == external.StatusCompleted && !b.opts.PerTurn:
			s.thread = res.Session
			b.put(s, gen)
		default:
			// A stopped or failed turn ends its app-server: Codex leaves an interrupted
			// command running, and the next turn must not find it.
			s.close(external.InterruptGrace)
		}
		return res
	}
}

// keyOf says what an app-server kept between turns must share with the next turn to serve it:
// its environment and directory, and the mode and model its thread was loaded with (Codex keeps
// a loaded thread's settings when thread/resume names others).
func keyOf(t external.Turn) string {
	return fmt.Sprintf("%q %q %q %q", t.Env, t.Cwd, t.Mode, t.Model)
}

// take returns the kept app-server when it is alive and its key is key, emptied of what it wrote
// while it waited; another kept one is ended first.
func (b *backend) take(key string) *server {
	b.mu.Lock()
	s := b.idle
	b.idle = nil
	b.mu.Unlock()
	if s == nil {
		return nil
	}
	if s.key != key || exited(s) {
		s.close(external.InterruptGrace)
		return nil
	}
	for {
		select {
		case _, ok := <-s.msgs:
			if !ok {
				s.kill(nil)
				return nil
			}
		case <-s.bad:
		default:
			return s
		}
	}
}

// put keeps s, of a turn begun in generation gen, for the next turn, ending the one kept before,
// if any. A turn that was running when Close came ends its app-server as it returns instead.
func (b *backend) put(s *server, gen int) {
	b.mu.Lock()
	old := b.idle
	if b.gen != gen {
		old, s = s, old
	}
	b.idle = s
	b.mu.Unlock()
	if old != nil {
		old.close(external.InterruptGrace)
	}
}

// Close ends the app-server kept between turns, tree and all.
func (b *backend) Close() error {
	b.mu.Lock()
	s := b.idle
	b.idle = nil
	b.gen++
	b.mu.Unlock()
	if s != nil {
		s.close(external.InterruptGrace)
	}
	return nil
}

func exited(s *server) bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// run is one Turn's conversation with its app-server.
type run struct {
	b        *backend
	s        *server
	t        external.Turn
	sink     external.Sink
	ctx      context.Context
	approval string
	sandbox  string

	turnStart string // the id of turn/start, once sent
	announced string // the thread Started reported
	reached   bool   // Codex answered turn/start
	graceSet  bool   // the deadline is InterruptGrace after Codex accepted the interrupt
	version   string
	session   string // the thread, once it is known to hold the turn; t.Resume before
	tr        tracker
	seen      *marks // the app-server's tree as read while the turn runs (treeEvery), for its kill

	killed    bool   // the app-server was killed by the Turn (a Stop past its grace)
	stopping  bool   // a Stop arrived
	resent    int    // interrupts sent again at once, Codex having refused one after its turn started
	interrupt string // the id of the turn/interrupt in flight, "" when none is
	accepted  bool   // Codex accepted an interrupt
	refused   bool   // Codex refused one before the turn started: send again on turn/started
	sinkErr   error  // the Sink refused an item: the turn is stopped and fails with it
}

func (r *run) id() json.RawMessage {
	r.s.nextID++
	return json.RawMessage(fmt.Sprint(r.s.nextID))
}

// call sends a request before the turn and waits for its answer. A Stop meanwhile kills the
// app-server at once (errStopped); its death is said as it died.
func (r *run) call(method string, params any) (json.RawMessage, error) {
	id := r.id()
	key, _ := requestID(id)
	if err := r.s.send(message{ID: id, Method: method, Params: mustJSON(params)}); err != nil {
		return nil, r.deadOr(err)
	}
	for {
		select {
		case <-r.ctx.Done():
			return nil, errStopped
		case err := <-r.s.bad:
			if err := r.say(external.Item{Kind: external.ItemError, Text: "codex app-server: " + err.Error()}); err != nil {
				return nil, err
			}
		case m, ok := <-r.s.msgs:
			if !ok {
				return nil, r.s.died()
			}
			switch m.shape() {
			case shapeResponse:
				if k, _ := requestID(m.ID); k == key {
					if m.Error != nil {
						return nil, fmt.Errorf("codex refused %s: %w", method, m.Error)
					}
					return m.Result, nil
				}
			case shapeRequest:
				if err := r.answer(m); err != nil {
					return nil, err
				}
			}
		}
	}
}

var errStopped = errors.New("stopped")

// deadOr says err, or how the app-server died when that is why err happened.
func (r *run) deadOr(err error) error {
	select {
	case <-r.s.exited:
		return r.s.died()
	case <-time.After(100 * time.Millisecond):
		return err
	}
}

func (r *run) do() external.Result {
	res := external.Result{Session: r.t.Resume}
	if err := r.begin(); err != nil {
		if errors.Is(err, errStopped) {
			r.s.kill(nil)
			r.killed = true
			res.Status = external.StatusInterrupted
			res.Session = r.session
			return res
		}
		res.Status, res.Err = external.StatusFailed, err
		res.Session = r.session
		return res
	}
	return r.follow()
}

// begin initialises the app-server, starts or resumes the thread and starts the turn.
func (r *run) begin() error {
	if r.s.version == "" {
		if err := r.initialize(); err != nil {
			return err
		}
	}
	r.version = r.s.version
	threadID, err := r.thread()
	if err != nil {
		return err
	}
	r.tr.thread = threadID
	if r.announced != threadID {
		if err := r.sink.Started(threadID, r.version); err != nil {
			return fmt.Errorf("report codex's thread: %w", err)
		}
		r.announced = threadID
	}
	turn := map[string]any{
		"threadId": threadID,
		"input":    []map[string]any{{"type": "text", "text": r.t.Prompt}},
	}
	if r.t.Model != "" {
		turn["model"] = r.t.Model
	}
	if r.ctx.Err() != nil {
		return errStopped
	}
	id := r.id()
	if err := r.s.send(message{ID: id, Method: "turn/start", Params: mustJSON(turn)}); err != nil {
		return r.deadOr(err)
	}
	// From here the thread holds the prompt, so the next turn resumes it.
	r.session = threadID
	r.turnStart, _ = requestID(id)
	return nil
}

// initialize opens the conversation with a new app-server and refuses a version rein does not
// know.
func (r *run) initialize() error {
	raw, err := r.call("initialize", map[string]any{
		"clientInfo": map[string]string{"name": "rein", "title": "rein", "version": "0"},
	})
	if err != nil {
		return err
	}
	var init struct {
		UserAgent string `json:"userAgent"`
	}
	if err := json.Unmarshal(raw, &init); err != nil {
		return fmt.Errorf("read codex's initialize answer: %w", err)
	}
	v, err := parseVersion(init.UserAgent)
	if err != nil {
		return fmt.Errorf("read codex's version from its user agent: %w", err)
	}
	if err := known(v); err != nil {
		return err
	}
	if err := r.s.send(notification("initialized")); err != nil {
		return r.deadOr(err)
	}
	r.s.version = v
	return nil
}

// thread starts the turn's thread, or resumes Turn.Resume, unless the app-server holds it loaded
// already, and returns its id.
func (r *run) thread() (string, error) {
	if r.t.Resume != "" && r.t.Resume == r.s.thread {
		return r.s.thread, nil
	}
	params := map[string]any{"approvalPolicy": r.approval, "sandbox": r.sandbox}
	if r.t.Cwd != "" {
		params["cwd"] = r.t.Cwd
	}
	if r.t.Model != "" {
		params["model"] = r.t.Model
	}
	method := "thread/start"
	if r.t.Resume != "" {
		method = "thread/resume"
		params["threadId"] = r.t.Resume
		params["excludeTurns"] = true
	}
	raw, err := r.call(method, params)
	if err != nil && method == "thread/resume" && strings.Contains(err.Error(), "no rollout found") {
		return "", fmt.Errorf("%w: %w", external.ErrSessionGone, err)
	}
	if err != nil {
		return "", err
	}
	var th struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := json.Unmarshal(raw, &th); err != nil || th.Thread.ID == "" {
		return "", fmt.Errorf("read codex's %s answer: no thread id in %.200s", method, raw)
	}
	return th.Thread.ID, nil
}
