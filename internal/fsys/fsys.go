// Package fsys is the file access of rein's durable state, behind an interface small enough that a
// test can crash it. It provides OS, the real filesystem, and Mem, an in-memory filesystem that
// remembers which bytes and which directory entries were synced and, on Crash, keeps only those plus
// a random part of the rest, the way a power cut does.
//
// The interface is sized for the journal: files are created exclusively or opened for appending or
// reading, never written in place, so every write lands at the end of its file. Errors follow the
// os package: they are *fs.PathError values that match fs.ErrNotExist, fs.ErrExist, fs.ErrClosed
// and so on with errors.Is, whichever implementation produced them.
//
// Durability is explicit and follows POSIX: a write is durable once its file is synced; a file's
// directory entry (creation, rename, removal) is durable once its parent directory is synced.
//
// Locks (lock.go) keep one writer per file across processes: an exclusive lock on a lock file,
// released by the kernel when its holder dies, with the holder's name written inside for whoever
// is refused.
package fsys

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
)

// FS is the filesystem the journal reads and writes through.
type FS interface {
	// Create creates a new empty file open for reading and appending. It fails with fs.ErrExist
	// if the name exists: a file is never silently clobbered.
	Create(name string) (File, error)
	// OpenAppend opens an existing file for reading and appending.
	OpenAppend(name string) (File, error)
	// Open opens an existing file for reading only.
	Open(name string) (File, error)
	// ReadFile returns the whole content of a file.
	ReadFile(name string) ([]byte, error)
	// Stat describes a file or directory.
	Stat(name string) (fs.FileInfo, error)
	// Rename moves a file or directory, replacing any file at newname.
	Rename(oldname, newname string) error
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// RemoveAll removes a file or a directory and everything in it; a name that does not exist is
	// not an error. Like Remove, it is durable once the parent directory is synced.
	RemoveAll(name string) error
	// MkdirAll creates a directory and any missing parents; it is not an error if it exists.
	MkdirAll(dir string) error
	// SyncDir makes the entries of a directory durable: files created in, renamed into or
	// removed from it since its last sync.
	SyncDir(dir string) error
	// Lock takes the exclusive lock of the lock file name, creating the file if it is missing,
	// without waiting, and writes this holder into it. It fails with a *LockedError (matching
	// ErrLocked) naming the holder if the lock is held: by another process or by another Lock in
	// this one. The lock lasts until Unlock, or until the process dies.
	Lock(name string) (Lock, error)
	// Probe reports whether the lock of the lock file name is held, and by whom, without
	// blocking a holder: it never takes the lock in a way a Lock could be refused by for longer
	// than the probe itself. A missing file is not held.
	Probe(name string) (Holder, bool, error)
}

// File is an open file. Writes always append.
type File interface {
	io.Writer
	io.ReaderAt
	// Sync makes every byte written so far, and the file's length, durable.
	Sync() error
	// Truncate changes the file's length; a later write appends at the new end.
	Truncate(size int64) error
	Stat() (fs.FileInfo, error)
	Close() error
}

// MkdirAllSync creates dir and any missing parents, and syncs the parent of each directory it
// created, so that once it returns the whole path survives a crash. Directories that already
// existed are not synced again.
func MkdirAllSync(fsys FS, dir string) error {
	dir = filepath.Clean(dir)
	// Find the deepest ancestor that exists; every directory below it is new.
	var created []string
	for d := dir; ; {
		_, err := fsys.Stat(d)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("create directory %s: %w", dir, err)
		}
		created = append(created, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if len(created) == 0 {
		return nil
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	// Sync from the top down, so that no durable entry points at a directory that is not.
	for i := len(created) - 1; i >= 0; i-- {
		if err := fsys.SyncDir(filepath.Dir(created[i])); err != nil {
			return fmt.Errorf("create directory %s: %w", dir, err)
		}
	}
	return nil
}
