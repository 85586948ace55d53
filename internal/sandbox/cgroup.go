package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Cgroup is the cgroup (v2) of one command started by Sandbox.Start: every process the command
// starts is in it, a daemon that left its process group (setsid) included, until Kill ends them
// all at once. Nothing but the command's processes is ever in it.
type Cgroup struct {
	dir string
	fd  *os.File // the directory, open while the command starts into it
}

// cgroupSeq numbers the cgroups this process makes.
var cgroupSeq atomic.Int64

// CgroupRoot is the cgroup under which this process makes its commands' cgroups, in the
// hierarchy directory parent: one per rein process, named for its pid, so that one cgroup.kill
// there ends every command rein started, and no cgroup of rein's is ever anywhere else.
func CgroupRoot(parent string) string {
	return filepath.Join(parent, fmt.Sprintf("rein-%d", os.Getpid()))
}

// newCgroup makes an empty cgroup under this process's root in parent (made first if need be).
func newCgroup(parent string) (*Cgroup, error) {
	root := CgroupRoot(parent)
	if err := os.Mkdir(root, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("make rein's cgroup: %w", err)
	}
	dir := filepath.Join(root, fmt.Sprintf("c%d", cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make the command's cgroup: %w", err)
	}
	fd, err := os.Open(dir)
	if err != nil {
		syscall.Rmdir(dir)
		return nil, fmt.Errorf("open the command's cgroup: %w", err)
	}
	return &Cgroup{dir: dir, fd: fd}, nil
}

// Path is the cgroup's directory, whose cgroup.kill ends every process in it.
func (c *Cgroup) Path() string { return c.dir }

// Kill sends SIGKILL to every process in the cgroup, at once, by the kernel (cgroup.kill): none
// can start another in between and escape.
func (c *Cgroup) Kill() error {
	f, err := os.OpenFile(filepath.Join(c.dir, "cgroup.kill"), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("kill the command's cgroup: %w", err)
	}
	defer f.Close()
	if _, err := f.Write([]byte("1")); err != nil {
		return fmt.Errorf("kill the command's cgroup: %w", err)
	}
	return nil
}

// removeWait bounds how long Remove keeps trying, in the background, to remove a cgroup whose
// killed processes have not all exited yet.
const removeWait = 10 * time.Second

// Remove kills what is left in the cgroup and removes it: now if it is empty, else in the
// background once its last process exited (AwaitRemovals waits for those). It is called once the
// command is done.
func (c *Cgroup) Remove() {
	if c.fd != nil {
		c.fd.Close()
	}
	if err := syscall.Rmdir(c.dir); err == nil || errors.Is(err, syscall.ENOENT) {
		return
	}
	c.Kill()
	removals.Add(1)
	go func() {
		defer removals.Done()
		deadline := time.Now().Add(removeWait)
		for wait := 100 * time.Microsecond; time.Now().Before(deadline); wait = min(2*wait, 50*time.Millisecond) {
			time.Sleep(wait)
			if err := syscall.Rmdir(c.dir); err == nil || !errors.Is(err, syscall.EBUSY) {
				return
			}
		}
	}()
}

// removals counts the cgroups being removed in the background.
var removals sync.WaitGroup

// AwaitRemovals waits, at most max, for the cgroups being removed in the background (Remove) to
// be removed, so that a process that ends leaves none behind.
func AwaitRemovals(max time.Duration) {
	done := make(chan struct{})
	go func() {
		removals.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(max):
	}
}
