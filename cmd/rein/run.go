package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/provider"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/spf13/cobra"
)

type runFlags struct {
	providerFlags
	cwd        string
	asJSON     bool
	resume     string
	maxTurns   int
	permission string
	allow      []string
	deny       []string
	maxTokens  int
	children   childFlags
	prompt     string // -p
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

Exit codes: 0 replied, 1 provider or harness error, 2 usage error, 3 turn limit,
4 the session is held by another process, 130 stopped, 141 standard output closed.

` + rulesHelp,
		Example: `  rein run --provider sim "list the files here"
  ANTHROPIC_API_KEY=... rein run "fix the failing test in ./parser"
  rein run --resume 20261129-194512 "now add a test for it"
  rein run --provider openai --base-url http://localhost:11434/v1 --model qwen3 "hello"`,
		Args: cobra.ArbitraryArgs,
		RunE: runE(&f),
	}
	f.register(cmd)
	cmd.Flags().StringVar(&f.resume, "resume", "", "continue this session (an id, a unique prefix of one, or a record path)")
	return cmd
}

// runE is what `rein run` and `rein "<prompt>"` do: build the prompt from the arguments, -p and
// standard input, and run the session.
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
naming that process, with exit code 4; the exit codes are those of rein run.`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
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
				ref = "newest"
			}
			f.changed = cmd.Flags().Changed
			return runSession(cmd.OutOrStdout(), cmd.ErrOrStderr(), f, ref, prompt)
		},
	}
	f.register(cmd)
	return cmd
}

func looksLikeSession(arg, cwd string) bool {
	if _, err := os.Stat(arg); err == nil {
		return true
	}
	root, err := stateRoot()
	if err != nil {
		return false
	}
	ws, err := workspace(cwd)
	if err != nil {
		return false
	}
	_, err = session.Find(root, ws, arg)
	return err == nil
}

// runSession is rein's main job: open or create a session, take up the prompt, print the
// exchange, and exit with a code that says how it ended.
func runSession(stdout, stderr io.Writer, f runFlags, resume, prompt string) error {
	// A closed standard output (rein run ... | head -1) is a Stop, not a death: with SIGPIPE
	// notified rather than fatal, a write to the closed pipe fails with EPIPE, and the guard turns
	// that into the cancellation of the exchange, which settles. Notify, not Ignore: an ignored
	// signal stays ignored in the commands the tools run, which would change how they end in a
	// pipe of their own. It stays notified until rein exits, so a last message to a closed
	// standard error cannot kill it either.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	guard := &stdoutGuard{w: stdout, gone: func() { stop(errStdoutClosed) }}
	stdout = guard

	ws, err := workspace(f.cwd)
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	root, err := stateRoot()
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	// The rules and the mode are judged before anything is opened or created: a misspelt rule
	// leaves no session behind.
	if _, err := policyFrom(f.permission, f.allow, f.deny); err != nil {
		return exitf(exitUsage, "%v", err)
	}
	if err := allowHasEffect(f); err != nil {
		return err
	}
	opts := session.Options{Redact: redactText}
	var sess *session.Session
	resumed := false

	if resume != "" {
		var path string
		if resume == "newest" {
			entries, err := session.List(root, ws)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			if len(entries) == 0 {
				return exitf(exitUsage, "there is no session to resume in %s; start one with: rein run \"<prompt>\"", ws)
			}
			path = entries[0].Path
		} else if e, err := session.Find(root, ws, resume); err == nil {
			path = e.Path
		} else {
			return exitf(exitUsage, "%v", err)
		}
		s, rep, err := session.Open(path, opts)
		if herr, ok := heldRefusal("cannot resume", err); ok {
			return herr
		}
		var refused *journal.RefusedError
		if errors.As(err, &refused) {
			return exitf(exitFailed, "cannot resume: %v\n  `rein doctor %s` says more; if a crash damaged the record's tail, `rein doctor --repair %s` moves it aside (nothing is deleted)", err, path, path)
		}
		if err != nil {
			return exitf(exitFailed, "cannot resume: %v", err)
		}
		if rep.Torn > 0 {
			fmt.Fprintf(stderr, "rein: quarantined a torn tail of %d bytes to %s%s\n", rep.Torn, path, journal.TornSuffix)
		}
		sess, resumed = s, true
	}
	var was fold.Meta // the settings a resumed session was last run under
	if sess != nil {
		was = sess.Snapshot().Meta()
		if err := f.keepSettings(was, ws); err != nil {
			sess.Close()
			return err
		}
	}
	runner, err := buildRunner(ws, f.permission, f.allow, f.deny)
	if err != nil {
		if sess != nil {
			sess.Close()
		}
		return exitf(exitUsage, "%v", err)
	}
	wired, err := f.resolve(stderr)
	if err != nil {
		if sess != nil {
			sess.Close()
		}
		return err
	}
	if sess != nil {
		sayChanges(stderr, was, ws, wired, f.permission)
	}
	defer wired.close()
	if sess == nil {
		id := session.NewID(time.Now())
		s, err := session.Create(filepath.Join(session.ProjectDir(root, ws), id), opts, &record.SessionStarted{
			Session: id, Provider: wired.name, Model: wired.model, ContextWindow: wired.window, Cwd: ws, Version: version,
			BaseURL: recordedURL(wired.baseURL), PermissionMode: f.permission, Thinking: wired.thinking, Effort: wired.effort,
		})
		if err != nil {
			return exitf(exitFailed, "cannot create the session: %v", err)
		}
		sess = s
	}
	defer sess.Close()

	ds := doors(ws, wired, f)
	a := agent.New(agent.Config{
		Session: sess, Client: wired.client, Provider: wired.name, Model: wired.model, MaxTokens: f.maxTokens,
		BaseURL: recordedURL(wired.baseURL), PermissionMode: f.permission, Thinking: wired.thinking, Effort: wired.effort,
		System: systemPrompt(ws), Runner: runner, Doors: ds, MaxTurns: f.maxTurns, Window: wired.window,
		AwaitChildren: true,
	})
	kids := a.Children()
	out := newPrinter(stdout, stderr, f.asJSON)
	out.session(sess)
	updates, unsubscribe := sess.Subscribe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for u := range updates {
			out.update(sess, u)
		}
	}()
	finish := func() {
		unsubscribe()
		wg.Wait()
	}
	if resumed {
		if err := a.Settle(ws, version); err != nil {
			finish()
			return exitf(exitFailed, "cannot settle the session: %v", err)
		}
	}
	if prompt == "" {
		finish()
		out.standing(sess)
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
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
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

	if kids != nil {
		// A Stop (Ctrl-C, a closed standard output) stops the children beside the parent, not
		// after it.
		defer context.AfterFunc(ctx, kids.Stop)()
	}
	// The exchange awaits the child agents the model starts: their replies are taken up as they
	// arrive, as harness-authored imports, and the model continues (agent.Config.AwaitChildren).
	res := a.TakeUp(ctx, agent.Prompt{Text: prompt})
	if kids != nil {
		// Whatever ended the exchange, no child outlives rein: each is stopped, settled and closed,
		// and a reply that reached the parent too late to be taken up is recorded.
		if err := errors.Join(kids.Close(), a.RecordArrivals(res.Reason)); err != nil && res.Err == nil {
			res.Err = err
		}
	}
	finish()
	if guard.closed() {
		// Stopped as by Ctrl-C, whatever the exchange had reached: it settled (quiesced, owed
		// calls answered), so the session resumes where it ended.
		return exitf(exitPipeGone, "standard output was closed, so rein stopped the exchange; the session is settled and resumable: rein resume %s", sess.ID())
	}
	out.result(sess, res)
	switch {
	case res.Err != nil && res.Reason != fold.Cancelled:
		var pe *provider.Error
		if !f.asJSON && errors.As(res.Err, &pe) {
			// The provider's error was printed as it was recorded; say only what it ended.
			return exitf(exitFailed, "the exchange ended on the provider error above%s", wayOut(res.Err, sess.ID()))
		}
		return exitf(exitFailed, "%s%s", oneLine(res.Err), wayOut(res.Err, sess.ID()))
	case res.Reason == fold.Cancelled:
		return exitf(exitStopped, "")
	case res.Reason == fold.Limit:
		if !f.asJSON {
			return exitf(exitLimit, "to go on: rein resume %s \"continue\"", sess.ID()) // the limit was printed as recorded
		}
		return exitf(exitLimit, "the exchange reached its limit of %d turns; to go on: rein resume %s \"continue\"", f.maxTurns, sess.ID())
	}
	return nil
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

// wayOut says what a person can do when the provider refuses the context itself: the session is
// never wedged, but the same context would be refused again, so name the edits that change it.
func wayOut(err error, id string) string {
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

type printer struct {
	mu      sync.Mutex
	out     io.Writer
	err     io.Writer
	json    bool
	midLine bool
	// attemptText: text of the reply being streamed was printed since its attempt began.
	attemptText bool
}

func newPrinter(out, errw io.Writer, asJSON bool) *printer {
	p := &printer{out: out, err: errw, json: asJSON}
	return p
}

// emit prints one JSON object whose keys keep the order given: "type" first, always.
func (p *printer) emit(kv ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b bytes.Buffer
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		v, err := json.Marshal(kv[i+1])
		if err != nil {
			v, _ = json.Marshal(err.Error())
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString("}\n")
	_, _ = p.out.Write(b.Bytes())
}

func (p *printer) session(s *session.Session) {
	if p.json {
		p.emit("type", "session", "id", s.ID(), "record", s.Path())
		return
	}
	fmt.Fprintf(p.err, "rein: session %s\n", s.ID())
}

func (p *printer) line(w io.Writer, format string, args ...any) {
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
	}
	fmt.Fprintf(w, format, args...)
}

func (p *printer) update(s *session.Session, u session.Update) {
	if p.json {
		if u.Live != nil {
			switch u.Live.Kind {
			case "text", "thinking", "restart", "status":
				p.emit("type", u.Live.Kind, "text", u.Live.Text)
			}
			return
		}
		p.emit("type", "record", "seq", u.Record.Seq, "kind", u.Record.Kind(), "payload", u.Record.Body)
		return
	}
	if u.Live != nil {
		switch u.Live.Kind {
		case "text":
			fmt.Fprint(p.out, u.Live.Text)
			p.midLine = !strings.HasSuffix(u.Live.Text, "\n")
			p.attemptText = p.attemptText || u.Live.Text != ""
		case "restart":
			// What this attempt printed is not what the model said: the record will hold only
			// the retried reply. Say so where the text went, not only on stderr.
			if p.attemptText {
				p.line(p.out, "[rein: the text above was discarded: the stream failed and the reply is being retried]\n")
				p.attemptText = false
			}
			p.line(p.err, "rein: the stream failed after output began; retrying from the start\n")
		case "tool_start":
			p.line(p.out, "⏺ %s\n", callSummary(u.Live.Name, u.Live.Text))
		}
		return
	}
	switch b := u.Record.Body.(type) {
	case *record.TurnStarted:
		p.attemptText = false
	case *record.AssistantMessage:
		p.attemptText = false
		if p.midLine {
			fmt.Fprintln(p.out)
			p.midLine = false
		}
	case *record.ToolResults:
		for _, r := range b.Results {
			p.line(p.out, "  ⎿ %s%s\n", outcomeWord(r.Outcome), preview(r.Content))
		}
	case *record.Import:
		if b.Source == "child" && len(b.Message.Parts) > 0 {
			head, _, _ := strings.Cut(b.Message.Parts[0].Text, "\n")
			p.line(p.err, "%s\n", head)
		}
	case *record.Repaired:
		p.line(p.err, "rein: repaired the reply: %s\n", b.What)
	case *record.ProviderError:
		if b.Status != 0 {
			p.line(p.err, "rein: provider error: %s (%d): %s\n", b.Class, b.Status, b.Message)
		} else {
			p.line(p.err, "rein: provider error: %s: %s\n", b.Class, b.Message)
		}
	case *record.RetryScheduled:
		p.line(p.err, "rein: retrying in %s (attempt %d)\n", (time.Duration(b.DelayMs) * time.Millisecond).String(), b.Attempt+1)
	case *record.Quiesced:
		if len(b.Answered) > 0 {
			p.line(p.err, "rein: answered %d owed tool call(s) (%s)\n", len(b.Answered), b.Reason)
		}
	case *record.Failure:
		p.line(p.err, "rein: %s\n", b.Message)
	case *record.Pressure:
		if b.Limit > 0 {
			p.line(p.err, "rein: the provider refused the context as too long; this session now keeps to its limit of %d tokens\n", b.Limit)
		}
	case *record.Evicted:
		if b.By == record.ByHarness {
			p.line(p.err, "rein: evicted turns %d–%d to stay within the context window (they stay readable: rein show, or the transcript tool)\n", b.From, b.To)
		}
	}
}

func (p *printer) result(s *session.Session, res agent.Outcome) {
	if p.json {
		kv := []any{"type", "result", "reason", res.Reason, "session", s.ID()}
		if res.Err != nil {
			kv = append(kv, "error", res.Err.Error())
		}
		if len(res.Withdrawn) > 0 {
			kv = append(kv, "withdrawn", res.Withdrawn)
		}
		p.emit(kv...)
		return
	}
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
	}
	if res.Reason == fold.Cancelled {
		fmt.Fprintf(p.err, "rein: stopped; the session is settled and resumable: rein resume %s\n", s.ID())
	}
}

func (p *printer) standing(s *session.Session) {
	st := s.Snapshot()
	phase, turns := st.Phase().String(), st.NumTurns()
	if p.json {
		p.emit("type", "result", "reason", "settled", "session", s.ID(), "phase", phase, "turns", turns)
		return
	}
	fmt.Fprintf(p.out, "session %s is settled: %d turns, %s. Continue with: rein resume %s \"<prompt>\"\n", s.ID(), turns, phase, s.ID())
}

func callSummary(name, args string) string {
	var a map[string]any
	_ = json.Unmarshal([]byte(args), &a)
	for _, k := range []string{"description", "command", "path", "pattern", "op"} {
		if v, ok := a[k].(string); ok && v != "" {
			return fmt.Sprintf("%s(%s)", name, clip(v, 80))
		}
	}
	return name
}

func outcomeWord(o record.Outcome) string {
	if o == record.OK {
		return ""
	}
	return string(o) + ": "
}

func preview(content string) string {
	content = strings.TrimSpace(content)
	if i := strings.LastIndex(content, "\nTURN: "); i >= 0 {
		content = strings.TrimSpace(content[:i])
	} else if strings.HasPrefix(content, "TURN: ") {
		content = ""
	}
	lines := strings.Split(content, "\n")
	if len(lines) > 3 {
		return strings.Join(lines[:3], "\n    ") + fmt.Sprintf("\n    … %d more lines", len(lines)-3)
	}
	if content == "" {
		return "(no output)"
	}
	return strings.Join(lines, "\n    ")
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
