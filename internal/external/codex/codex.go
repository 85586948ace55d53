// Package codex runs a conversation's turns in Codex, through `codex app-server`: JSON-RPC 2.0
// over the program's standard input and output, one JSON message a line (protocol v2 of the
// Codex 0.169 releases; Known lists the series rein speaks).
//
// Each Turn starts its own app-server, the leader of a new process group, and ends it, tree and
// all, before it returns: initialize (answered with Codex's user agent, which names its version),
// the initialized notification, thread/start — or thread/resume with Turn.Resume — then
// turn/start with the prompt. The turn's notifications (items started and completed, agent
// message deltas, errors Codex will or will not retry) go to the Sink as they arrive, and
// turn/completed{status} ends the turn. Between turns nothing runs; the thread lives in Codex's
// own rollout files under CODEX_HOME, which thread/resume reads.
//
// A Stop (ctx ending) before turn/start is sent kills the app-server at once. After it, rein sends
// turn/interrupt. Codex refuses an interrupt ("no active turn to interrupt") until the turn has
// started — turn/start is answered before turn/started — so a refused interrupt is sent again
// when turn/started arrives, within StartWait of the Stop. Once Codex accepts it, the turn has
// external.InterruptGrace to end with turn/completed{interrupted}; either way the app-server is
// then ended, tree and all, because Codex leaves the interrupted command running (its unified
// exec sessions outlive the turn) and a later turn must not find it.
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
}

// New returns the Codex back-end.
func New(opts Options) external.Backend { return &backend{opts: opts} }

type backend struct {
	opts Options
	// Tests watch the Turn through these: the app-server's pid once started, and Codex's
	// refusals of an interrupt before its turn started.
	onStart   func(pid int)
	onRefusal func()
}

func (b *backend) Kind() string { return external.KindCodex }

// Close ends nothing: no app-server outlives the Turn that started it.
func (b *backend) Close() error { return nil }

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

// Turn runs one turn in a new app-server and ends it before returning (see the package doc).
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
	s, err := start(path, t.Cwd, t.Env)
	if err != nil {
		return failed(err)
	}
	if b.onStart != nil {
		b.onStart(s.pgid)
	}
	r := &run{b: b, s: s, t: t, sink: sink, ctx: ctx, approval: approval, sandbox: sandbox, session: t.Resume}
	res := r.do()
	if !r.killed {
		s.close(external.InterruptGrace)
	}
	return res
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

	nextID    int64
	turnStart string // the id of turn/start, once sent
	graceSet  bool   // the deadline is InterruptGrace after Codex accepted the interrupt
	version   string
	session   string // the thread, once it is known to hold the turn; t.Resume before
	tr        tracker

	killed    bool      // the app-server was killed by the Turn (a Stop past its grace)
	stopping  bool      // a Stop arrived
	stopAt    time.Time // when
	interrupt string    // the id of the turn/interrupt in flight, "" when none is
	accepted  bool      // Codex accepted an interrupt
	refused   bool      // Codex refused one before the turn started: send again on turn/started
	sinkErr   error     // the Sink refused an item: the turn is stopped and fails with it
}

func (r *run) id() json.RawMessage {
	r.nextID++
	return json.RawMessage(fmt.Sprint(r.nextID))
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
	if r.version, err = parseVersion(init.UserAgent); err != nil {
		return fmt.Errorf("read codex's version from its user agent: %w", err)
	}
	if err := known(r.version); err != nil {
		return err
	}
	if err := r.s.send(notification("initialized")); err != nil {
		return r.deadOr(err)
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
	if raw, err = r.call(method, params); err != nil {
		return err
	}
	var th struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := json.Unmarshal(raw, &th); err != nil || th.Thread.ID == "" {
		return fmt.Errorf("read codex's %s answer: no thread id in %.200s", method, raw)
	}
	r.tr.thread = th.Thread.ID
	if err := r.sink.Started(th.Thread.ID, r.version); err != nil {
		return fmt.Errorf("report codex's thread: %w", err)
	}
	turn := map[string]any{
		"threadId": th.Thread.ID,
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
	r.session = th.Thread.ID
	r.turnStart, _ = requestID(id)
	return nil
}
