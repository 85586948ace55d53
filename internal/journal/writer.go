package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

// ErrPoisoned is wrapped by the error of a failed write or sync, and by every error the Writer
// returns after it.
var ErrPoisoned = errors.New("the record is poisoned: rein never retries a failed write or sync")

// ErrLine is wrapped by Append's refusal of a line that breaks the file's rules. Nothing was
// written, and the Writer is still good.
var ErrLine = errors.New("not a line this record can hold")

// Writer appends lines to one record file. It is not safe for concurrent use: a session has one
// writer, on one goroutine.
type Writer struct {
	f      fsys.File
	lock   fsys.Lock // the record's writer lock, released by Close
	path   string
	seq    int64 // the sequence number of the last line
	off    int64 // the file's length: the offset of the next line
	synced int64 // the file's length at the last successful sync
	err    error // the first write or sync failure; it poisons the writer
}

// Path returns the record file's path.
func (w *Writer) Path() string { return w.path }

// Next returns the sequence number the next appended line must carry.
func (w *Writer) Next() int64 { return w.seq + 1 }

// Size returns the length of the file: the offset of the next line.
func (w *Writer) Size() int64 { return w.off }

// Append writes one encoded line, which must end with its only "\n", be shorter than MaxLine,
// pass record.Checksum, and carry sequence number Next(). It returns the line's locus. The line
// is not durable until Sync.
func (w *Writer) Append(line []byte) (record.Locus, error) {
	if err := w.usable(); err != nil {
		return record.Locus{}, err
	}
	seq := w.seq + 1
	sum, err := check(line, seq)
	if err != nil {
		return record.Locus{}, fmt.Errorf("append record %d to %s: %w: %w", seq, w.path, ErrLine, err)
	}
	n, err := w.f.Write(line)
	if err == nil && n != len(line) {
		err = io.ErrShortWrite
	}
	if err != nil {
		// Part of the line may be in the file now; anything appended after it would make a
		// damaged line in the middle, which the next Open must refuse. Stop here instead: the
		// partial line is a torn tail the next Open quarantines.
		w.err = fmt.Errorf("append record %d to %s: %w (%w)", seq, w.path, err, ErrPoisoned)
		return record.Locus{}, w.err
	}
	loc := record.Locus{Seq: seq, Off: w.off, Len: int64(len(line)), Sum: sum}
	w.seq, w.off = seq, w.off+int64(len(line))
	return loc, nil
}

// Sync makes every appended line durable. A failure poisons the Writer.
func (w *Writer) Sync() error {
	if err := w.usable(); err != nil {
		return err
	}
	if w.synced == w.off {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		w.err = fmt.Errorf("sync record %s through record %d: %w (%w)", w.path, w.seq, err, ErrPoisoned)
		return w.err
	}
	w.synced = w.off
	return nil
}

// SyncBehind returns a function that makes every line appended so far durable — an fsync of the
// file, which covers the lines appended while it runs too — and that may run on another goroutine
// while the Writer goes on appending. Its failure is its caller's to act on: it does not poison
// the Writer (whose next Sync syncs again), so the caller must stop writing on it.
func (w *Writer) SyncBehind() func() error {
	if err := w.usable(); err != nil {
		return func() error { return err }
	}
	f, path, seq := w.f, w.path, w.seq
	return func() error {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync record %s through record %d: %w (%w)", path, seq, err, ErrPoisoned)
		}
		return nil
	}
}

// AppendSync appends one line and syncs it.
func (w *Writer) AppendSync(line []byte) (record.Locus, error) {
	loc, err := w.Append(line)
	if err != nil {
		return loc, err
	}
	return loc, w.Sync()
}

// Close closes the file without syncing it, then releases the record's lock; call Sync first for
// what must be durable. Later calls fail with fs.ErrClosed.
func (w *Writer) Close() error {
	if w.f == nil {
		return fmt.Errorf("close record %s: %w", w.path, iofs.ErrClosed)
	}
	err := w.f.Close()
	w.f = nil
	if err != nil {
		err = fmt.Errorf("close record %s: %w", w.path, err)
	}
	// Only once the file is closed: the next writer must find nothing of this one still open.
	if w.lock != nil {
		if uerr := w.lock.Unlock(); uerr != nil {
			err = errors.Join(err, fmt.Errorf("unlock record %s: %w", w.path, uerr))
		}
	}
	return err
}

func (w *Writer) usable() error {
	switch {
	case w.err != nil:
		return w.err
	case w.f == nil:
		return fmt.Errorf("record %s: %w", w.path, iofs.ErrClosed)
	}
	return nil
}

// check enforces the file's rules on one line that must carry seq, and returns its checksum.
func check(line []byte, seq int64) (uint32, error) {
	n := len(line)
	switch {
	case n == 0 || line[n-1] != '\n':
		return 0, errors.New("it does not end with a newline")
	case n >= MaxLine:
		return 0, fmt.Errorf("it is %d bytes; a line must be shorter than %d (store large content as a blob)", n, MaxLine)
	case bytes.IndexByte(line[:n-1], '\n') >= 0:
		return 0, errors.New("it holds a newline before its end")
	}
	sum, err := record.Checksum(line[:n-1])
	if err != nil {
		return 0, err
	}
	if got, ok := lineSeq(line); !ok {
		return 0, errors.New(`it does not open with {"v":N,"seq":S,`)
	} else if got != seq {
		return 0, fmt.Errorf("it carries sequence number %d where %d belongs", got, seq)
	}
	return sum, nil
}

// lineSeq reads the sequence number from the fixed opening of a record line, `{"v":N,"seq":S,`,
// without parsing the JSON.
func lineSeq(line []byte) (int64, bool) {
	const v, s = `{"v":`, `,"seq":`
	if !bytes.HasPrefix(line, []byte(v)) {
		return 0, false
	}
	i := len(v)
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i == len(v) || !bytes.HasPrefix(line[i:], []byte(s)) {
		return 0, false
	}
	i += len(s)
	var seq int64
	j := i
	for ; j < len(line) && line[j] >= '0' && line[j] <= '9'; j++ {
		if j-i >= 18 {
			return 0, false // more digits than a sequence number can have
		}
		seq = seq*10 + int64(line[j]-'0')
	}
	if j == i || j >= len(line) || line[j] != ',' {
		return 0, false
	}
	return seq, true
}
