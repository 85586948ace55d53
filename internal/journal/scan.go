package journal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"path/filepath"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

// scanChunk is the most scan reads at once; the buffer starts smaller for a small file.
const scanChunk = 1 << 20

var errTooLong = fmt.Errorf("it is %d bytes or longer, and no line rein writes is", MaxLine)

// scan reads a record file from the start, checking and verifying every complete line, and
// reports the lines and the torn tail. It holds at most one chunk and one line in memory, so a
// long torn tail or a line without end costs no more than a good file.
func scan(f fsys.File, path string, verify Verify) (Report, error) {
	var rep Report
	fi, err := f.Stat()
	if err != nil {
		return rep, fmt.Errorf("read record %s: %w", path, err)
	}
	buf := make([]byte, min(max(fi.Size()+1, 4096), scanChunk))
	var base int64 // the file offset of buf[0]
	n := 0         // how much of buf holds file bytes
	long := false  // the bytes before buf, since the last line, already make too long a line
	for {
		m, rerr := f.ReadAt(buf[n:], base+int64(n))
		if rerr != nil && rerr != io.EOF {
			return rep, fmt.Errorf("read record %s: %w", path, rerr)
		}
		if m == 0 && rerr == nil {
			return rep, fmt.Errorf("read record %s: %w", path, io.ErrNoProgress)
		}
		n += m
		start := 0 // where the unfinished line begins in buf
		for {
			i := bytes.IndexByte(buf[start:n], '\n')
			if i < 0 {
				break
			}
			loc := record.Locus{Seq: rep.Lines + 1, Off: base + int64(start), Len: int64(i + 1)}
			if long || loc.Len >= MaxLine {
				return rep, refuse(path, loc.Seq, errTooLong)
			}
			line := buf[start : start+i]
			if loc.Sum, err = record.Checksum(line); err != nil {
				return rep, refuse(path, loc.Seq, err)
			}
			if verify != nil {
				if err := verify(loc.Seq, line, loc); err != nil {
					return rep, refuse(path, loc.Seq, err)
				}
			}
			rep.Lines, rep.Size = loc.Seq, loc.Off+loc.Len
			start += i + 1
		}
		switch {
		case start > 0: // move the unfinished line to the front
			n = copy(buf, buf[start:n])
			base += int64(start)
		case n < len(buf): // room for more
		case len(buf) < MaxLine:
			buf = append(buf, make([]byte, len(buf))...)[:len(buf)*2]
		default: // a line this long cannot be a good one: count it, don't hold it
			base += int64(n)
			n = 0
			long = true
		}
		if rerr == io.EOF {
			break
		}
	}
	rep.Torn = base + int64(n) - rep.Size
	return rep, nil
}

// quarantine appends the torn tail of the record open as f to record.jsonl.torn, and makes it
// durable there, creating the file if it must.
func quarantine(fs fsys.FS, f fsys.File, path string, rep Report) error {
	name := path + TornSuffix
	t, err := fs.OpenAppend(name)
	created := false
	if errors.Is(err, iofs.ErrNotExist) {
		t, err = fs.Create(name)
		created = true
	}
	if err != nil {
		return fmt.Errorf("quarantine the torn tail of %s: %w", path, err)
	}
	_, err = io.Copy(t, io.NewSectionReader(f, rep.Size, rep.Torn))
	if err == nil {
		err = t.Sync()
	}
	if err = errors.Join(err, t.Close()); err != nil {
		return fmt.Errorf("quarantine the torn tail of %s: %w", path, err)
	}
	if created {
		if err := fs.SyncDir(filepath.Dir(name)); err != nil {
			return fmt.Errorf("quarantine the torn tail of %s: %w", path, err)
		}
	}
	return nil
}
