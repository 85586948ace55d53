package fsys

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Locks. A lock file is an ordinary file, never renamed or removed, on which a holder takes an
// exclusive lock (flock(2) on OS) that the kernel releases when the holder's process dies, so a
// crash never leaves a stale lock. A lock belongs to one Lock call, not to a process: a second
// Lock of the same file fails even in the process that holds the first, so "held" always means
// "someone else is writing", whoever asks.
//
// The holder writes who it is (a Holder, as one JSON line) into the lock file once it has the
// lock, and empties the file when it releases it, so that a refused caller can name the process to
// wait for or stop. What the file says is advice for people, never the lock itself: a holder that
// crashed leaves its line behind in a file nobody holds, and whoever locks the file next replaces
// it.

// ErrLocked is matched (errors.Is) by a *LockedError: another holder has the lock.
var ErrLocked = errors.New("locked by another holder")

// LockedError is Lock's refusal: another holder has the lock of Path.
type LockedError struct {
	Path string
	// Holder is who holds the lock, as it wrote itself into the lock file; the zero Holder when
	// it has not written yet (it has just taken the lock), or when what the file says cannot be
	// believed (the process it names is gone: the file is being probed by a reader).
	Holder Holder
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("lock %s: held by %s", e.Path, e.Holder)
}

// Is makes a *LockedError match ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Lock is a held lock.
type Lock interface {
	// Unlock empties the lock file and releases the lock. Later calls do nothing.
	Unlock() error
}

// Holder says who holds a lock.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"` // its command line, shortened
	Since   time.Time `json:"since"`   // when it took the lock
}

// Known reports whether the holder said who it is.
func (h Holder) Known() bool { return h.PID > 0 }

// String names the holder for a person: "pid 4242 (rein run "fix it") since 2026-11-29 19:45:12".
func (h Holder) String() string {
	if !h.Known() {
		return "a process that has not said who it is"
	}
	s := fmt.Sprintf("pid %d", h.PID)
	if h.Command != "" {
		s += " (" + h.Command + ")"
	}
	if !h.Since.IsZero() {
		s += " since " + h.Since.Local().Format(time.DateTime)
	}
	return s
}

// maxCommand bounds the command line a holder writes about itself.
const maxCommand = 200

// self is this process as a holder, taking a lock at now.
func self(now time.Time) Holder {
	args := make([]string, len(os.Args))
	for i, a := range os.Args {
		if i == 0 {
			a = filepath.Base(a)
		}
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\") {
			a = fmt.Sprintf("%q", a)
		}
		args[i] = a
	}
	cmd := strings.Join(args, " ")
	if len(cmd) > maxCommand {
		cut := maxCommand
		for cut > 0 && cmd[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
			cut--
		}
		cmd = cmd[:cut] + "…"
	}
	return Holder{PID: os.Getpid(), Command: cmd, Since: now.Truncate(time.Second)}
}

// encodeHolder is the content of a held lock file: the holder as one JSON line.
func encodeHolder(h Holder) []byte {
	b, _ := json.Marshal(h)
	return append(b, '\n')
}

// decodeHolder reads a lock file's content; anything but a complete line naming a process is the
// zero Holder (a file being written, or emptied by a release).
func decodeHolder(b []byte) Holder {
	line, _, complete := bytes.Cut(b, []byte("\n"))
	var h Holder
	if !complete || json.Unmarshal(line, &h) != nil || !h.Known() {
		return Holder{}
	}
	return h
}
