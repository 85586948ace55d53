// Package agent is rein's loop: it takes up a prompt, deliberates (request, stream, admit, commit,
// run tools, commit results) until the model replies without a tool call, and quiesces however the
// exchange ended, so that a fresh prompt is always admissible afterwards (DESIGN §7).
//
// Stop is the cancellation of the exchange's context: every wait (the stream, a retry sleep, a
// tool's process, an approval) returns at once, and TakeUp then records only what the log still
// owes — an answer to every owed call, truthful about whether it started — and a quiesced event.
package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/checkpoint"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/hook"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
)

// Config is what an Agent is built from. cmd/rein wires it.
type Config struct {
	Session *session.Session
	// Client is the provider's client: the loop encodes each request with it, validates the
	// bytes, records them, and sends exactly those bytes through the retry policy.
	Client   provider.Model
	Provider string // the provider's name, for events
	Model    string
	// BaseURL and PermissionMode are recorded with the session's start and each resume, so a
	// resume goes back to the same server under the same mode.
	BaseURL        string
	PermissionMode string
	MaxTokens      int
	// Thinking is the extended-thinking budget in tokens (0: off) and Effort the reasoning
	// effort ("": the model's default), sent where the provider takes them and recorded with the
	// session's start and each resume, so that a resume keeps them.
	Thinking int
	Effort   string
	// WebSearch offers the provider's own web search tool where it has one (--web-search).
	WebSearch bool
	System    string
	Runner    *tool.Runner
	// Doors are tools that act on the session itself (context, transcript, agents); they are
	// offered after the runner's tools, judged by the runner's policy and run by the loop.
	Doors    []Door
	Retry    provider.Policy
	MaxTurns int   // per exchange; default 200
	Window   int64 // the model's context window in tokens; 0 disables pressure
	Nudges   int   // repairs per exchange before it ends; default 3
	Now      func() time.Time
	// AwaitChildren keeps an exchange open after the model's reply while child agents it started
	// still work: their replies are taken up as they arrive and the model continues, and the
	// exchange ends once none is running (rein run; a child agent). Without it the exchange ends
	// at the reply and a later child's reply waits in the inbox for the owner to revive the agent
	// (the host: OnArrival, BeginArrivals).
	AwaitChildren bool
	// Sandbox says the OS sandbox the tools' commands run under, recorded with the session's
	// start and each resume ("" records nothing).
	Sandbox string
	// Trace, when set, is told each Mark the loop passes, as it passes it (rein bench turns).
	Trace func(Mark)
	// Tools names the tool set the model is offered (package toolset), recorded with the
	// session's start and each resume.
	Tools string
	// Checkpoints is the workspace's shadow repository: with it, the loop snapshots the
	// workspace when a prompt is taken up and after each tool batch that could change files
	// (checkpoint.go). Nil takes no checkpoints.
	Checkpoints *checkpoint.Repo
	// Hooks are the person's hooks (package hook); nil runs none. New binds them to the session
	// and makes the runner's gate of their pre_tool hooks.
	Hooks *hook.Set
	// NoHold answers a held call denied, with the reason, instead of parking: an agent nobody can
	// release (a child agent, whose parent waits for its reply) never parks.
	NoHold bool
	// External, when set, runs each exchange's turn in another agent program instead of the
	// provider loop (external.go).
	External *External
}

// Door is a tool that reads or edits the session it runs in.
type Door interface {
	Spec() provider.Tool
	// Run answers a call. It may return record payloads to append right after the tool batch's
	// results (an eviction), which the fold judges like any other.
	Run(ctx context.Context, a *Agent, turn int64, call tool.Call) (tool.Result, []record.Payload)
}

// Agent runs exchanges on one session. TakeUp is not reentrant: one exchange at a time.
type Agent struct {
	cfg  Config
	sess *session.Session
	// validator judges every request before it is sent, exactly as the client's Validate does;
	// it is the client's incremental validator where it has one, which keeps the last request
	// and parses only what the next adds (provider.Incremental).
	validator provider.Validator
	// memo keeps the conversation's message encodings from one request to the next, so a request
	// encodes only what changed (provider.Memo).
	memo  *provider.Memo
	sent  []byte    // the last request's body, which recycle hands to memo once a later one is judged
	hooks *hook.Set // cfg.Hooks bound to the session, or nil

	mu       sync.Mutex
	pending  []Steer   // steering waiting for the next turn boundary
	refused  []Refusal // a person's steering refused at a boundary, for the Outcome
	reminded bool      // a soft-line reminder was given in this excursion
	// toolBytes is the size of the tool definitions every request carries, measured once.
	toolBytes int64
	// preStarted is the call whose tool_started was committed with its assistant message.
	preStarted string
	// edited is the context as the running tool batch's evictions will leave it once its results
	// are recorded, or nil when the batch has made none. The context door judges each eviction
	// against it, in the order the fold will apply them.
	edited *fold.State

	inbox     []arrival     // children's replies waiting for a turn boundary or a revival
	onArrival func()        // the owner's revival hook (OnArrival)
	woke      chan struct{} // closed at the next arrival or change in the children (wakeup)

	snap chan snapResult // the snapshot running in the background, or nil (checkpoint.go)
}

// New returns an agent for cfg.
func New(cfg Config) *Agent {
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = 200
	}
	if cfg.Nudges <= 0 {
		cfg.Nudges = 3
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &Agent{cfg: cfg, sess: cfg.Session, validator: provider.ValidatorFor(cfg.Client), memo: &provider.Memo{}}
	if cfg.Hooks != nil && len(cfg.Hooks.Hooks) > 0 {
		a.hooks = cfg.Hooks.Bind(a.sess.ID(), func() int64 { return a.sess.Snapshot().Newest() })
		if cfg.Runner != nil && a.hooks.Has(record.HookPreTool) {
			r := *cfg.Runner
			r.Gate = a.hooks
			a.cfg.Runner = &r
		}
	}
	return a
}

// Close releases what the agent's tools hold that ends with it (tool.Runner.Close: the bash
// tool's spare shell), when the agent is put away. Its session is the caller's to close.
func (a *Agent) Close() error {
	if a.cfg.Runner == nil {
		return nil
	}
	return a.cfg.Runner.Close()
}

// Session returns the session the agent writes.
func (a *Agent) Session() *session.Session { return a.sess }

// Outcome is how an exchange ended.
type Outcome struct {
	Reason string // fold.Replied, Cancelled, Aborted, Limit, or Held (not quiesced: parked)
	Err    error  // the error behind Aborted
	// Withdrawn is steering that was still waiting when the exchange ended; it was not delivered.
	Withdrawn []Steer
	// Refused is a person's steering (Say) refused where it would have been delivered, as a
	// prompt would be: by a prompt hook, or as too large for the window.
	Refused []Refusal
}

// Refusal is a person's line that was not delivered, and why.
type Refusal struct {
	Text string
	Why  string
}

// Prompt is what a person sends.
type Prompt struct {
	Text        string
	Attachments []record.Attachment
	Submission  string
}

// Steer is a line for the running exchange, typed while the agent worked. (A host's messages are
// not queued here: the host hands them to the exchange in the record, and boundary delivers what
// the fold says was handed.)
type Steer struct {
	Text string
	// Person: a person's line (Say), which the prompt hooks and the window judge as a prompt.
	Person bool
}

// Steer queues a line to be delivered at the next turn boundary of the running exchange (a parent
// agent's to its child: the model's, which no prompt hook judges).
func (a *Agent) Steer(text string) {
	a.mu.Lock()
	a.pending = append(a.pending, Steer{Text: text})
	a.mu.Unlock()
}

// Say queues a person's line to be delivered at the next turn boundary of the running exchange,
// judged there as a prompt is: one refused comes back in the Outcome's Refused.
func (a *Agent) Say(text string) {
	a.mu.Lock()
	a.pending = append(a.pending, Steer{Text: text, Person: true})
	a.mu.Unlock()
}

// takeRefused returns the person's lines refused since it was last called.
func (a *Agent) takeRefused() []Refusal { return drain(&a.mu, &a.refused) }

func (a *Agent) takePending() []Steer { return drain(&a.mu, &a.pending) }

// drain takes what *s holds, under mu, leaving it empty.
func drain[T any](mu *sync.Mutex, s *[]T) []T {
	mu.Lock()
	defer mu.Unlock()
	out := *s
	*s = nil
	return out
}

// Settle quiesces a session left in flight by a crash (reason crashed) and records that it was
// resumed. It is what a resume does before accepting anything.
func (a *Agent) Settle(cwd, version string) error {
	st := a.sess.Snapshot()
	if (st.InFlight() || !st.IsReady()) && !st.Parked() { // a held window stays held
		if err := a.quiesce(fold.Crashed); err != nil {
			return err
		}
	}
	if st.Meta().Session == "" {
		// The record is empty (a crash right after it was created): start it now.
		return a.sess.Commit(&record.SessionStarted{Session: a.sess.ID(), Provider: a.cfg.Provider, Model: a.cfg.Model, ContextWindow: a.cfg.Window, Cwd: cwd, Version: version,
			BaseURL: a.cfg.BaseURL, PermissionMode: a.cfg.PermissionMode, Thinking: a.cfg.Thinking, Effort: a.cfg.Effort, Sandbox: a.cfg.Sandbox, Tools: a.cfg.Tools, WebSearch: a.cfg.WebSearch})
	}
	return a.sess.Commit(&record.SessionResumed{Provider: a.cfg.Provider, Model: a.cfg.Model, ContextWindow: a.cfg.Window, Cwd: cwd, Version: version,
		BaseURL: a.cfg.BaseURL, PermissionMode: a.cfg.PermissionMode, Thinking: a.cfg.Thinking, Effort: a.cfg.Effort, Sandbox: a.cfg.Sandbox, Tools: a.cfg.Tools, WebSearch: a.cfg.WebSearch})
}

// TakeUp commits a prompt and runs the exchange it draws. It never returns until a fresh prompt
// is admissible, however the exchange ended: a reply, a Stop (ctx cancelled), a provider error,
// a panic, or the turn limit.
func (a *Agent) TakeUp(ctx context.Context, p Prompt) Outcome {
	if err := a.Begin(p); err != nil {
		return Outcome{Reason: fold.Aborted, Err: err}
	}
	return a.Continue(ctx)
}

// Begin commits a prompt (after settling anything a previous exchange left owed, and the system
// prompt if it changed): the exchange is taken up from here. A host calls it under its
// conversation's lock, so a message is either still withdrawable or delivered, never between.
// Continue must follow.
func (a *Agent) Begin(p Prompt) error {
	if err := a.settle(); err != nil {
		return err
	}
	w := a.window()
	before, after, err := a.judge(p.Text, a.room(w), w)
	if err != nil {
		if len(before) > 0 {
			if err := a.sess.Commit(before...); err != nil {
				return err
			}
		}
		return err
	}
	turn := a.sess.Snapshot().Next()
	ps := append(before, &record.UserPrompt{Turn: turn, Text: p.Text, Attachments: p.Attachments, Submission: p.Submission})
	if err := a.sess.Append(append(ps, after...)...); err != nil {
		return err
	}
	// The workspace as the person hands it over, their own edits included: taken beside the
	// first request.
	return a.startSnapshot(turn)
}

// settle makes a fresh prompt admissible before an exchange is taken up: it quiesces what a
// previous exchange left owed or in flight, and records the system prompt if it changed.
func (a *Agent) settle() error {
	st := a.sess.Snapshot()
	if !st.IsReady() || st.InFlight() {
		if err := a.quiesce(fold.Aborted); err != nil {
			return err
		}
	}
	if st.System() != a.cfg.System {
		return a.sess.Append(&record.System{Text: a.cfg.System})
	}
	return nil
}

// Continue runs the exchange a Begin took up. It never returns until a fresh prompt is
// admissible, however the exchange ended: a reply, a Stop (ctx cancelled), a provider error, a
// panic, or the turn limit.
func (a *Agent) Continue(ctx context.Context) Outcome {
	if a.cfg.External != nil {
		return a.exchange(func() (string, error) { return a.continueExternal(ctx) })
	}
	return a.exchange(func() (string, error) { return a.deliberate(ctx) })
}

// exchange runs body, the rest of an exchange, and quiesces however it ended, unless it parked on
// a held call.
func (a *Agent) exchange(body func() (string, error)) (out Outcome) {
	defer func() {
		if r := recover(); r != nil {
			out = Outcome{Reason: fold.Aborted, Err: fmt.Errorf("the loop panicked: %v\n%s", r, debug.Stack())}
			_ = a.sess.Append(&record.Failure{Message: fmt.Sprintf("the loop panicked: %v", r)})
		}
		out.Refused = a.takeRefused()
		if out.Reason == Held && a.sess.Snapshot().Parked() {
			out.Withdrawn = a.takePending()
			return
		}
		if err := a.quiesce(out.Reason); err != nil && out.Err == nil {
			out.Err = err
		}
		// No snapshot outlives the exchange that started it (it is recorded after the quiesce,
		// so that a Stop settles the log without waiting for it).
		if err := a.settleSnapshot(); err != nil && out.Err == nil {
			out.Err = err
		}
		out.Withdrawn = a.takePending()
		// A resting conversation keeps no spare body (recycle).
		a.memo.Recycle(nil)
		a.sent = nil
		if !a.sess.Snapshot().IsReady() && out.Err == nil {
			out.Err = errors.New("the exchange ended with tool results still owed (a harness bug)")
		}
	}()
	reason, err := body()
	return Outcome{Reason: reason, Err: err}
}

// quiesce records what the log still owes, then the quiesced event.
func (a *Agent) quiesce(reason string) error {
	var ps []record.Payload
	var answered []string
	if plan := a.sess.Snapshot().QuiescePlan(reason); plan != nil {
		ps = append(ps, plan)
		for _, r := range plan.Results {
			answered = append(answered, r.CallID)
		}
	}
	ps = append(ps, &record.Quiesced{Reason: reason, Answered: answered})
	return a.sess.Commit(ps...)
}

func (a *Agent) deliberate(ctx context.Context) (string, error) {
	nudges, continued := 0, 0
	retriedContext := false
	for turns := 0; ; turns++ {
		if ctx.Err() != nil {
			return fold.Cancelled, nil
		}
		if turns >= a.cfg.MaxTurns {
			_ = a.sess.Append(&record.Failure{Message: fmt.Sprintf("the exchange reached its limit of %d turns", a.cfg.MaxTurns)})
			return fold.Limit, nil
		}
		if err := a.boundary(); err != nil {
			return fold.Aborted, err
		}
		reply, err := a.request(ctx, turns)
		if err == nil {
			// The snapshot that ran beside the request is recorded before the reply, so before
			// the reply's tools run: checkpoints keep turn order.
			if err := a.settleSnapshot(); err != nil {
				return fold.Aborted, err
			}
		}
		if err != nil {
			var pe *provider.Error
			if errors.As(err, &pe) && pe.Class == provider.Cancelled {
				if err := a.commitStopped(reply); err != nil {
					return fold.Aborted, err
				}
				return fold.Cancelled, nil
			}
			if errors.As(err, &pe) && pe.Class == provider.ContextLength && !retriedContext {
				retriedContext = true
				if ok, ferr := a.forceEvict(pe); ferr != nil {
					return fold.Aborted, ferr
				} else if ok {
					turns--
					continue
				}
			}
			return fold.Aborted, err
		}
		retriedContext = false // the retry is per request: a later turn may need its own
		if ctx.Err() != nil && len(reply.Parts) == 0 {
			return fold.Cancelled, nil
		}
		verdict, calls, err := a.commitReply(reply, false)
		if err != nil {
			return fold.Aborted, err
		}
		if verdict == fold.Admitted && len(calls) == 0 && reply.StopReason == provider.StopMaxTokens {
			// Text cut off at the output limit (perhaps with its tool call dropped) is not a
			// reply the model finished: it is nudged like a truncated one (DESIGN §7).
			verdict = fold.Truncated
		}
		switch verdict {
		case fold.Empty, fold.Truncated:
			nudges++
			if nudges > a.cfg.Nudges {
				msg := fmt.Sprintf("the model gave %d empty or truncated replies in one exchange; the exchange ends here", nudges)
				_ = a.sess.Append(&record.Failure{Message: msg})
				return fold.Aborted, errors.New(msg)
			}
			why := "empty"
			text := "[rein: your last reply was empty. Continue with the task, or say that you are done.]"
			if verdict == fold.Truncated {
				why = "truncated"
				text = "[rein: your last reply was cut off at the output limit. Continue where you stopped, in smaller steps.]"
			}
			if err := a.sess.Append(&record.Nudge{Reason: why, Count: nudges}, &record.Steering{Text: text, Source: "nudge"}); err != nil {
				return fold.Aborted, err
			}
			continue
		}
		if len(calls) == 0 {
			more, err := a.await(ctx)
			switch {
			case err != nil:
				return fold.Aborted, err
			case more:
				continue
			case ctx.Err() != nil:
				return fold.Cancelled, nil
			}
			if goOn, err := a.stopHooks(ctx, &continued); err != nil {
				return fold.Aborted, err
			} else if goOn {
				continue
			}
			return fold.Replied, nil
		}
		turn := a.sess.Snapshot().Newest()
		err = a.runBatch(ctx, calls)
		if a.mayWrite(calls) {
			// What the batch did to the files, taken beside the next request (even when the
			// batch was cut short: what ran may have changed files).
			if serr := a.startSnapshot(turn); serr != nil && err == nil {
				err = serr
			}
		}
		if err != nil {
			if errors.Is(err, errHeld) {
				return Held, nil
			}
			return fold.Aborted, err
		}
		if ctx.Err() != nil {
			return fold.Cancelled, nil
		}
	}
}

// boundary delivers the host's messages handed to the exchange and queued steering, then the
// children's replies waiting in the inbox (each an import: a turn of its own, in the harness's
// voice), and weighs the context, at a turn boundary. What the host handed is read from the state
// at the writer (fold.DeliveryPlan), so a Stop that withdraws it and this delivery cannot both
// happen.
func (a *Agent) boundary() error {
	if ph := a.sess.Snapshot().Phase(); ph == fold.AwaitingAssistantAfterToolResults || ph == fold.AwaitingAssistantAfterUser {
		if err := a.deliverHanded(); err != nil {
			return err
		}
		for _, t := range a.takePending() {
			if err := a.steer(t); err != nil {
				return err
			}
		}
		if xs := a.takeArrivals(); len(xs) > 0 {
			if err := a.sess.Append(imports(xs, a.sess.Snapshot().Next())...); err != nil {
				return err
			}
		}
	}
	if r := a.cfg.Runner; r != nil && r.Refresh != nil {
		if reg, ps := r.Refresh(); reg != nil {
			r.Tools, a.toolBytes = reg, 0
			if err := a.sess.Append(ps...); err != nil {
				return err
			}
		}
	}
	return a.weigh()
}

// request builds, validates and streams one request, with retries.
func (a *Agent) request(ctx context.Context, turns int) (provider.Reply, error) {
	st := a.sess.Snapshot()
	limit := OutputLimit(a.cfg.MaxTokens, a.window())
	req := provider.Request{Model: a.cfg.Model, System: st.System(), Messages: st.Context(), Tools: a.specs(),
		MaxTokens: limit, Thinking: thinkingBudget(a.cfg.Thinking, limit), Effort: a.cfg.Effort, WebSearch: a.cfg.WebSearch,
		Memo: a.memo}
	a.mark(MarkEncode)
	body, err := a.cfg.Client.Encode(req)
	if err != nil {
		return provider.Reply{}, fmt.Errorf("encode the request: %w", err)
	}
	a.mark(MarkValidate)
	if v := a.validator.Validate(body); v != nil {
		path := a.saveRequest(body)
		msg := fmt.Sprintf("rein built a request the provider would refuse (%s: %s); it was not sent and is saved at %s — this is a bug in rein", v.Rule, v.Error(), path)
		_ = a.sess.Append(&record.Failure{Message: msg})
		return provider.Reply{}, errors.New(msg)
	}
	a.mark(MarkValidated)
	a.recycle(body)
	attempt := 1
	if err := a.sess.Append(&record.TurnStarted{Attempt: attempt}); err != nil {
		return provider.Reply{}, err
	}
	a.mark(MarkSend)
	reply, err := a.cfg.Retry.Send(ctx, a.cfg.Client, body, a.publishStream, func(w provider.Wait) {
		_ = a.sess.Append(
			&record.ProviderError{Class: string(w.Err.Class), Status: w.Err.Status, Type: w.Err.Type, Message: w.Err.Message, Attempt: w.Attempt},
			&record.RetryScheduled{Attempt: w.Attempt, DelayMs: w.Delay.Milliseconds(), Class: string(w.Err.Class)},
		)
		_ = a.sess.Sync()
		a.sess.Publish(session.Live{Kind: "status", Text: fmt.Sprintf("%s; retrying in %s", w.Err.Error(), w.Delay.Round(time.Millisecond))})
	})
	a.mark(MarkReceived)
	if err != nil {
		var pe *provider.Error
		if errors.As(err, &pe) && pe.Class != provider.Cancelled {
			_ = a.sess.Append(&record.ProviderError{Class: string(pe.Class), Status: pe.Status, Type: pe.Type, Message: pe.Message})
		}
		if errors.As(err, &pe) && pe.Class == provider.InvalidRequest {
			path := a.saveRequest(body)
			err = fmt.Errorf("%w (the request passed rein's validator, so this is reported as a harness bug; it is saved at %s)", err, path)
		}
	}
	return reply, err
}

// recycle gives the memo the body the last request went out in, to write a later one over, now
// that body has passed the validator: the validator and the memo hold body and not it, and the
// client's Send, which returned, reads a body only until it returns (a BodyReleaser; with any
// other client nothing is recycled).
func (a *Agent) recycle(body []byte) {
	if _, ok := a.cfg.Client.(provider.BodyReleaser); !ok {
		return
	}
	a.memo.Recycle(a.sent)
	a.sent = body
}

func (a *Agent) publishStream(e provider.Event) {
	switch e.Type {
	case provider.TextDelta:
		a.sess.Publish(session.Live{Kind: "text", Text: e.Text})
	case provider.ThinkingDelta:
		a.sess.Publish(session.Live{Kind: "thinking", Text: e.Text})
	case provider.ToolCallStart:
		a.sess.Publish(session.Live{Kind: "tool_call", CallID: e.CallID, Name: e.Name})
	case provider.ToolArgsDelta:
		a.sess.Publish(session.Live{Kind: "tool_args", CallID: e.CallID, Text: e.Text})
	case provider.Restart:
		a.sess.Publish(session.Live{Kind: "restart"})
	}
}

func (a *Agent) saveRequest(body []byte) string {
	path := filepath.Join(filepath.Dir(a.sess.Path()), fmt.Sprintf("request-%d.json", a.cfg.Now().UnixMilli()))
	// The request is built from the record, redacted already; this is the net under that.
	if err := os.WriteFile(path, []byte(a.sess.Redact(string(body))), 0o600); err != nil {
		return "(could not be saved: " + err.Error() + ")"
	}
	return path
}

func (a *Agent) specs() []provider.Tool {
	var out []provider.Tool
	if a.cfg.Runner != nil && a.cfg.Runner.Tools != nil {
		out = append(out, a.cfg.Runner.Tools.Specs()...)
	}
	for _, d := range a.cfg.Doors {
		out = append(out, d.Spec())
	}
	return out
}

// commitStopped commits what a stream cut by Stop had said (DESIGN §6.7).
func (a *Agent) commitStopped(reply provider.Reply) error {
	_, _, err := a.commitReply(reply, true)
	return err
}

// commitReply admits a reply and commits it with its repairs. It returns the verdict and the
// tool calls the committed message makes.
func (a *Agent) commitReply(reply provider.Reply, stopped bool) (fold.Verdict, []tool.Call, error) {
	st := a.sess.Snapshot()
	turn := st.Next()
	parts, repairs, verdict := st.Admit(turn, fold.Draft{Parts: reply.Parts, Incomplete: reply.Incomplete, StopReason: reply.StopReason, Stopped: stopped})
	if verdict == fold.Nothing {
		return verdict, nil, nil
	}
	var ps []record.Payload
	for _, r := range repairs {
		ps = append(ps, &record.Repaired{Turn: turn, What: r.What, Original: r.Original})
	}
	stop := reply.StopReason
	if stopped {
		stop = provider.StopCancelled
	}
	model := reply.Model
	if model == "" {
		model = a.cfg.Model
	}
	ps = append(ps, &record.AssistantMessage{Turn: turn, Parts: parts, StopReason: stop, Model: model, Usage: reply.Usage})
	var calls []tool.Call
	for _, p := range parts {
		if p.Type == record.PartToolCall {
			calls = append(calls, tool.Call{ID: p.CallID, Name: p.Name, Args: p.Args})
		}
	}
	// The first call's tool_started goes out with the message that makes it: one fsync for both,
	// and it is durable before the call runs, as quiesce needs (DESIGN §3.3, §7).
	a.preStarted = ""
	if len(calls) > 0 && !stopped {
		ps = append(ps, &record.ToolStarted{CallID: calls[0].ID, Name: calls[0].Name})
		a.preStarted = calls[0].ID
	}
	a.mark(MarkCommit)
	if err := a.sess.Commit(ps...); err != nil {
		return verdict, nil, err
	}
	a.mark(MarkCommitted)
	return verdict, calls, nil
}
