package main

import (
	"fmt"
	"strconv"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/spf13/cobra"
)

// openForEdit opens a session to append a person's edit to it.
func openForEdit(ref string) (*session.Session, error) {
	path, err := resolveRecord(ref)
	if err != nil {
		return nil, exitf(exitUsage, "%v", err)
	}
	s, _, err := session.Open(path, session.Options{Redact: redactText})
	if herr, ok := heldRefusal("cannot edit "+ref, err); ok {
		return nil, herr
	}
	if err != nil {
		return nil, exitf(exitFailed, "cannot open %s: %v", ref, err)
	}
	return s, nil
}

// commitEdit opens a session, judges a person's edit against its folded state (what refuses it
// is said in words, prefixed by what), commits it, and returns the session's id.
func commitEdit(ref, what string, judge func(st *fold.State) error, p record.Payload) (string, error) {
	s, err := openForEdit(ref)
	if err != nil {
		return "", err
	}
	defer s.Close()
	if why := judge(s.Snapshot()); why != nil {
		return "", exitf(exitFailed, "%s: %v", what, why)
	}
	if err := s.Commit(p); err != nil {
		return "", exitf(exitFailed, "%v", err)
	}
	return s.ID(), nil
}

func parseTurn(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, exitf(exitUsage, "%q is not a turn id (a positive number; `rein show` lists them)", s)
	}
	return n, nil
}

func newRewindCmd() *cobra.Command {
	var files bool
	cmd := &cobra.Command{
		Use:   "rewind <session-id> <turn> [--files]",
		Short: "Withdraw every turn from <turn> on (they stay readable in the transcript); --files rewinds the workspace too",
		Long: `rewind withdraws turns from the context with no residue: the model no longer sees
them. They stay in the record and readable through the transcript tool, and turn ids
are never reused. Without --files it does not undo what those turns did in the workspace.

With --files it puts the workspace's files back as they stood when <turn> began (from
the session's checkpoints): first a safety snapshot of the files as they are (so the
rewind can itself be undone: rein checkpoints restore), then the withdrawal, then the
restore, each recorded. It
lists what it wrote and removed, and what it did not cover: ignored files, files over
the size cap, nested repositories, and anything outside the workspace. A restore cut
short (a crash, a kill) is finished by the next rein resume of the session.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			anchor, err := parseTurn(args[1])
			if err != nil {
				return err
			}
			if files {
				return rewindFiles(cmd.OutOrStdout(), args[0], anchor)
			}
			id, err := commitEdit(args[0], fmt.Sprintf("cannot rewind to turn %d", anchor),
				func(st *fold.State) error { return st.CheckRewind(anchor) }, &record.Rewound{Anchor: anchor})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "rewound %s to before turn %d\n", id, anchor)
			return nil
		},
	}
	cmd.Flags().BoolVar(&files, "files", false, "rewind the workspace's files too, to their checkpoint when <turn> began")
	return cmd
}

func newClearCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "clear <session-id>",
		Short: "Withdraw every turn from the context (they stay readable in the transcript)",
		Long: `clear withdraws every turn from the context, so the next prompt starts afresh in the
same session. The turns stay in the record and readable through the transcript tool;
turn ids are never reused. It does not undo what those turns did in the workspace.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := commitEdit(args[0], "cannot clear "+args[0], func(st *fold.State) error {
				if !st.IsReady() {
					return fmt.Errorf("tool results are owed; `rein resume %s` settles it first", args[0])
				}
				return nil
			}, &record.Cleared{})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cleared the context of %s\n", id)
			return nil
		},
	}
}

func newEvictCmd() *cobra.Command {
	var note string
	cmd := &cobra.Command{
		Use:   `evict <session-id> <from> <to> --note "..."`,
		Short: "Evict turns <from>–<to> from the context, leaving a note in their place",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			from, err := parseTurn(args[1])
			if err != nil {
				return err
			}
			to, err := parseTurn(args[2])
			if err != nil {
				return err
			}
			id, err := commitEdit(args[0], fmt.Sprintf("cannot evict turns %d–%d", from, to), func(st *fold.State) error {
				_, err := st.CheckEviction(from, to, note)
				return err
			}, &record.Evicted{From: from, To: to, Note: note, By: record.ByUser})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "evicted turns %d–%d of %s\n", from, to, id)
			return nil
		},
	}
	cmd.Flags().StringVar(&note, "note", "", "one line saying what the turns held and what still matters (required)")
	return cmd
}

func newForkCmd() *cobra.Command {
	var at int64
	var files string
	cmd := &cobra.Command{
		Use:   "fork <session-id> [--at <turn>] [--files <dir>]",
		Short: "Start a new session that inherits this one's context (up to a turn)",
		Long: `fork starts a new session whose first record inherits this one's context, up to --at.
With --files <dir> it also writes the workspace as it stood at that turn (from the
session's checkpoints) into <dir>, a new or empty directory, and the new session works
there.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// A fork only reads its parent, so it takes no lock: it works while another
			// process writes the parent.
			path, err := resolveRecord(args[0])
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			parent, _, err := session.Load(path, session.Options{Redact: redactText})
			if err != nil {
				return exitf(exitFailed, "cannot read %s: %v", args[0], err)
			}
			meta := parent.Snapshot().Meta()
			started := record.SessionStarted{Provider: meta.Provider, Model: meta.Model, ContextWindow: meta.ContextWindow, Cwd: meta.Cwd, Version: version}
			var child *session.Session
			var commit string
			if files != "" {
				dir, err := absDir(files)
				if err != nil {
					return err
				}
				if commit, err = forkFiles(parent, at, dir); err != nil {
					return err
				}
				child, err = forkInto(parent, at, dir, started)
				if err != nil {
					return exitf(exitFailed, "cannot %v (the files are written in %s)", err, dir)
				}
			} else if child, err = session.Fork(parent, at, session.Options{Redact: redactText}, started); err != nil {
				return exitf(exitFailed, "cannot %v", err) // "fork <id>: ...", "start a session: ..."
			}
			defer child.Close()
			upTo := child.Snapshot().Newest() // the newest turn inherited
			fmt.Fprintf(cmd.OutOrStdout(), "forked %s at turn %d as %s\n", parent.ID(), upTo, child.ID())
			if files != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "wrote the workspace of checkpoint %s into %s\ncontinue it with: rein resume --cwd %s %s \"<prompt>\"\n", short(commit), child.Snapshot().Meta().Cwd, child.Snapshot().Meta().Cwd, child.ID())
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "continue it with: rein resume %s \"<prompt>\"\n", child.ID())
			return nil
		},
	}
	cmd.Flags().Int64Var(&at, "at", 0, "inherit turns up to this one (default: all)")
	cmd.Flags().StringVar(&files, "files", "", "write the workspace as it stood at that turn into this new (or empty) directory, and work there")
	return cmd
}
