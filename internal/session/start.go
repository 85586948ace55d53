package session

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

// Start makes a new session in dir, a directory of sessions (a workspace's ProjectDir, or the one
// a parent lives in: Session.ProjectDir). It is the one way rein makes a session: rein run, a fork,
// a child agent and the host's create all come through it.
//
// It mints an id no directory in dir has yet, writes session_started with that id (whatever
// started.Session held) and then first, if any (a fork's inherited record), each synced. A session
// that fails to start leaves nothing behind: its directory is removed, unless another process made
// that directory first (the error then wraps fs.ErrExist), which is not Start's to remove.
func Start(dir string, opts Options, started record.SessionStarted, first ...record.Payload) (*Session, error) {
	opts = opts.withDefaults()
	id, err := freeID(opts, dir)
	if err != nil {
		return nil, err
	}
	started.Session = id
	sdir := filepath.Join(dir, id)
	s, err := Create(sdir, opts, &started)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("start a session: %w", err)
		}
		return nil, discard(opts.FS, sdir, err)
	}
	if len(first) > 0 {
		if err := s.Commit(first...); err != nil {
			return nil, discard(opts.FS, sdir, errors.Join(err, s.Close()))
		}
	}
	return s, nil
}

// Fork starts a session beside parent, in the directory of sessions it lives in, whose
// session_started names parent (whatever started.Parent held) and whose first record inherits
// parent's context up to turn at (0: all of it). A fork only reads its parent, so parent may be a
// Session made by Load while another process writes it.
func Fork(parent *Session, at int64, opts Options, started record.SessionStarted) (*Session, error) {
	inh, err := parent.Inheritance(at)
	if err != nil {
		return nil, fmt.Errorf("fork %s: %w", parent.ID(), err)
	}
	started.Parent = parent.ID()
	return Start(parent.ProjectDir(), opts, started, inh)
}

// ProjectDir returns the directory of sessions s lives in: the ProjectDir of its workspace, for a
// session made there. Its forks and child agents are made in it too.
func (s *Session) ProjectDir() string { return filepath.Dir(filepath.Dir(s.path)) }

// freeID mints a session id no directory in dir has yet (two processes minting in the same
// microsecond differ in NewID's random tail; this catches the rare tie).
func freeID(opts Options, dir string) (string, error) {
	for range 8 {
		id := NewID(opts.Now())
		_, err := opts.FS.Stat(filepath.Join(dir, id))
		if errors.Is(err, fs.ErrNotExist) {
			return id, nil
		}
		if err != nil {
			return "", fmt.Errorf("start a session: %w", err)
		}
	}
	return "", errors.New("start a session: no free session id after 8 tries; try again")
}

// discard removes what a failed start left in sdir.
func discard(fs fsys.FS, sdir string, err error) error {
	if rerr := fs.RemoveAll(sdir); rerr != nil {
		err = errors.Join(err, fmt.Errorf("remove the failed session's directory: %w", rerr))
	}
	return fmt.Errorf("start a session: %w", err)
}
