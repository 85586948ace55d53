// Command rein is an agent harness: it runs LLM agent sessions, keeps every step in a durable
// record, manages what the model sees, and lets people stop, resume, rewind and fork sessions.
//
// main is thin: it builds the command tree and maps errors to exit codes. Wiring of adapters
// happens in the subcommands, explicitly, and nowhere else.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/reinhq/rein/internal/console"
	osbox "github.com/reinhq/rein/internal/sandbox"
	"github.com/spf13/cobra"
)

// version is rein's version, recorded in every session_started event.
const version = "0.1.0"

// Exit codes. A Stop exits 130, as a shell reports an interrupted command; a closed standard
// output exits 141, as a shell reports a command killed by SIGPIPE (rein is not killed: it stops
// the exchange, which settles, as a Stop does).
const (
	exitOK       = 0
	exitFailed   = 1 // a refused record, a provider error, a failed exchange
	exitUsage    = 2
	exitLimit    = 3 // the exchange reached its turn limit
	exitHeld     = 4 // another process is writing the session
	exitParked   = 5 // the exchange parked on a held tool call (rein resume releases it)
	exitStopped  = 130
	exitPipeGone = 141
)

// exitError carries an exit code up to main with a one-line reason.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

func main() {
	// rein re-executes itself to confine a command (package sandbox): that process is the helper,
	// and does nothing else.
	osbox.Main()
	// First, before a key is read or a tool runs: no process of the same user may read rein's
	// environment or memory; then the keys leave the environment, and every byte printed is
	// redacted, and drawn rather than obeyed by the terminal (console.Safe: an escape sequence in
	// a command's output, a model's words or a file's name does not write the clipboard or repaint
	// the screen) — but for the chat, which draws the screen itself, and a diff, which is a patch
	// to apply as it is.
	hardened := harden()
	takeSecrets()
	stderr := redacting(console.Safe(os.Stderr))
	if hardened != nil {
		fmt.Fprintf(stderr, "rein: warning: cannot make the process non-dumpable (%v): a tool running as you could read rein's API keys from /proc\n", hardened)
	}
	root := newRoot()
	root.SetOut(redacting(console.Safe(os.Stdout)))
	root.SetErr(stderr)
	for _, c := range root.Commands() {
		if c.Name() == "chat" || c.Name() == "diff" {
			c.SetOut(redacting(os.Stdout))
		}
	}
	err := root.Execute()
	if err == nil {
		return
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "rein: "+ee.msg)
		}
		os.Exit(ee.code)
	}
	fmt.Fprintln(stderr, "rein: "+err.Error())
	os.Exit(exitUsage)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print rein's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "rein %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}

func newRoot() *cobra.Command {
	var f runFlags
	run := runE(&f)
	root := &cobra.Command{
		Use:   `rein ["<prompt>"]`,
		Short: "An agent harness that never wedges",
		Long: `rein runs LLM agent sessions: it talks to model providers, runs tools, records every
step in an append-only record, manages what the model sees, and lets you stop,
resume, rewind and fork sessions at any moment.

"rein <prompt>" is "rein run <prompt>": the prompt may be words without quotes, -p, or
standard input ("cat log | rein why did this fail" appends the log to the prompt).

Try it offline against the built-in simulator:

  rein --provider sim "list the files here"

With a key (ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY) drop --provider sim.

Wherever a command names a session, "newest" names this workspace's newest, and a
unique prefix of an id will do ("rein sessions" lists them).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.configure(cmd); err != nil {
				return err
			}
			if len(args) == 0 && f.prompt == "" && !readable(os.Stdin) {
				return cmd.Help()
			}
			if s := typoOf(cmd, args); s != "" {
				return exitf(exitUsage, "unknown command %q: did you mean `rein %s`? (to send it to the model as a prompt: rein -p %q)", args[0], s, args[0])
			}
			return run(cmd, args)
		},
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
		// Every command's numeric flags are judged before it runs; the configuration is loaded by
		// the commands that talk to a model (runFlags.configure), and only by them: a broken file
		// cannot stop doctor, show, sessions or the edits.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return checkNumbers(cmd.Flags()) },
	}
	root.SuggestionsMinimumDistance = 2
	f.register(root)
	root.AddCommand(newVersionCmd(), newRunCmd(), newResumeCmd(), newSessionsCmd(), newShowCmd(), newDoctorCmd(), newSimCmd(),
		newForkCmd(), newRewindCmd(), newEvictCmd(), newClearCmd(), newServeCmd(), newChatCmd(), newSandboxCmd(), newMCPCmd(), newImportCmd(), newBenchCmd(),
		newCheckpointsCmd(), newDiffCmd(), newHooksCmd())
	explainArgs(root)
	return root
}

// explainArgs makes every command that refuses its arguments' number say how it is used, and
// where to read more, beside cobra's count ("accepts 1 arg(s), received 0").
func explainArgs(c *cobra.Command) {
	for _, sub := range c.Commands() {
		explainArgs(sub)
	}
	check := c.Args
	if check == nil {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			name := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
			return exitf(exitUsage, "%s: %v\n  usage: %s\n  `%s --help` says more", name, err, cmd.UseLine(), cmd.CommandPath())
		}
		return nil
	}
}
