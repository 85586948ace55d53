// Package journal owns the record file of one session, record.jsonl: creating it, appending
// lines to it durably, recovering it after a crash, and reading lines back through pointers. It
// knows bytes and files, not meaning: what a line says is package record's business, and whether
// a sequence of records makes sense is the fold's, which Open reaches through a verify callback.
//
// # The file
//
// A record file is a sequence of lines, each ended by "\n" and each shorter than MaxLine bytes,
// the newline included. Every line is one rein record line (see package record): a JSON object
// whose last field is a CRC-32C of the rest, and whose sequence number equals its line number,
// counted from 1. The file is only ever appended to; the one exception is Open trimming a torn
// tail, after the tail is safe in record.jsonl.torn.
//
// A record too long for a line keeps its payload in a blob: a file under blobs/ beside the record
// named by the SHA-256 of its bytes (see PutBlob and package record's blob lines). Blobs are
// written, synced and renamed into place, and the directory synced, before the line naming them.
//
// A line's Locus is its sequence number, byte offset, length with the newline, and checksum.
//
// # Opening
//
// Open reads the whole file. Every complete line, one that ends in "\n", must pass the framing and
// checksum check (record.Checksum) and then the caller's verify; the first that fails makes Open
// refuse, with a *RefusedError naming the line and the reason, and leave the file exactly as it
// found it. Damage followed by valid lines is refused this way, because the damage is a complete
// line. Bytes after the last "\n" are a torn tail, what a crash leaves of an unsynced append: a
// partial line, or zeros. Open appends them to record.jsonl.torn beside the record, syncs that
// file (and the directory, if it created the file), and only then truncates the record to its last
// complete line and syncs it. A crash at any point in this leaves either the tail in the record or
// the tail in the .torn file; at worst a tail is quarantined twice, never lost. Inspect does
// everything Open does except write.
//
// # One writer
//
// A record has one writer at a time, across processes. The writer holds an exclusive lock on the
// lock file beside the record, record.lock (fsys.FS.Lock: flock(2) on a real filesystem), from
// before Create or Open reads or writes anything until Writer.Close, and writes its pid, command
// line and the time it took the lock into that file. The kernel releases the lock when its
// process dies, so a crash never leaves a record locked. Every other would-be writer — Create,
// Open, Cut — is refused with a *HeldError naming the holder, and reads and writes nothing: a
// second writer would append lines with sequence numbers the first is also using, and the
// quarantine of a "torn tail" that is really a line being written would take it from its writer.
// Readers (Inspect, ReadPointer) take no lock; Live asks whether a record is held without
// disturbing its writer. The lock belongs to the Writer, not the process: two Writers of one record
// in the same process are refused the same way.
//
// # Durability
//
// What this package promises, and asks of the filesystem (see package fsys):
//
//   - Create syncs the session directory's parents, the new file, and the session directory, so a
//     created record survives a crash.
//   - Open syncs the record and its directory before it returns, so every line it verified is
//     durable before the caller folds it, even lines a crashed process left in the page cache.
//   - A line is durable once Sync (or AppendSync) returns after it; until then a crash may keep
//     any prefix of the unsynced lines, and a partial line, which the next Open quarantines.
//   - A failed write or sync poisons the Writer: it never retries, because after a failed fsync
//     the kernel may have dropped the dirty pages and a second fsync can report success for data
//     that is gone. Every later call returns the first error; the session must fail loudly.
//   - ReadPointer checks each line's bytes against the checksum measured when it was appended
//     before anything parses them, so bytes from a rewritten file are never mistaken for the
//     record they replaced.
package journal

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

// FileName is the name of the record file in a session directory.
const FileName = "record.jsonl"

// TornSuffix names the quarantine file beside a record: record.jsonl.torn.
const TornSuffix = ".torn"

// MaxLine bounds a line: every line, the newline included, is shorter than MaxLine bytes. Larger
// content goes to a blob beside the record (DESIGN §3.1).
const MaxLine = 1 << 20

// Verify is called by Open and Inspect with every complete line, in order, after its checksum
// has been checked; an error refuses the file. line is the line without its "\n" and is only valid
// during the call. loc.Seq is the line's number, counted from 1.
type Verify func(seq int64, line []byte, loc record.Locus) error

// Report says what Open or Inspect found.
type Report struct {
	// Lines is the number of complete lines, all verified.
	Lines int64
	// Size is the length in bytes of those lines: the file's length once the torn tail is gone.
	Size int64
	// Torn is the length of the torn tail: bytes after the last "\n". Open has quarantined them;
	// Inspect only counts them.
	Torn int64
}

// RefusedError is Open's or Inspect's refusal of a record file because a complete line failed its
// checksum or verify. The file was left untouched.
type RefusedError struct {
	Path   string
	Line   int64  // the line's number, counted from 1: its sequence number
	Reason string // why, in words a person can act on
	Err    error  // the error behind the reason
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("record %d of %s is refused: %s (the file was not changed)", e.Line, e.Path, e.Reason)
}

func (e *RefusedError) Unwrap() error { return e.Err }

func refuse(path string, line int64, err error) error {
	reason := err.Error()
	var de *record.DecodeError
	if errors.As(err, &de) {
		reason = de.Reason // it already says "record N"; say it once
	}
	return &RefusedError{Path: path, Line: line, Reason: reason, Err: err}
}

// Create creates a session directory (and any missing parents) with an empty record file in it,
// syncing each new directory entry, and returns a Writer at its start, holding the record's lock.
// It fails if the record exists: a session is never created over another.
func Create(fs fsys.FS, dir string) (*Writer, error) {
	if err := fsys.MkdirAllSync(fs, dir); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	path := filepath.Join(dir, FileName)
	// A session that exists is refused as one, whether or not its writer is at work.
	if _, err := fs.Stat(path); err == nil {
		return nil, fmt.Errorf("create record: %w", &iofs.PathError{Op: "create", Path: path, Err: iofs.ErrExist})
	}
	l, err := lock(fs, path)
	if err != nil {
		return nil, err
	}
	f, err := fs.Create(path)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("create record: %w", err), l.Unlock())
	}
	if err := f.Sync(); err != nil {
		return nil, errors.Join(fmt.Errorf("create record: %w", err), f.Close(), l.Unlock())
	}
	if err := fs.SyncDir(dir); err != nil {
		return nil, errors.Join(fmt.Errorf("create record %s: %w", path, err), f.Close(), l.Unlock())
	}
	return &Writer{f: f, lock: l, path: path}, nil
}

// Open takes a record's lock, verifies the record, quarantines its torn tail if it has one, and
// returns a Writer positioned after its last line, holding the lock. A *HeldError means another
// writer holds the record and nothing was read; a *RefusedError means a complete line failed and
// the file was not touched; any other error is an I/O error. verify may be nil.
func Open(fs fsys.FS, path string, verify Verify) (*Writer, Report, error) {
	f, err := fs.OpenAppend(path)
	if err != nil {
		return nil, Report{}, fmt.Errorf("open record: %w", err)
	}
	l, err := lock(fs, path)
	if err != nil {
		return nil, Report{}, errors.Join(err, f.Close())
	}
	w, rep, err := settle(fs, f, path, verify)
	if err != nil {
		return nil, rep, errors.Join(err, f.Close(), l.Unlock())
	}
	w.lock = l
	return w, rep, nil
}

// settle verifies an open record, quarantines and trims its torn tail, and syncs it.
func settle(fs fsys.FS, f fsys.File, path string, verify Verify) (*Writer, Report, error) {
	rep, err := scan(f, path, verify)
	if err != nil {
		return nil, rep, err
	}
	if rep.Torn > 0 {
		if err := quarantine(fs, f, path, rep); err != nil {
			return nil, rep, err
		}
		if err := f.Truncate(rep.Size); err != nil {
			return nil, rep, fmt.Errorf("trim the torn tail of %s: %w", path, err)
		}
	}
	// Sync even with nothing trimmed: a crashed process may have left complete lines in the
	// page cache, and the caller is about to act on them.
	if err := f.Sync(); err != nil {
		return nil, rep, fmt.Errorf("sync record %s: %w", path, err)
	}
	if err := fs.SyncDir(filepath.Dir(path)); err != nil {
		return nil, rep, fmt.Errorf("sync the directory of %s: %w", path, err)
	}
	return &Writer{f: f, path: path, seq: rep.Lines, off: rep.Size, synced: rep.Size}, rep, nil
}

// Inspect verifies a record file as Open does but never writes: a torn tail is counted in the
// report, not quarantined. It is for tools that look before they repair.
func Inspect(fs fsys.FS, path string, verify Verify) (Report, error) {
	f, err := fs.Open(path)
	if err != nil {
		return Report{}, fmt.Errorf("open record: %w", err)
	}
	rep, err := scan(f, path, verify)
	return rep, errors.Join(err, f.Close())
}

// Cut moves every byte of the record at path from offset at onward to record.jsonl.torn
// (appended, synced), then trims the record to at and syncs it. It is the explicit repair a
// person asks for when a crash on a filesystem that writes pages out of order left damage inside
// the unsynced tail: every line before at stays, and nothing is deleted — the cut bytes are kept
// beside the record. at must be the end of a complete line. It returns how many bytes moved. It
// takes the record's lock for the cut, and refuses with a *HeldError a record another writer holds:
// what looks damaged there may be a line being written.
func Cut(fs fsys.FS, path string, at int64) (int64, error) {
	f, err := fs.OpenAppend(path)
	if err != nil {
		return 0, fmt.Errorf("open record: %w", err)
	}
	defer f.Close()
	l, err := lock(fs, path)
	if err != nil {
		return 0, err
	}
	defer l.Unlock()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat record %s: %w", path, err)
	}
	if at < 0 || at > fi.Size() {
		return 0, fmt.Errorf("cut %s at %d: the record is %d bytes", path, at, fi.Size())
	}
	if at > 0 {
		var b [1]byte
		if _, err := f.ReadAt(b[:], at-1); err != nil || b[0] != '\n' {
			return 0, fmt.Errorf("cut %s at %d: that is not the end of a line", path, at)
		}
	}
	n := fi.Size() - at
	if n == 0 {
		return 0, nil
	}
	if err := quarantine(fs, f, path, Report{Size: at, Torn: n}); err != nil {
		return 0, err
	}
	if err := f.Truncate(at); err != nil {
		return 0, fmt.Errorf("trim %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("sync record %s: %w", path, err)
	}
	return n, nil
}
