package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// flock is a held flock(2): closing its file releases it, and so does the process's death.
type flock struct{ f *os.File }

// release unlocks before it closes: a child process forked by another goroutine at that moment
// holds a copy of the descriptor until it execs, and closing alone would leave the lock held
// through the copy.
func (l *flock) release() {
	if l != nil && l.f != nil {
		_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		l.f.Close()
		l.f = nil
	}
}

// tryLock takes an flock without waiting; ok is false when someone else holds it.
func tryLock(path string, how int) (l *flock, ok bool, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	return &flock{f: f}, true, nil
}

// waitLock takes an flock, waiting for it until ctx ends. flock(2) cannot be interrupted by a
// context, so the wait runs in a goroutine; one abandoned by ctx releases the lock when it gets it.
func waitLock(ctx context.Context, path string, how int) (*flock, error) {
	if l, ok, err := tryLock(path, how); err != nil || ok {
		return l, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- syscall.Flock(int(f.Fd()), how) }()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return &flock{f: f}, nil
	case <-ctx.Done():
		go func() {
			<-done
			f.Close()
		}()
		return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
	}
}

// acquire takes a session for one operation, in this order: the session's place in this process,
// the repository's shared lock (GC takes it exclusively), the session's exclusive lock (another
// process holding it is refused with ErrBusy). Holding them all, it removes the git lock files a
// killed holder left in the session's index and refs: nobody else can be writing them.
func (r *Repo) acquire(ctx context.Context, id string) (*sess, func(), error) {
	s, release, err := r.hold(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if err := r.clearStaleLocks(s); err != nil {
		release()
		return nil, nil, err
	}
	return s, release, nil
}

// hold is acquire without the clearing of git's lock files, for an operation that may run no
// git at all (a snapshot answered by its watch): it clears them itself before its first git
// command.
func (r *Repo) hold(ctx context.Context, id string) (*sess, func(), error) {
	s, err := r.session(id)
	if err != nil {
		return nil, nil, err
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	repoLock, err := waitLock(ctx, filepath.Join(r.gitDir, "rein", "lock"), syscall.LOCK_SH)
	if err != nil {
		<-s.sem
		return nil, nil, err
	}
	fail := func(err error) (*sess, func(), error) {
		repoLock.release()
		<-s.sem
		return nil, nil, err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fail(err)
	}
	sessLock, ok, err := tryLock(filepath.Join(s.dir, "lock"), syscall.LOCK_EX)
	if err != nil {
		return fail(err)
	}
	if !ok {
		return fail(fmt.Errorf("%w: another process is checkpointing session %s; one process writes a session at a time", ErrBusy, id))
	}
	release := func() {
		sessLock.release()
		repoLock.release()
		<-s.sem
	}
	return s, release, nil
}

// clearStaleLocks removes git's lock files from the session's directory and refs.
func (r *Repo) clearStaleLocks(s *sess) error {
	if err := removeLocks(s.dir, false); err != nil {
		return err
	}
	return removeLocks(filepath.Join(r.gitDir, filepath.FromSlash(refPrefix(s.id))), true)
}

func removeLocks(dir string, deep bool) error {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			if p != dir && !deep {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".lock") {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clear stale git locks: %w", err)
	}
	return nil
}
