package journal

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/reinhq/rein/internal/fsys"
)

// LockName is the name of the lock file beside a record, record.lock: whoever may append to the
// record holds its lock (see "One writer" in the package doc).
const LockName = "record.lock"

// unnamedWait is how long a would-be writer waits out a lock whose holder has not said who it is:
// a reader probing it (Live), or a writer that has just taken it and is writing its name. Either
// lets go or names itself within microseconds on an idle machine, but a process can lose its
// processor between the two steps for well over 100 ms on a busy one (the writer-race stress test
// saw it); a named holder is refused at once, so the wait costs only in that window.
const unnamedWait = time.Second

// HeldError is the refusal of a would-be writer of a record that another writer holds: another
// process (a run, a host, an edit), or another Writer of the same record in this one. Nothing was
// read or written.
type HeldError struct {
	Path   string      // the record
	Holder fsys.Holder // who holds it; the zero Holder if it has not said
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s is being written by %s: a session has one writer at a time; wait for that process to finish, or stop it", e.Path, e.Holder)
}

// Unwrap makes a *HeldError match fsys.ErrLocked.
func (e *HeldError) Unwrap() error { return fsys.ErrLocked }

// lockPath is the lock file of the record at path.
func lockPath(path string) string { return filepath.Join(filepath.Dir(path), LockName) }

// lock takes the writer's lock of the record at path, or refuses with a *HeldError.
func lock(fs fsys.FS, path string) (fsys.Lock, error) {
	deadline := time.Now().Add(unnamedWait)
	for {
		l, err := fs.Lock(lockPath(path))
		if err == nil {
			return l, nil
		}
		var le *fsys.LockedError
		if !errors.As(err, &le) {
			return nil, fmt.Errorf("lock record %s: %w", path, err)
		}
		if le.Holder.Known() || time.Now().After(deadline) {
			return nil, &HeldError{Path: path, Holder: le.Holder}
		}
		time.Sleep(time.Millisecond)
	}
}

// Live reports whether a writer holds the record at path, and who, without disturbing it: a
// reader's question (doctor, a listing). A writer that has just taken the lock is given a moment
// to say who it is.
func Live(fs fsys.FS, path string) (fsys.Holder, bool, error) {
	deadline := time.Now().Add(unnamedWait)
	for {
		h, held, err := fs.Probe(lockPath(path))
		if err != nil {
			return fsys.Holder{}, false, fmt.Errorf("probe the lock of %s: %w", path, err)
		}
		if !held || h.Known() || time.Now().After(deadline) {
			return h, held, nil
		}
		time.Sleep(time.Millisecond)
	}
}
