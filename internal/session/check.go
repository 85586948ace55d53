package session

import (
	"errors"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
)

// Checkup is what Check found in a record.
type Checkup struct {
	// Report counts the complete lines judged and the torn tail after them.
	Report journal.Report
	// State is the fold of the admissible records: all of them, unless one was refused.
	State *fold.State
	// Refused is the refusal of the first line refused, if one was: a damaged line (its cause a
	// *record.DecodeError) or one the fold does not admit (a *fold.Refusal). The file was left as
	// it was.
	Refused *journal.RefusedError
	// Good is where the last admissible line ends: what a repair keeps (journal.Cut).
	Good int64
	// Live is the process writing the record now, if one is: Check then only read it, and the
	// bytes after its last complete line are the line it is writing, not a torn tail.
	Live *fsys.Holder
	// Images counts the pictures the admissible tool results carry, each read back from its
	// blob and checked against its digest (a record from before images has none).
	Images int
}

// Check replays the record at path through the fold exactly as a resume would and says what it
// found; a refused line is a finding (Checkup.Refused), not an error. Unless dry, it takes the
// record's writer lock as Open does and quarantines a torn tail; when dry, or when another process
// holds the record, it only reads.
func Check(fs fsys.FS, path string, dry bool) (Checkup, error) {
	if fs == nil {
		fs = fsys.OS{}
	}
	c := Checkup{State: fold.New()}
	blobs := journal.Blobs(fs, path)
	verify := func(seq int64, line []byte, loc record.Locus) error {
		r, err := record.DecodeWith(line, seq, blobs)
		if err != nil {
			return err
		}
		if err := c.State.Step(r); err != nil {
			return err
		}
		if b, ok := r.Body.(*record.ToolResults); ok {
			for _, res := range b.Results {
				c.Images += len(res.Images)
			}
		}
		c.Good = loc.Off + loc.Len
		return nil
	}
	var err error
	if dry {
		if h, held, lerr := journal.Live(fs, path); lerr == nil && held {
			c.Live = &h
		}
		c.Report, err = journal.Inspect(fs, path, verify)
	} else {
		var w *journal.Writer
		w, c.Report, err = journal.Open(fs, path, verify)
		var held *journal.HeldError
		if errors.As(err, &held) {
			c.Live = &held.Holder
			c.Report, err = journal.Inspect(fs, path, verify) // Open read nothing
		}
		if w != nil {
			w.Close()
		}
	}
	if errors.As(err, &c.Refused) {
		return c, nil
	}
	return c, err
}
