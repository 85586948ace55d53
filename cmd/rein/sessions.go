package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reinhq/rein/internal/console"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/session"
	"github.com/spf13/cobra"
)

// stateRoot is rein's state directory from the environment.
func stateRoot() (string, error) { return session.Root(os.Getenv) }

func workspace(cwd string) (string, error) {
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("the workspace %s is not a directory", abs)
	}
	return abs, nil
}

// resolveRecord turns what a person names a session by — a session id of this workspace or a
// unique prefix of one, newest, a session directory or a record path — into a record path
// (session.Resolve).
func resolveRecord(ref string) (string, error) {
	root, err := stateRoot()
	if err != nil {
		return "", err
	}
	cwd, err := workspace("")
	if err != nil {
		return "", err
	}
	e, err := session.Resolve(root, cwd, ref)
	if ref == session.NewestRef && errors.Is(err, session.ErrNotFound) {
		err = fmt.Errorf("%w; start one with: rein run \"<prompt>\"", err)
	}
	return e.Path, err
}

// orNewest is the session a command that only reads one was given, or, given none, the
// workspace's newest.
func orNewest(args []string) string {
	if len(args) == 0 {
		return session.NewestRef
	}
	return args[0]
}

func newSessionsCmd() *cobra.Command {
	var asJSON bool
	var cwd string
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List this workspace's sessions, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := stateRoot()
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			ws, err := workspace(cwd)
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			entries, err := session.List(root, ws)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			return console.Sessions(cmd.OutOrStdout(), entries, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per session")
	cmd.Flags().StringVar(&cwd, "cwd", "", "the workspace (default: the current directory)")
	return cmd
}

func newShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show [session-id | newest | record.jsonl]",
		Short: "Print the context as it would be sent, and the survey",
		Long: `show prints a session's context as the next request would send it, and the survey of its
turns. Without a session it shows the workspace's newest.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := resolveRecord(orNewest(args))
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			st, rep, err := session.Replay(nil, path)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			var live *fsys.Holder
			if h, held, err := journal.Live(fsys.OS{}, path); err == nil && held {
				live = &h
			}
			if err := console.Show(cmd.OutOrStdout(), path, st, rep.Torn, live, asJSON); err != nil || asJSON {
				return err
			}
			if err := console.ShowHooks(cmd.OutOrStdout(), path); err != nil {
				return err
			}
			return console.ShowExternal(cmd.OutOrStdout(), path)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print {system, messages, survey} as JSON")
	return cmd
}
