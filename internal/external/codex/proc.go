package codex

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/reinhq/rein/internal/procs"
)

// server is one running `codex app-server`: the leader of its own process group, its standard
// input and the messages read from its standard output.
type server struct {
	cmd  *exec.Cmd
	pgid int
	in   *os.File // the app-server's standard input, written by the Turn's goroutine only

	msgs   chan message  // decoded lines, in order; closed when standard output ends
	bad    chan error    // lines that are not JSON-RPC, said
	quit   chan struct{} // closed by kill and close, so the reader never blocks on msgs
	exited chan struct{} // closed once the leader has been reaped; then state is set
	state  *os.ProcessState
	stderr *procs.Tail

	// What the Turns that use it keep: the ids of rein's requests run on across turns, so a late
	// answer never matches a later request; the key of the turns it serves; its version, once
	// initialize said it; the thread it last ran.
	nextID  int64
	key     string
	version string
	thread  string

	once sync.Once
}

// start runs path app-server in dir with env (nil: this process's), the leader of a new process
// group.
func start(path, dir string, env []string) (*server, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start codex: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("start codex: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("start codex: %w", err)
	}
	// The pipes are rein's own, not exec's, so Wait neither waits for a descendant that holds
	// standard error open nor closes standard output before its last line is read.
	cmd := exec.Command(path, "app-server")
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("start codex: %w", err)
	}
	s := &server{cmd: cmd, pgid: cmd.Process.Pid, in: inW, msgs: make(chan message, 64),
		bad: make(chan error, 8), quit: make(chan struct{}), exited: make(chan struct{}), stderr: &procs.Tail{Max: 2048}}
	go s.read(outR)
	go func() {
		io.Copy(s.stderr, errR)
		errR.Close()
	}()
	go func() {
		s.cmd.Wait()
		s.state = s.cmd.ProcessState
		close(s.exited)
	}()
	return s, nil
}

// read decodes standard output line by line until it ends.
func (s *server) read(r *os.File) {
	defer r.Close()
	defer close(s.msgs)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			m, derr := decode(line)
			if derr != nil {
				select {
				case s.bad <- derr:
				case <-s.quit:
					return
				default: // a flood of bad lines keeps the first few
				}
			} else {
				select {
				case s.msgs <- m:
				case <-s.quit:
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// send writes one message; a program that does not read its input within a few seconds is
// taken as stuck.
func (s *server) send(m message) error {
	s.in.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := s.in.Write(encode(m)); err != nil {
		return fmt.Errorf("write to codex app-server: %w", err)
	}
	return nil
}

// marks is what has been seen of an app-server's tree: its processes and their process groups.
// Codex runs commands and its shell probes in sessions of their own, so a process can leave the
// app-server's group, and, once its parent has exited, its tree; its group still names it.
type marks struct {
	pids   map[int]bool
	groups map[int]bool
}

func newMarks() *marks { return &marks{pids: map[int]bool{}, groups: map[int]bool{}} }

// look reads the process table once and makes m the app-server's group, everything below it,
// below the processes seen before, and in the groups seen before, that has not exited. What has
// exited is dropped from m, so that a pid or group id the system gives out again later is not
// taken for the tree's (a turn may run for hours). It returns the processes it found.
func (s *server) look(m *marks) []procs.Proc {
	table, err := procs.All()
	if err != nil {
		return nil
	}
	own := syscall.Getpgrp()
	m.groups[s.pgid] = true
	roots := []int{s.pgid}
	for pid := range m.pids {
		roots = append(roots, pid)
	}
	found := procs.Below(table, roots...)
	for _, p := range table {
		if m.groups[p.PGID] || m.pids[p.PID] {
			found = append(found, p)
		}
	}
	clear(m.pids)
	clear(m.groups)
	m.groups[s.pgid] = true
	live := found[:0]
	for _, p := range found {
		if p.Zombie || p.PID <= 1 || p.PID == os.Getpid() {
			continue
		}
		m.pids[p.PID] = true
		if p.PGID != own && p.PGID > 1 {
			m.groups[p.PGID] = true
		}
		live = append(live, p)
	}
	return live
}

// kill ends the app-server's whole tree at once: its process group, every process descended
// from it whatever group or session it moved to, and every process of m and of m's groups. The
// tree is first stopped, so nothing forks out of it while it is read, then killed; kill returns
// once every process of it has exited.
func (s *server) kill(m *marks) {
	s.once.Do(func() { close(s.quit) })
	s.in.Close()
	if m == nil {
		m = newMarks()
	}
	stopped := map[int]bool{}
	for range 8 { // until a reading finds nothing new: a process can fork once before it stops
		found := false
		for _, p := range s.look(m) {
			if !stopped[p.PID] {
				stopped[p.PID] = true
				syscall.Kill(p.PID, syscall.SIGSTOP)
				found = true
			}
		}
		if !found {
			break
		}
	}
	for g := range m.groups {
		syscall.Kill(-g, syscall.SIGKILL)
	}
	var pids []int
	for pid := range m.pids {
		syscall.Kill(pid, syscall.SIGKILL)
		pids = append(pids, pid)
	}
	<-s.exited
	procs.AwaitGone(pids, 10*time.Second)
}

// close ends the app-server gently: its input is closed, which it takes as the end, and it is
// given grace to exit, its tree read meanwhile; then whatever is left of the tree is killed.
func (s *server) close(grace time.Duration) {
	m := newMarks()
	s.look(m)
	s.in.Close()
	deadline := time.After(grace)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-s.exited:
			break wait
		case <-deadline:
			break wait
		case <-tick.C:
			s.look(m)
		}
	}
	s.kill(m)
}

// died says how the app-server ended, once it has: its exit status and the end of what it wrote
// to standard error.
func (s *server) died() error {
	<-s.exited
	msg := "codex app-server exited"
	if s.state != nil {
		msg = "codex app-server " + s.state.String() // "exit status 1", "signal: killed"
	}
	if e := strings.TrimSpace(ansi.ReplaceAllString(s.stderr.String(), "")); e != "" {
		msg += "; its standard error ends: " + e
	}
	return errors.New(msg)
}

// ansi matches the terminal colour codes Codex's log lines carry.
var ansi = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
