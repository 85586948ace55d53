package fstool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/reinhq/rein/internal/fsys"
)

// IrregularError refuses a path that names something other than a regular file or, for the
// searches, a directory: a named pipe, a device or a socket. Reading or writing one can wait for
// ever (a named pipe with no one at the other end) or do something else than a file does.
type IrregularError struct {
	Path string // as the call gave it
	Kind string // what it is, "a named pipe (FIFO)"
	Does string // the tool and what it does, "read_file reads"
}

func (e *IrregularError) Error() string {
	return fmt.Sprintf("%s is %s; %s regular files only", e.Path, e.Kind, e.Does)
}

// openFlags are added to every open of a file by a file tool. O_NONBLOCK makes opening a named
// pipe return at once, where a plain open waits for the other end for ever (for writing with no
// reader it fails with ENXIO instead); O_NOCTTY keeps a terminal device from becoming rein's.
// For a regular file neither changes anything.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY

// openRegular opens the workspace-relative path rel, never blocking, and returns it only if it is
// a regular file. The opened file's own mode decides (fstat), not an earlier look at the name, so
// a path swapped for a named pipe between a check and the open is refused, not waited on. name is
// the path as the call gave it and does the refusing tool, for an IrregularError.
func (w *Workspace) openRegular(rel string, flag int, perm fs.FileMode, name, does string) (*os.File, fs.FileInfo, error) {
	f, err := w.root.OpenFile(rel, flag|openFlags, perm)
	if err != nil {
		// A socket, or a named pipe opened for writing with no reader, cannot be opened at all:
		// say what it is.
		if errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.ENODEV) {
			if fi, serr := w.root.Stat(rel); serr == nil && !fi.Mode().IsRegular() {
				return nil, nil, &IrregularError{Path: name, Kind: fsys.KindOf(fi.Mode()), Does: does}
			}
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &IrregularError{Path: name, Kind: fsys.KindOf(fi.Mode()), Does: does}
	}
	return f, fi, nil
}

// statRegular looks at rel before anything opens it, following symbolic links inside the
// workspace, and returns what it is; something that exists and is neither a regular file nor a
// directory (which each tool answers in its own words) is refused by name, so that a device is not
// even opened. openRegular judges again after opening.
func (w *Workspace) statRegular(rel, name, does string) (fs.FileInfo, error) {
	fi, err := w.root.Stat(rel)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return nil, &IrregularError{Path: name, Kind: fsys.KindOf(fi.Mode()), Does: does}
	}
	return fi, nil
}

// readChunk is how much readAll reads between looks at ctx.
const readChunk = 1 << 20

// readAll reads f, a regular file of about size bytes, to its end, stopping with ctx's error when
// ctx is cancelled, and with errTooLarge past limit bytes.
func readAll(ctx context.Context, f *os.File, size int64, limit int64) ([]byte, error) {
	buf := make([]byte, 0, min(max(size, 512), limit)+1)
	for {
		if err := ctx.Err(); err != nil {
			return buf, err
		}
		if int64(len(buf)) > limit {
			return buf, errTooLarge
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := buf[len(buf):min(cap(buf), len(buf)+readChunk)]
		n, err := f.Read(room)
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			if int64(len(buf)) > limit {
				return buf, errTooLarge
			}
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// errTooLarge is readAll's answer to a file past its limit.
var errTooLarge = errors.New("the file is larger than the limit")
