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

	"github.com/spf13/cobra"
)

// version is rein's version, recorded in every session_started event.
const version = "0.1.0"

// Exit codes. A Stop exits 130, as a shell reports an interrupted command.
const (
	exitOK      = 0
	exitFailed  = 1 // a refused record, a provider error, a failed exchange
	exitUsage   = 2
	exitLimit   = 3 // the exchange reached its turn limit
	exitStopped = 130
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
	// First, before a key is read or a tool runs: no process of the same user may read rein's
	// environment or memory; then the keys leave the environment, and every byte printed is
	// redacted.
	hardened := harden()
	takeSecrets()
	stderr := redactingWriter{os.Stderr}
	if hardened != nil {
		fmt.Fprintf(stderr, "rein: warning: cannot make the process non-dumpable (%v): a tool running as you could read rein's API keys from /proc\n", hardened)
	}
	root := newRoot()
	root.SetOut(redactingWriter{os.Stdout})
	root.SetErr(stderr)
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

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "rein",
		Short: "An agent harness that never wedges",
		Long: `rein runs LLM agent sessions: it talks to model providers, runs tools, records every
step in an append-only record, manages what the model sees, and lets you stop,
resume, rewind and fork sessions at any moment.

Try it offline against the built-in simulator:

  rein run --provider sim "list the files here"

With a key (ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY) drop --provider sim.`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		Version:           version,
		PersistentPreRunE: applySettings,
	}
	root.AddCommand(newRunCmd(), newResumeCmd(), newSessionsCmd(), newShowCmd(), newDoctorCmd(), newSimCmd(),
		newForkCmd(), newRewindCmd(), newEvictCmd(), newClearCmd(), newServeCmd(), newChatCmd())
	return root
}
