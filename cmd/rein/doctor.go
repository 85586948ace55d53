package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/session"
	"github.com/spf13/cobra"
)

func newDoctorCmd() *cobra.Command {
	var dry, repair bool
	cmd := &cobra.Command{
		Use:   "doctor [session-id | newest | record.jsonl]",
		Short: "Replay a record and say whether it is admissible",
		Long: `doctor replays a session's record through the fold, exactly as a resume would, and
prints either "admissible" with its figures or the first refusal with its record
number and reason. Without a session it replays the workspace's newest.

A torn tail (bytes after the last newline, left by a crash) is reported, copied to
record.jsonl.torn and trimmed, and the rest judged; --dry-run only reports it. A
refused record is never modified, unless you ask for --repair: then the refused
line and everything after it move to record.jsonl.torn (nothing is deleted) and the
record keeps every line before it. That is the right repair when a crash on a
filesystem that writes pages out of order damaged the unsynced tail; for a record
edited by hand, look at the refusal first.

A record another process is writing now (a rein run, a host) is live: doctor reads it
without touching it and says who holds it ("live: held by pid N (command)"); what is
in flight there is that process's work in progress, and bytes after its last complete
line are the line it is writing, not a torn tail. --repair refuses a live record.

Exit codes: 0 admissible, 1 refused, 2 usage error, 4 live and --repair asked.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := resolveRecord(orNewest(args))
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			if repair && dry {
				return exitf(exitUsage, "--repair and --dry-run exclude each other")
			}
			return doctor(cmd.OutOrStdout(), path, dry, repair)
		},
	}
	cmd.Flags().BoolVar(&dry, "dry-run", false, "report a torn tail without quarantining it")
	cmd.Flags().BoolVar(&repair, "repair", false, "move a refused line and everything after it to record.jsonl.torn, keeping the lines before it")
	return cmd
}

func doctor(out io.Writer, path string, dry, repair bool) error {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return exitf(exitUsage, "no record at %s", path)
		}
		return exitf(exitUsage, "%v", err)
	}
	if err := sniff(out, path, fi); err != nil || fi.Size() == 0 {
		return err
	}
	c, err := session.Check(fsys.OS{}, path, dry)
	if err != nil {
		return exitf(exitFailed, "%v", err)
	}
	if c.Live != nil && repair {
		herr, _ := heldRefusal("cannot repair", &journal.HeldError{Path: path, Holder: *c.Live})
		return herr
	}
	if refused := c.Refused; refused != nil {
		// The fold's refusal names its record itself ("record N arrives after ..."); say it once.
		// A damaged line (a *record.DecodeError, a checksum) is named here.
		var judged *fold.Refusal
		if errors.As(refused, &judged) {
			fmt.Fprintf(out, "refused: %v\n", judged)
		} else {
			fmt.Fprintf(out, "refused: record %d: %s\n", refused.Line, refused.Reason)
		}
		if c.Live != nil {
			fmt.Fprintf(out, "  live: held by %s; stop it before any repair\n", c.Live)
		}
		if !repair {
			fmt.Fprintf(out, "  %s was not changed (--repair would move record %d and everything after it to %s%s)\n", path, refused.Line, path, journal.TornSuffix)
			return exitf(exitFailed, "")
		}
		moved, err := journal.Cut(fsys.OS{}, path, c.Good)
		if herr, ok := heldRefusal("cannot repair", err); ok {
			return herr
		}
		if err != nil {
			return exitf(exitFailed, "repair: %v", err)
		}
		fmt.Fprintf(out, "repaired: moved %d bytes (record %d on) to %s%s; records 1–%d kept\n", moved, refused.Line, path, journal.TornSuffix, refused.Line-1)
		return doctor(out, path, false, false)
	}
	st := c.State
	s := st.Stats()
	fmt.Fprintf(out, "admissible: %s\n", path)
	fmt.Fprintf(out, "  records %d, turns %d (resident %d), residues %d, phase %s, bytes %d\n", s.Records, s.Turns, s.Resident, s.Residues, s.Phase, s.Bytes)
	if c.Images > 0 {
		fmt.Fprintf(out, "  images in tool results: %d, each read from its blob and checked\n", c.Images)
	}
	switch {
	case c.Live != nil:
		fmt.Fprintf(out, "  live: held by %s, which is writing it now\n", c.Live)
	case st.Parked():
		p, _ := st.Parking()
		fmt.Fprintf(out, "  parked on the held call %s (%s): rein resume releases it, rein resume --stop answers it not_executed\n", p.CallID, p.Reason)
	case st.InFlight() || !st.IsReady():
		fmt.Fprintf(out, "  the last exchange was left in flight; a resume settles it (owed calls answered, reason crashed)\n")
	}
	if torn := c.Report.Torn; torn > 0 {
		switch {
		case c.Live != nil:
			fmt.Fprintf(out, "  %d bytes after the last complete line: the line its writer is appending (left alone)\n", torn)
		case dry:
			fmt.Fprintf(out, "  torn tail: %d bytes after the last complete line (not quarantined: --dry-run)\n", torn)
		default:
			fmt.Fprintf(out, "  torn tail: %d bytes quarantined to %s%s and trimmed\n", torn, path, journal.TornSuffix)
		}
	}
	return nil
}

// sniff says what a file is when it is not a record rein can judge line by line: empty, or not a
// rein record at all (which --repair must never "repair" by moving all of it aside).
func sniff(out io.Writer, path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return exitf(exitUsage, "%s is not a regular file; a session's record is the record.jsonl in its directory (`rein sessions` lists them)", path)
	}
	if fi.Size() == 0 {
		fmt.Fprintf(out, "admissible: %s is empty, it holds no records\n  a session's record is empty only when a crash came right after it was created; `rein resume` starts such a session\n", path)
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return exitf(exitFailed, "%v", err)
	}
	defer f.Close()
	// A damaged record still holds record lines; a file with none in its first 64 KiB is
	// something else.
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	// Zeros are what a crash leaves of unsynced pages: a torn tail, which doctor quarantines.
	zeros := len(bytes.Trim(head, "\x00")) == 0
	if !zeros && !bytes.HasPrefix(head, []byte(`{"v":`)) && !bytes.Contains(head, []byte("\n{\"v\":")) {
		return exitf(exitFailed, "%s is not a rein record: no line of it is a record line ({\"v\":…); a session's record is the record.jsonl in its directory (`rein sessions` lists them). Nothing was changed", path)
	}
	return nil
}
