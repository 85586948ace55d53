package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/console"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/hook"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool/shell"
	"github.com/spf13/cobra"
)

type runFlags struct {
	providerFlags
	cwd         string
	asJSON      bool
	resume      string
	maxTurns    int
	permission  string
	allow       []string
	deny        []string
	maxTokens   int
	children    childFlags
	sandbox     sandboxFlags
	checkpoints ckptFlags
	prompt      string // -p
	trace       string // --trace-turns (hidden; rein bench turns)
	cpuProfile  string // --cpu-profile (hidden; rein bench turns --cpu-profile)
	hooks       *hook.Set
	stopHeld    bool // resume --stop: settle a held session instead of releasing it
	web         webFlags
	// changed says whether the person set a flag on the command line (not the config file).
	changed func(name string) bool
}

// set reports whether the person gave the flag name on the command line.
func (f runFlags) set(name string) bool { return f.changed != nil && f.changed(name) }

func (f *runFlags) register(cmd *cobra.Command) {
	f.providerFlags.register(cmd.Flags())
	cmd.Flags().StringVar(&f.cwd, "cwd", "", "the workspace the agent works in (default: the current directory)")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print one JSON object per line instead of human output")
	cmd.Flags().IntVar(&f.maxTurns, "max-turns", 200, "the most model turns one exchange may take")
	cmd.Flags().StringVar(&f.permission, "permission-mode", "workspace", "read-only, workspace, ask (chat and serve ask you before a call that writes or runs) or full")
	cmd.Flags().StringArrayVar(&f.allow, "allow", nil, `a rule letting matching calls run unasked, e.g. "bash(git status*)" (repeatable; rein run --help says how rules match)`)
	cmd.Flags().StringArrayVar(&f.deny, "deny", nil, `a rule refusing matching calls, e.g. "bash(git push*)" (repeatable; deny wins; adds to the config file's deny) — a convenience, not a boundary`)
	cmd.Flags().IntVar(&f.maxTokens, "max-tokens", 8192, "the output limit of each reply")
	cmd.Flags().StringVarP(&f.prompt, "prompt", "p", "", `the prompt (as "rein -p" in other harnesses); or give it as arguments, or on standard input`)
	f.children.register(cmd.Flags())
	f.sandbox.register(cmd.Flags())
	f.checkpoints.register(cmd.Flags())
	f.web.register(cmd.Flags())
}

// resolve resolves the provider the flags name and checks the thinking budget against the
// output limit the flags give it.
func (f runFlags) resolve(log io.Writer) (*wiring, error) {
	w, err := resolveProvider(f.providerFlags, environ, log)
	if err != nil {
		return nil, err
	}
	if err := w.checkThinking(f.maxTokens); err != nil {
		w.close()
		return nil, err
	}
	if err := f.web.check(w.name); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   `run [flags] "<prompt>"`,
		Short: "Run the agent on a prompt until it is done",
		Long: `run gives the agent a prompt in a workspace and works until the model replies without
a tool call. Every step is recorded in the session's record before it acts.

Child agents the model starts (the agents tool) run beside it, each in a session of
its own; run waits for them, takes their replies up as they arrive and lets the model
continue, and ends once none is running.

Ctrl-C is Stop: the exchange and every child agent end at once, owed tool calls are
answered truthfully, each record is settled, and rein exits 130; the sessions stay
resumable. A second Ctrl-C within a second exits immediately (the record stays
admissible; a resume settles it). A closed standard output (rein run ... | head -1)
is a Stop too: the exchange ends the same way and rein exits 141, as a shell reports
a command ended by SIGPIPE.

A session has one writer at a time: while another process (a rein run, a host) is
writing it, rein run --resume refuses, naming that process, and exits 4.

A hook may hold a tool call: nothing at or after it runs, the session parks with the
call owed and rein exits 5; rein resume <id> asks again and runs or refuses it, and
rein resume <id> --stop answers it not_executed.

A prompt refused before anything is sent — too large for the model's window, or
refused by a prompt hook — exits 1 saying why, and leaves no new session behind.

Exit codes: 0 replied, 1 provider or harness error, 2 usage error, 3 turn limit,
4 the session is held by another process, 5 a hook held a tool call (the session is
parked), 130 stopped, 141 standard output closed.

` + sandboxHelp + `

` + rulesHelp,
		Example: `  rein run --provider sim "list the files here"
  ANTHROPIC_API_KEY=... rein run "fix the failing test in ./parser"
  rein run --resume 20261129-194512 "now add a test for it"
  rein run --provider openai --base-url http://localhost:11434/v1 --model qwen3 "hello"`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.configure(cmd); err != nil {
				return err
			}
			return runE(&f)(cmd, args)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&f.resume, "resume", "", "continue this session (an id, a unique prefix of one, or a record path)")
	cmd.Flags().StringVar(&f.trace, "trace-turns", "", "write the time of each step of each turn to this file (for rein bench turns)")
	cmd.Flags().MarkHidden("trace-turns")
	cmd.Flags().StringVar(&f.cpuProfile, "cpu-profile", "", "write a CPU profile of the run to this file (for rein bench turns)")
	cmd.Flags().MarkHidden("cpu-profile")
	return cmd
}

// runE is what `rein run` and `rein "<prompt>"` do once configured: build the prompt from the
// arguments, -p and standard input, and run the session.
func runE(f *runFlags) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		f.changed = cmd.Flags().Changed
		prompt, err := promptFrom(args, f.prompt, os.Stdin)
		if err != nil {
			return err
		}
		if strings.TrimSpace(prompt) == "" && f.resume == "" {
			return exitf(exitUsage, "give a prompt: rein \"<prompt>\", rein -p \"<prompt>\", or pipe it in (rein --help shows the flags)")
		}
		return runSession(cmd.OutOrStdout(), cmd.ErrOrStderr(), *f, f.resume, prompt)
	}
}

func newResumeCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   `resume [<session-id>] ["<prompt>"]`,
		Short: "Resume the newest (or the named) session in this workspace",
		Long: `resume replays a session's record; if its last exchange was left in flight by a crash
or a kill, it settles it first (owed tool calls answered truthfully, reason crashed).
With a prompt it continues the session; without one it settles it and says where it
stands. A session another process is writing now (a rein run, a host) is refused,
naming that process, with exit code 4; the exit codes are those of rein run.

A session parked on a held tool call (exit code 5) is released by a resume: the
hooks and the person are asked again, and the held call runs or is refused then,
once; a prompt given is delivered after the held calls are answered. --stop settles
it instead: its calls that had not run are answered not_executed.`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.configure(cmd); err != nil {
				return err
			}
			ref, prompt := "", ""
			switch len(args) {
			case 1:
				if looksLikeSession(args[0], f.cwd) {
					ref = args[0]
				} else {
					prompt = args[0]
				}
			case 2:
				ref, prompt = args[0], args[1]
			}
			if ref == "" {
				ref = session.NewestRef
			}
			f.changed = cmd.Flags().Changed
			return runSession(cmd.OutOrStdout(), cmd.ErrOrStderr(), f, ref, prompt)
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&f.stopHeld, "stop", false, "settle a held session instead of releasing it: its calls that had not run are answered not_executed")
	return cmd
}

func looksLikeSession(arg, cwd string) bool {
	root, err := stateRoot()
	if err != nil {
		return false
	}
	ws, err := workspace(cwd)
	if err != nil {
		return false
	}
	_, err = session.Resolve(root, ws, arg)
	return err == nil
}

// oneProcessor runs rein's own Go code on one processor where the machine (or the container's
// share of it) has two or fewer and GOMAXPROCS does not say otherwise. A session's work is one
// chain of hand-offs — the reply's stream to the loop, the loop to a tool, the command's exit
// back — with little to run side by side, while the commands it starts need a processor of
// their own: with two, the runtime wakes a second thread for nearly every hand-off, and a
// cross-processor wake-up is dear, on a virtual machine above all. On a 2-processor virtual
// machine a bash tool turn took 4–9 % less time this way (rein bench turns, medians of 7 to 11
// alternating runs, most pairs faster; the chat's keystroke while streaming, 13 % less
// time and 25 % less processor time). A Stop is not delayed past the runtime's preemption of a
// busy goroutine (10 ms). rein run, resume and chat call it; a host (rein serve), whose
// conversations run side by side, keeps every processor.
func oneProcessor() {
	if oneWillDo(os.Getenv("GOMAXPROCS"), runtime.GOMAXPROCS(0)) {
		runtime.GOMAXPROCS(1)
	}
}

// oneWillDo says whether rein's own code runs on one processor, given GOMAXPROCS's value in the
// environment and the runtime's processors.
func oneWillDo(env string, procs int) bool { return env == "" && procs <= 2 }

// runSession is rein's main job: open or start a session, take up the prompt, print the
// exchange, and exit with a code that says how it ended.
func runSession(stdout, stderr io.Writer, f runFlags, resume, prompt string) error {
	// A closed standard output (rein run ... | head -1) is a Stop, not a death: with SIGPIPE
	// notified rather than fatal, a write to the closed pipe fails with EPIPE, and the guard turns
	// that into the cancellation of the exchange, which settles. Notify, not Ignore: an ignored
	// signal stays ignored in the commands the tools run, which would change how they end in a
	// pipe of their own. It stays notified until rein exits, so a last message to a closed
	// standard error cannot kill it either.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	oneProcessor()
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	guard := &stdoutGuard{w: stdout, gone: func() { stop(errStdoutClosed) }}
	stdout = guard

	a, ws, closeAll, err := f.agentFor(stderr, resume)
	if err != nil {
		return err
	}
	defer closeAll()
	sess := a.Session()
	out := console.NewPrinter(stdout, stderr, f.asJSON)
	out.Session(sess)
	finish := out.Follow(sess)
	if resume != "" {
		if err := a.Settle(ws, version); err != nil {
			finish()
			return exitf(exitFailed, "cannot settle the session: %v", err)
		}
		// A rewind --files cut short owes the rest of its restore: finished before anything else.
		if err := completeRestore(stderr, sess, f.checkpoints.repo); err != nil {
			finish()
			return err
		}
	}
	held := resume != "" && sess.Snapshot().Parked()
	if held && f.stopHeld {
		// A Stop of a held session: its calls that had not run are answered not_executed.
		err := a.Abandon()
		finish()
		if err != nil {
			return exitf(exitFailed, "cannot settle the held session: %v", err)
		}
		out.Standing(sess)
		return nil
	}
	if prompt == "" && !held {
		finish()
		out.Standing(sess)
		if guard.closed() {
			return exitf(exitPipeGone, "")
		}
		return nil
	}
	if guard.closed() {
		// Nobody reads what the exchange would print: do not start it.
		finish()
		return exitf(exitPipeGone, "standard output was closed before the exchange began; the session %s is settled and resumable", sess.ID())
	}

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignals()...)
	defer signal.Stop(sigs)
	go func() {
		var first time.Time
		for range sigs {
			if !first.IsZero() && time.Since(first) < time.Second {
				fmt.Fprintln(stderr, "\nrein: stopped at once; `rein resume` settles the session")
				os.Exit(exitStopped)
			}
			first = time.Now()
			fmt.Fprintln(stderr, "\nrein: stopping… (Ctrl-C again to exit at once)")
			stop(context.Canceled)
		}
	}()

	// The exchange awaits the child agents the model starts, taking up their replies as they
	// arrive; a Stop (Ctrl-C, a closed standard output) stops them beside it, and none outlives it.
	var res agent.Outcome
	if held {
		// A resume (or a message) enters the held window again: the hooks and the person are
		// asked again, and each call runs or is refused then, once. A message is delivered as
		// steering after the window is answered.
		by := "resume"
		if prompt != "" {
			a.Say(prompt)
			by = "message"
		}
		res = a.ReleaseLast(ctx, by)
	} else {
		res = a.TakeUpLast(ctx, agent.Prompt{Text: prompt})
	}
	finish()
	if guard.closed() {
		// Stopped as by Ctrl-C, whatever the exchange had reached: it settled (quiesced, owed
		// calls answered), so the session resumes where it ended.
		return exitf(exitPipeGone, "standard output was closed, so rein stopped the exchange; the session is settled and resumable: rein resume %s", sess.ID())
	}
	way, kept := func(err error) string { return wayOut(err, sess.ID()) }, true
	var refused *agent.PromptRefused
	if resume == "" && errors.As(res.Err, &refused) && sess.Snapshot().NumTurns() == 0 {
		// A new session whose prompt was refused before any of it was recorded holds nothing to
		// go on from; kept, it would be the workspace's newest, in front of the one worked in.
		if err := sess.Discard(); err != nil {
			fmt.Fprintf(stderr, "rein: %v\n", err)
		} else {
			way, kept = func(error) string { return "; no session was kept" }, false
		}
	}
	out.Result(sess, res, kept)
	for _, r := range res.Refused {
		fmt.Fprintf(stderr, "rein: your message was not delivered: %s\n", oneLine(errors.New(r.Why)))
	}
	switch {
	case res.Err != nil && res.Reason != fold.Cancelled:
		var pe *provider.Error
		if !f.asJSON && errors.As(res.Err, &pe) {
			// The provider's error was printed as it was recorded; say only what it ended.
			return exitf(exitFailed, "the exchange ended on the provider error above%s", wayOut(res.Err, sess.ID()))
		}
		return exitf(exitFailed, "%s%s", oneLine(res.Err), way(res.Err))
	case res.Reason == fold.Cancelled:
		return exitf(exitStopped, "")
	case res.Reason == agent.Held:
		p, _ := sess.Snapshot().Parking()
		undelivered := ""
		for _, w := range res.Withdrawn {
			undelivered += fmt.Sprintf("\n  your message was not delivered (send it again once released): %s", oneLine(errors.New(w.Text)))
		}
		return exitf(exitParked, "the call %s is held: %s\n  nothing at or after it ran; the session is parked and resumable:\n  rein resume %s asks again and runs it or refuses it; rein resume %s --stop answers it not_executed%s", p.CallID, p.Reason, sess.ID(), sess.ID(), undelivered)
	case res.Reason == fold.Limit:
		if !f.asJSON {
			return exitf(exitLimit, "to go on: rein resume %s \"continue\"", sess.ID()) // the limit was printed as recorded
		}
		return exitf(exitLimit, "the exchange reached its limit of %d turns; to go on: rein resume %s \"continue\"", f.maxTurns, sess.ID())
	}
	return nil
}

// agentFor opens the session resume names (a new one when resume is empty) and builds its agent
// as the flags say, in the workspace ws. closeAll closes the session, then the provider. A
// resumed session keeps the settings it was last run under unless a flag changes one (said, and
// recorded by the resume).
func (f *runFlags) agentFor(stderr io.Writer, resume string) (a *agent.Agent, ws string, closeAll func(), err error) {
	if ws, err = workspace(f.cwd); err != nil {
		return nil, "", nil, exitf(exitUsage, "%v", err)
	}
	root, err := stateRoot()
	if err != nil {
		return nil, "", nil, exitf(exitUsage, "%v", err)
	}
	// The rules and the mode are judged before anything is opened or created: a misspelt rule
	// leaves no session behind.
	if _, err := policyFrom(f.permission, f.allow, f.deny); err != nil {
		return nil, "", nil, exitf(exitUsage, "%v", err)
	}
	if err := allowHasEffect(*f); err != nil {
		return nil, "", nil, err
	}
	if err := f.sandbox.resolve(stderr); err != nil {
		return nil, "", nil, err
	}
	servers, err := mcpServers(stderr, ws, f.file)
	if err != nil {
		return nil, "", nil, err
	}
	// The MCP servers start beside the session's opening and the provider's resolution.
	starting := startMCP(servers)
	var sess *session.Session
	fail := func(err error) (*agent.Agent, string, func(), error) {
		if sess != nil {
			sess.Close()
		}
		starting.close()
		closeSandboxes()
		return nil, "", nil, err
	}
	var was fold.Meta // the settings a resumed session was last run under
	if resume != "" {
		if sess, err = reopen(stderr, root, ws, resume); err != nil {
			return fail(err)
		}
		was = sess.Snapshot().Meta()
		if err := f.keepSettings(was, ws); err != nil {
			return fail(err)
		}
	}
	tr := newTurnTrace(f.trace)
	stopProfile, err := startCPUProfile(f.cpuProfile)
	if err != nil {
		return fail(err)
	}
	wired, err := f.resolve(stderr)
	if err != nil {
		return fail(err)
	}
	set := wired.toolSet(wired.model)
	runner, err := buildRunnerWith(ws, set, f.permission, f.allow, f.deny, f.sandbox.chosen, f.web.fetchOptions(f.sandbox.chosen), shell.Options{Started: tr.started()})
	if err != nil {
		wired.close()
		return fail(exitf(exitUsage, "%v", err))
	}
	mcpm, states, err := starting.join(stderr)
	if err != nil {
		wired.close()
		return fail(err)
	}
	if err := withMCP(runner, mcpm, servers); err != nil {
		wired.close()
		return fail(err)
	}
	if err := judgeMCPRules(stderr, runner.Policy, runner.Tools, servers); err != nil {
		wired.close()
		return fail(err)
	}
	showImages(runner, wired.name, wired.model)
	if sess != nil {
		sayChanges(stderr, was, ws, wired, f.permission, f.web.search)
		saySandboxChange(stderr, was.Sandbox, f.sandbox.chosen)
	} else if sess, err = session.Start(session.ProjectDir(root, ws), session.Options{Redact: redactText}, record.SessionStarted{
		Provider: wired.name, Model: wired.model, ContextWindow: wired.window, Cwd: ws, Version: version,
		BaseURL: recordedURL(wired.baseURL), PermissionMode: f.permission, Thinking: wired.thinking, Effort: wired.effort,
		Sandbox: f.sandbox.chosen.String(), Tools: string(set), WebSearch: f.web.search,
	}); err != nil {
		wired.close()
		return fail(exitf(exitFailed, "cannot create the session: %v", err))
	}
	if err := appendIf(sess, states); err != nil {
		wired.close()
		return fail(exitf(exitFailed, "cannot record the MCP servers' states: %v", err))
	}
	f.checkpoints.open(root, ws, stderr)
	cfg := agentConfig(sess, ws, wired, *f, runner)
	if mcpm != nil {
		cfg.System += mcpm.Note()
	}
	// Recorded with the session's start and each resume, so a resume goes back to the same server
	// under the same mode.
	cfg.BaseURL, cfg.PermissionMode = recordedURL(wired.baseURL), f.permission
	// rein run's exchange awaits the child agents its model starts (agent.Config.AwaitChildren).
	cfg.AwaitChildren = true
	cfg.Trace = tr.agent()
	return agent.New(cfg), ws, func() {
		sess.Close()
		wired.close()
		starting.close()
		closeSandboxes()
		tr.write(stderr)
		stopProfile()
	}, nil
}

// reopen opens the session ref names ("newest": the workspace's newest) to continue it, saying so
// when it quarantined a torn tail.
func reopen(stderr io.Writer, root, ws, ref string) (*session.Session, error) {
	var e session.Entry
	var err error
	if ref == session.NewestRef {
		e, err = session.Newest(root, ws)
	} else {
		e, err = session.Resolve(root, ws, ref)
	}
	switch {
	case ref == session.NewestRef && errors.Is(err, session.ErrNotFound):
		return nil, exitf(exitUsage, "there is no session to resume in %s; start one with: rein run \"<prompt>\"", ws)
	case errors.Is(err, session.ErrNotFound), errors.Is(err, session.ErrAmbiguous):
		return nil, exitf(exitUsage, "%v", err)
	case err != nil:
		return nil, exitf(exitFailed, "%v", err)
	}
	s, rep, err := session.Open(e.Path, session.Options{Redact: redactText})
	if herr, ok := heldRefusal("cannot resume", err); ok {
		return nil, herr
	}
	var refused *journal.RefusedError
	if errors.As(err, &refused) {
		return nil, exitf(exitFailed, "cannot resume: %v\n  `rein doctor %s` says more; if a crash damaged the record's tail, `rein doctor --repair %s` moves it aside (nothing is deleted)", err, e.Path, e.Path)
	}
	if err != nil {
		return nil, exitf(exitFailed, "cannot resume: %v", err)
	}
	if rep.Torn > 0 {
		fmt.Fprintf(stderr, "rein: quarantined a torn tail of %d bytes to %s%s\n", rep.Torn, e.Path, journal.TornSuffix)
	}
	return s, nil
}

func oneLine(err error) string {
	var pe *provider.Error
	if errors.As(err, &pe) {
		return "the provider failed: " + pe.Error()
	}
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// stopSignals are the signals that stop an exchange as Ctrl-C does: an interrupt, SIGTERM (a
// service manager, kill) and SIGHUP (the terminal closed, an ssh connection dropped) — each only
// if rein was not started with it ignored (nohup, a shell's `trap "" HUP`, a background job's
// SIGINT), which listening for it would undo.
func stopSignals() []os.Signal {
	var out []os.Signal
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(s) {
			out = append(out, s)
		}
	}
	return out
}

// wayOut says what a person can do when the provider refuses the context itself: the session is
// never wedged, but the same context would be refused again, so name the edits that change it.
func wayOut(err error, id string) string {
	if errors.Is(err, journal.ErrPoisoned) {
		// A write or sync of the record failed: what was written before it stands, and a resume
		// sets a partly written line aside.
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
			return fmt.Sprintf("\n  the disk holding the session is full (or its quota spent): free some space, then `rein resume %s` goes on from the last whole record", id)
		}
		return fmt.Sprintf("\n  what was recorded before the failure stands: `rein doctor %s` reads it, `rein resume %s` goes on from the last whole record", id, id)
	}
	var pe *provider.Error
	if !errors.As(err, &pe) {
		return ""
	}
	switch pe.Class {
	case provider.InvalidRequest, provider.ContextLength:
		return fmt.Sprintf("\n  the session is intact; if a turn in its context is at fault, `rein show %s` lists them and `rein rewind %s <turn>` or `rein evict %s <from> <to> --note ...` takes it out", id, id, id)
	case provider.Auth:
		return "\n  check the API key in the environment"
	}
	return fmt.Sprintf("\n  the session is intact: `rein resume %s \"<prompt>\"` tries again", id)
}

// ---- output -------------------------------------------------------------------------------------

// errStdoutClosed is the cause of an exchange stopped because standard output was closed.
var errStdoutClosed = errors.New("standard output was closed")

// stdoutGuard passes writes on to standard output and calls gone, once, when one fails because
// nobody reads it any more (EPIPE).
type stdoutGuard struct {
	w    io.Writer
	once sync.Once
	gone func()
	shut atomic.Bool
}

func (g *stdoutGuard) Write(p []byte) (int, error) {
	n, err := g.w.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		g.once.Do(func() {
			g.shut.Store(true)
			g.gone()
		})
	}
	return n, err
}

// closed reports whether a write found standard output closed.
func (g *stdoutGuard) closed() bool { return g.shut.Load() }
