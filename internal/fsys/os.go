package fsys

import (
	"errors"
	"io/fs"
	"os"
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
