package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
	"github.com/spf13/cobra"
)

func newDoctorCmd() *cobra.Command {
	var dry bool
	cmd := &cobra.Command{
		Use:   "doctor <session-id | record.jsonl>",
		Short: "Replay a record and say whether it is admissible",
		Long: `doctor replays a session's record through the fold, exactly as a resume would, and
prints either "admissible" with its figures or the first refusal with its record
number and reason.

A torn tail (bytes after the last newline, left by a crash) is reported, copied to
record.jsonl.torn and trimmed, and the rest judged; --dry-run only reports it. A
refused record is never modified.

Exit codes: 0 admissible, 1 refused, 2 usage error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := resolveRecord(args[0])
			if err != nil {
				return exitf(exitUsage, "%v", err)
			}
			return doctor(cmd.OutOrStdout(), path, dry)
		},
	}
	cmd.Flags().BoolVar(&dry, "dry-run", false, "report a torn tail without quarantining it")
	return cmd
}

func doctor(out io.Writer, path string, dry bool) error {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return exitf(exitUsage, "no record at %s", path)
		}
		return exitf(exitUsage, "%v", err)
	}
	st := fold.New()
	verify := func(seq int64, line []byte, _ record.Locus) error {
		r, err := record.Decode(line, seq)
		if err != nil {
			return err
		}
		return st.Step(r)
	}
	var rep journal.Report
	var err error
	if dry {
		rep, err = journal.Inspect(fsys.OS{}, path, verify)
	} else {
		var w *journal.Writer
		w, rep, err = journal.Open(fsys.OS{}, path, verify)
		if w != nil {
			w.Close()
		}
	}
	var refused *journal.RefusedError
	if errors.As(err, &refused) {
		// A fold refusal already names its record; say it once.
		if strings.HasPrefix(refused.Reason, fmt.Sprintf("record %d ", refused.Line)) {
			fmt.Fprintf(out, "refused: %s\n", refused.Reason)
		} else {
			fmt.Fprintf(out, "refused: record %d: %s\n", refused.Line, refused.Reason)
		}
		fmt.Fprintf(out, "  %s was not changed\n", path)
		return exitf(exitFailed, "")
	}
	if err != nil {
		return exitf(exitFailed, "%v", err)
	}
	s := st.Stats()
	fmt.Fprintf(out, "admissible: %s\n", path)
	fmt.Fprintf(out, "  records %d, turns %d (resident %d), residues %d, phase %s, bytes %d\n", s.Records, s.Turns, s.Resident, s.Residues, s.Phase, s.Bytes)
	if st.InFlight() || !st.IsReady() {
		fmt.Fprintf(out, "  the last exchange was left in flight; a resume settles it (owed calls answered, reason crashed)\n")
	}
	if rep.Torn > 0 {
		if dry {
			fmt.Fprintf(out, "  torn tail: %d bytes after the last complete line (not quarantined: --dry-run)\n", rep.Torn)
		} else {
			fmt.Fprintf(out, "  torn tail: %d bytes quarantined to %s%s and trimmed\n", rep.Torn, path, journal.TornSuffix)
		}
	}
	return nil
}
