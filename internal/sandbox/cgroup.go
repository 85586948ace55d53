package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Cgroup is the cgroup (v2) of one command started by Sandbox.Start: every process the command
// starts is in it, a daemon that left its process group (setsid) included, until Kill ends them
// all at once. Nothing but the command's processes is ever in it.
type Cgroup struct {
	dir  string
	fd   *os.File // the directory, open while the command starts into it
	kill *os.File // its cgroup.kill, opened with it: Kill, as a command ends, only writes
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
	if err := os.Mkdir(root, 0o755); err == nil {
		sweep(parent)
	} else if !errors.Is(err, os.ErrExist) {
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
	kill, err := os.OpenFile(filepath.Join(dir, "cgroup.kill"), os.O_WRONLY, 0)
	if err != nil {
		fd.Close()
		syscall.Rmdir(dir)
		return nil, fmt.Errorf("open the command's cgroup.kill: %w", err)
	}
	return &Cgroup{dir: dir, fd: fd, kill: kill}, nil
}

// sweep removes from parent the roots of rein processes that are gone: one killed (SIGKILL
// leaves no time to remove anything) leaves its root behind, empty once its commands' cgroups
// are (its keeper kills them), and one killed as it probed leaves its probe. Only an empty
// cgroup can be removed, so a root still holding a command is left; a root or a probe whose pid
// is in use is not touched.
func sweep(parent string) {
	roots, _ := filepath.Glob(filepath.Join(parent, "rein-*"))
	for _, root := range roots {
		name := strings.TrimPrefix(filepath.Base(root), "rein-")
		probe := strings.HasPrefix(name, "probe-")
		pid, err := strconv.Atoi(strings.TrimPrefix(name, "probe-"))
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		if probe {
			syscall.Rmdir(root)
			continue
		}
		kids, _ := os.ReadDir(root)
		for _, k := range kids {
			if k.IsDir() {
				syscall.Rmdir(filepath.Join(root, k.Name()))
			}
		}
		syscall.Rmdir(root)
	}
}

// Path is the cgroup's directory, whose cgroup.kill ends every process in it.
func (c *Cgroup) Path() string { return c.dir }

// Kill sends SIGKILL to every process in the cgroup, at once, by the kernel (cgroup.kill): none
// can start another in between and escape.
func (c *Cgroup) Kill() error {
	if _, err := c.kill.Write([]byte("1")); err != nil {
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
	defer c.kill.Close()
	if err := syscall.Rmdir(c.dir); err == nil || errors.Is(err, syscall.ENOENT) {
		return
	}
	c.Kill()
	removals.begin()
	go func() {
		defer removals.end()
		deadline := time.Now().Add(removeWait)
		for wait := 100 * time.Microsecond; time.Now().Before(deadline); wait = min(2*wait, 50*time.Millisecond) {
			time.Sleep(wait)
			if err := syscall.Rmdir(c.dir); err == nil || !errors.Is(err, syscall.EBUSY) {
				return
			}
		}
	}()
}

// removals counts the cgroups being removed in the background. Not a sync.WaitGroup: a removal
// may begin while AwaitRemovals waits (a sandbox closed as its last command is released), which
// a WaitGroup forbids when its count is zero.
var removals pending

// pending counts work under way, and says when none is.
type pending struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n falls to zero; a new one when it rises from zero
}

func (p *pending) begin() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		p.idle = make(chan struct{})
	}
	p.n++
}

func (p *pending) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n--; p.n == 0 {
		close(p.idle)
	}
}

// done returns a channel closed once nothing is under way, work begun meanwhile included; nil
// when nothing is now.
func (p *pending) done() chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		return nil
	}
	return p.idle
}

// AwaitRemovals waits, at most max, for the cgroups being removed in the background (Remove) to
// be removed, so that a process that ends leaves none behind.
func AwaitRemovals(max time.Duration) {
	done := removals.done()
	if done == nil {
		return
	}
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
