package fsys

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"
)

// Permissions of what OS creates: a session's record holds a person's conversation, so it is
// readable by its owner only.
const (
	filePerm = 0o600
	dirPerm  = 0o700
)

// OS is the real filesystem, through the os package.
type OS struct{}

var _ FS = OS{}

// Create creates a new empty file, failing with fs.ErrExist if name exists.
func (OS) Create(name string) (File, error) {
	return openOS(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, filePerm)
}

// OpenAppend opens an existing file for reading and appending.
func (OS) OpenAppend(name string) (File, error) {
	return openOS(name, os.O_RDWR|os.O_APPEND, 0)
}

// Open opens an existing file for reading.
func (OS) Open(name string) (File, error) {
	return openOS(name, os.O_RDONLY, 0)
}

// openOS returns a nil File, not a nil *os.File wrapped in one, on failure.
func openOS(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// ReadFile returns the content of a file.
func (OS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

// Stat describes a file or directory.
func (OS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// Rename moves a file or directory.
func (OS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

// Remove removes a file or an empty directory.
func (OS) Remove(name string) error { return os.Remove(name) }

// RemoveAll removes a file or a directory and everything in it.
func (OS) RemoveAll(name string) error { return os.RemoveAll(name) }

// MkdirAll creates a directory and any missing parents.
func (OS) MkdirAll(dir string) error { return os.MkdirAll(dir, dirPerm) }

// SyncDir opens a directory and syncs it, which makes its entries durable on Linux and the BSDs.
func (OS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := d.Sync()
	cerr := d.Close()
	return errors.Join(serr, cerr)
}

// Lock takes an exclusive flock(2) on the lock file name, without waiting, and writes this process
// into it. flock belongs to the open file, so a second Lock in this process is refused too.
func (OS) Lock(name string) (Lock, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, filePerm)
	if err != nil {
		return nil, err
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockedError{Path: name, Holder: readHolder(f)}
		}
		if errors.Is(err, syscall.ENOLCK) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.ENOSYS) {
			err = fmt.Errorf("%w: this filesystem cannot lock files, and a session's writer must; keep rein's state (REIN_HOME) on a local filesystem", err)
		}
		return nil, &fs.PathError{Op: "lock", Path: name, Err: err}
	}
	// Written in place, never through a rename: the lock lives on this file's inode.
	b := encodeHolder(self(time.Now()))
	if err := f.Truncate(0); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	if _, err := f.WriteAt(b, 0); err != nil {
		return nil, errors.Join(err, f.Truncate(0), f.Close())
	}
	return &osLock{f: f}, nil
}

// Probe takes a shared flock(2) on the lock file name, without waiting, and lets it go at once:
// refused, the file is held, and it says by whom.
func (OS) Probe(name string) (Holder, bool, error) {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return Holder{}, false, nil
	}
	if err != nil {
		return Holder{}, false, err
	}
	defer f.Close()
	switch err := flock(f, syscall.LOCK_SH|syscall.LOCK_NB); {
	case err == nil:
		return Holder{}, false, nil // closing the file releases it
	case errors.Is(err, syscall.EWOULDBLOCK):
		return readHolder(f), true, nil
	default:
		return Holder{}, false, &fs.PathError{Op: "lock", Path: name, Err: err}
	}
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}

// readHolder reads who holds a lock file. A holder whose process is gone is not believed: the
// file is held by someone who has not written (a reader probing it, or a writer that has just
// taken it), and what it says was left by a holder that crashed.
func readHolder(f *os.File) Holder {
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	h := decodeHolder(b[:n])
	if h.Known() && syscall.Kill(h.PID, 0) == syscall.ESRCH {
		return Holder{}
	}
	return h
}

// osLock is a held flock.
type osLock struct {
	mu sync.Mutex
	f  *os.File
}

// Unlock empties the lock file, so that it names nobody, and closes it, which releases the lock.
func (l *osLock) Unlock() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	terr := l.f.Truncate(0)
	cerr := l.f.Close()
	l.f = nil
	return errors.Join(terr, cerr)
}
