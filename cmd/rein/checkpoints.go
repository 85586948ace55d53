package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reinhq/rein/internal/checkpoint"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/rewind"
	"github.com/reinhq/rein/internal/session"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Workspace checkpoints: the flags that turn them off or allow them in a broad workspace, the
// shadow repository they open, and the commands that read them (checkpoints, diff), rewind files
// (rewind --files), materialise them (fork --files) and collect them (checkpoints gc).

// ckptFlags are the checkpoint flags of the commands that run agents.
type ckptFlags struct {
	off      bool // --no-checkpoints
	anywhere bool // --checkpoints-anywhere: in / and the home directory too
	// repo is the workspace's shadow repository once opened (nil: no checkpoints).
	repo *checkpoint.Repo
}

func (f *ckptFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.off, "no-checkpoints", false, "take no checkpoints of the workspace's files (rewind --files and fork --files then have nothing to go back to)")
	fs.BoolVar(&f.anywhere, "checkpoints-anywhere", false, "take checkpoints even when the workspace is / or your home directory (refused by default: a copy of far more than a project)")
}

// open opens the workspace's shadow repository, unless checkpoints are off. A workspace too broad
// to checkpoint, or a machine without git, runs without them, said once on stderr.
func (f *ckptFlags) open(root, ws string, stderr io.Writer) {
	if f.off || f.repo != nil {
		return
	}
	repo, err := openCheckpoints(root, ws, f.anywhere)
	if err != nil {
		fmt.Fprintf(stderr, "rein: no checkpoints of the files this time: %v\n", err)
		return
	}
	f.repo = repo
}

// openCheckpoints opens the shadow repository of the workspace ws under the state root.
func openCheckpoints(root, ws string, anywhere bool) (*checkpoint.Repo, error) {
	repo, err := checkpoint.Open(root, ws, checkpoint.Options{Home: os.Getenv("HOME"), AllowBroad: anywhere})
	if errors.Is(err, checkpoint.ErrBroadWorkspace) {
		return nil, fmt.Errorf("%w (--checkpoints-anywhere takes them there)", err)
	}
	return repo, err
}

// sessionCheckpoints loads a session read-only and opens its workspace's shadow repository.
func sessionCheckpoints(ref string) (*session.Session, *checkpoint.Repo, error) {
	path, err := resolveRecord(ref)
	if err != nil {
		return nil, nil, exitf(exitUsage, "%v", err)
	}
	sess, _, err := session.Load(path, session.Options{Redact: redactText})
	if err != nil {
		return nil, nil, exitf(exitFailed, "cannot read %s: %v", ref, err)
	}
	repo, err := repoOf(sess)
	if err != nil {
		sess.Close()
		return nil, nil, err
	}
	return sess, repo, nil
}

// repoOf opens the shadow repository of a session's workspace (as its record names it).
func repoOf(sess *session.Session) (*checkpoint.Repo, error) {
	root, err := stateRoot()
	if err != nil {
		return nil, exitf(exitUsage, "%v", err)
	}
	ws := sess.Snapshot().Meta().Cwd
	if ws == "" {
		return nil, exitf(exitFailed, "session %s names no workspace", sess.ID())
	}
	repo, err := openCheckpoints(root, ws, true) // a broad workspace with checkpoints allowed them once
	if err != nil {
		return nil, exitf(exitFailed, "cannot open the checkpoints of %s: %v", ws, err)
	}
	return repo, nil
}

// rewindFiles is rein rewind --files: the safety snapshot, the withdrawal and the restore, each
// recorded (package rewind), then what was restored and what was not covered.
func rewindFiles(w io.Writer, ref string, anchor int64) error {
	sess, err := openForEdit(ref)
	if err != nil {
		return err
	}
	defer sess.Close()
	repo, err := repoOf(sess)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if done, ok, err := rewind.Complete(ctx, sess, repo); err != nil {
		return exitf(exitFailed, "cannot finish the restore an earlier rewind began: %v", err)
	} else if ok {
		fmt.Fprintf(w, "finished the restore an earlier rewind began:\n")
		sayRestored(w, sess.ID(), done)
	}
	done, err := rewind.Files(ctx, sess, repo, anchor, "")
	if err != nil {
		return exitf(exitFailed, "cannot rewind %s to before turn %d with its files: %v", sess.ID(), anchor, err)
	}
	fmt.Fprintf(w, "rewound %s to before turn %d, files too\n", sess.ID(), anchor)
	sayRestored(w, sess.ID(), done)
	return nil
}

// sayRestored tells what a restore did and what it did not cover.
func sayRestored(w io.Writer, id string, done record.FilesRestored) {
	fmt.Fprintf(w, "  restored %s: %d written, %d removed\n", short(done.Target), len(done.Changed), len(done.Removed))
	listed := 0
	for _, set := range []struct {
		what  string
		paths []string
	}{{"written", done.Changed}, {"removed", done.Removed}} {
		for i, p := range set.paths {
			if listed == maxListed {
				fmt.Fprintf(w, "    and %d more %s (the record's files_restored lists them all)\n", len(set.paths)-i, set.what)
				break
			}
			fmt.Fprintf(w, "    %-8s %s\n", set.what, p)
			listed++
		}
	}
	if len(done.NotCovered) > 0 || done.MoreIgnored > 0 {
		fmt.Fprintf(w, "  not covered (left as they are):\n")
		for _, s := range done.NotCovered {
			fmt.Fprintf(w, "    %s (%s)\n", s.Path, s.Reason)
		}
		if done.MoreIgnored > 0 {
			fmt.Fprintf(w, "    and %d more ignored paths\n", done.MoreIgnored)
		}
	}
	fmt.Fprintf(w, "  %s\n", rewind.Outside)
	fmt.Fprintf(w, "  the files as they stood before are kept as the safety checkpoint %s: rein checkpoints restore %s %s undoes this\n", short(done.Safety), id, short(done.Safety))
}

// maxListed is how many written and removed paths a rewind's answer lists.
const maxListed = 50

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// completeRestore finishes, on a resume, a restore a crash interrupted, saying so.
func completeRestore(stderr io.Writer, sess *session.Session, repo *checkpoint.Repo) error {
	if repo == nil {
		return nil
	}
	done, ok, err := rewind.Complete(context.Background(), sess, repo)
	if err != nil {
		return exitf(exitFailed, "cannot finish the restore of the files a rewind began: %v", err)
	}
	if ok {
		fmt.Fprintf(stderr, "rein: finished restoring the files a rewind began before it was cut short:\n")
		sayRestored(stderr, sess.ID(), done)
	}
	return nil
}

// forkFiles materialises into dir the workspace as it stood at turn at of parent (0: its newest
// checkpoint), for rein fork --files.
func forkFiles(parent *session.Session, at int64, dir string) (string, error) {
	repo, err := repoOf(parent)
	if err != nil {
		return "", err
	}
	turn := at
	if turn == 0 {
		turn = parent.Snapshot().High()
	}
	e, err := repo.At(context.Background(), parent.ID(), turn)
	if err != nil {
		return "", exitf(exitFailed, "cannot fork the files: %v", err)
	}
	if err := repo.Materialise(context.Background(), e.Commit, dir); err != nil {
		return "", exitf(exitFailed, "cannot fork the files: %v", err)
	}
	return e.Commit, nil
}

func newCheckpointsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "checkpoints [session-id | newest]",
		Short: "List a session's checkpoints of the workspace, with the files each changed",
		Long: `checkpoints lists the snapshots of the workspace a session took: one when each prompt
was taken up (the person's own edits) and one after each tool batch that changed files,
and the safety snapshots each rewind --files took before it restored anything. They live
in a shadow repository under rein's state directory, never in the workspace's own .git.
Without a session it lists the workspace's newest session's.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sess, repo, err := sessionCheckpoints(orNewest(args))
			if err != nil {
				return err
			}
			defer sess.Close()
			return listCheckpoints(cmd.OutOrStdout(), sess, repo)
		},
	}
	cmd.AddCommand(newCheckpointsGCCmd(), newCheckpointsRestoreCmd())
	return cmd
}

func newCheckpointsRestoreCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "restore <session-id> <checkpoint>",
		Short: "Put the workspace's files back as one of the session's checkpoints holds them",
		Long: `restore puts the workspace's files back as a checkpoint holds them (a hash, or the first
characters of one, from rein checkpoints), leaving the conversation as it is. Restoring
the safety checkpoint a rewind --files took undoes that rewind's restore. It takes a
safety checkpoint of its own first, and is recorded like a rewind's restore.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			sess, err := openForEdit(args[0])
			if err != nil {
				return err
			}
			defer sess.Close()
			repo, err := repoOf(sess)
			if err != nil {
				return err
			}
			ctx := context.Background()
			if done, ok, err := rewind.Complete(ctx, sess, repo); err != nil {
				return exitf(exitFailed, "cannot finish the restore an earlier rewind began: %v", err)
			} else if ok {
				fmt.Fprintf(cmd.OutOrStdout(), "finished the restore an earlier rewind began:\n")
				sayRestored(cmd.OutOrStdout(), sess.ID(), done)
			}
			done, err := rewind.To(ctx, sess, repo, args[1])
			if errors.Is(err, checkpoint.ErrNotFound) {
				return exitf(exitUsage, "%v (rein checkpoints %s lists them)", err, sess.ID())
			}
			if err != nil {
				return exitf(exitFailed, "cannot restore the files of %s: %v", sess.ID(), err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "restored the files of %s\n", sess.ID())
			sayRestored(cmd.OutOrStdout(), sess.ID(), done)
			return nil
		},
	}
}

func listCheckpoints(w io.Writer, sess *session.Session, repo *checkpoint.Repo) error {
	ctx := context.Background()
	list, err := repo.List(ctx, sess.ID())
	if err != nil {
		return exitf(exitFailed, "%v", err)
	}
	if len(list) == 0 {
		fmt.Fprintf(w, "session %s has no checkpoints\n", sess.ID())
		return nil
	}
	skipped := map[string][]record.SkippedPath{}
	if recs, err := sess.RecordsAfter(0); err == nil {
		for _, r := range recs {
			if c, ok := r.Body.(*record.Checkpoint); ok && c.Commit != "" {
				skipped[c.Commit] = c.Skipped
			}
		}
	}
	for _, e := range list {
		what := fmt.Sprintf("turn %d", e.Turn)
		if e.Safety {
			what = "safety (before a restore)"
		}
		changes, err := repo.Diff(ctx, "", e.Commit)
		if err != nil {
			return exitf(exitFailed, "%v", err)
		}
		fmt.Fprintf(w, "%s  %s  %s  %d file(s) changed\n", short(e.Commit), e.Time.Local().Format("2006-01-02 15:04:05"), what, len(changes))
		for _, c := range changes {
			fmt.Fprintf(w, "    %c %s\n", c.Status, c.Path)
		}
		for _, s := range skipped[e.Commit] {
			fmt.Fprintf(w, "    skipped %s (%s)\n", s.Path, s.Reason)
		}
	}
	return nil
}

func newCheckpointsGCCmd() *cobra.Command {
	var olderThan time.Duration
	var cwd string
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Drop the checkpoints of sessions gone or idle, and prune what nothing refers to",
		Long: `gc drops the checkpoints of every session of the workspace whose record is gone, or
unchanged for longer than --older-than, then prunes the objects nothing refers to.
A session another process is using keeps its checkpoints.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := stateRoot()
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			ws, err := workspace(cwd)
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			repo, err := openCheckpoints(root, ws, true)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			now := time.Now()
			keep := func(id string) bool {
				e, err := session.Resolve(root, ws, id)
				if err != nil || e.Path == "" {
					return false
				}
				fi, err := os.Stat(e.Path)
				return err == nil && (olderThan == 0 || now.Sub(fi.ModTime()) <= olderThan)
			}
			dropped, err := repo.GC(context.Background(), keep)
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			if len(dropped) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "kept every session's checkpoints; pruned %s\n", repo.Dir())
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "dropped the checkpoints of %d session(s): %s; pruned %s\n", len(dropped), strings.Join(dropped, ", "), repo.Dir())
			return nil
		},
	}
	cmd.Flags().DurationVar(&olderThan, "older-than", 30*24*time.Hour, "drop the checkpoints of sessions whose record has not changed for this long (0: only sessions gone)")
	cmd.Flags().StringVar(&cwd, "cwd", "", "the workspace whose checkpoints to collect (default: the current directory)")
	return cmd
}

func newDiffCmd() *cobra.Command {
	var names bool
	cmd := &cobra.Command{
		Use:   "diff <session-id> <turn>",
		Short: "Show the changes to the workspace's files a turn made",
		Long: `diff shows what changed in the workspace at a turn, as a unified diff: for an assistant
turn, what its tools did; for a user turn, the edits made before it was taken up.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			turn, err := parseTurn(args[1])
			if err != nil {
				return err
			}
			sess, repo, err := sessionCheckpoints(args[0])
			if err != nil {
				return err
			}
			defer sess.Close()
			ctx := context.Background()
			list, err := repo.List(ctx, sess.ID())
			if err != nil {
				return exitf(exitFailed, "%v", err)
			}
			var at *checkpoint.Entry
			for i := range list {
				if !list[i].Safety && list[i].Turn == turn {
					at = &list[i]
				}
			}
			if at == nil {
				fmt.Fprintf(cmd.OutOrStdout(), "turn %d of %s changed no files (no checkpoint was taken at it)\n", turn, sess.ID())
				return nil
			}
			if names {
				changes, err := repo.Diff(ctx, "", at.Commit)
				if err != nil {
					return exitf(exitFailed, "%v", err)
				}
				for _, c := range changes {
					fmt.Fprintf(cmd.OutOrStdout(), "%c\t%s\n", c.Status, c.Path)
				}
				return nil
			}
			if err := repo.Patch(ctx, "", at.Commit, cmd.OutOrStdout()); err != nil {
				return exitf(exitFailed, "%v", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&names, "name-status", false, "list the paths changed and how (A, M, D, T), not the changes")
	return cmd
}

// absDir is a directory given on the command line, made absolute.
func absDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", exitf(exitUsage, "%v", err)
	}
	return abs, nil
}

// forkInto starts a fork of parent in the workspace dir: among dir's sessions, so that a resume
// run there finds it.
func forkInto(parent *session.Session, at int64, dir string, started record.SessionStarted) (*session.Session, error) {
	root, err := stateRoot()
	if err != nil {
		return nil, err
	}
	inh, err := parent.Inheritance(at)
	if err != nil {
		return nil, fmt.Errorf("fork %s: %w", parent.ID(), err)
	}
	started.Parent, started.Cwd = parent.ID(), dir
	return session.Start(session.ProjectDir(root, dir), session.Options{Redact: redactText}, started, inh)
}
