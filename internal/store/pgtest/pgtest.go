// Package pgtest starts a real PostgreSQL server for a test package: Debian's postgresql binaries
// (initdb, postgres), a fresh cluster in a temporary directory, listening only on a Unix socket
// there, with trust authentication for the one role it makes. A package starts one server in its
// TestMain (Main) and gives each test a database of its own (Server.Database).
//
// initdb and postgres refuse to run as root, so when the tests run as root the cluster belongs to
// an unprivileged user — postgres if the machine has it, else nobody — and the server runs as that
// user (SysProcAttr.Credential), its directory handed over to it.
//
// Without the binaries the package's tests that need a server skip, saying why; with CI set they
// fail instead (CI installs the postgresql package: .ci/run).
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Role is the superuser role of the test cluster.
const Role = "rein"

// Server is one running test cluster.
type Server struct {
	Dir  string // the cluster's directory: data/ and the socket
	bin  string
	cred *syscall.Credential
	cmd  *exec.Cmd
	mu   sync.Mutex
	n    int
}

// ErrAbsent says the PostgreSQL binaries were not found.
var ErrAbsent = errors.New("the PostgreSQL server binaries (initdb, postgres) are not installed: apt-get install postgresql, or set REIN_PG_BIN to their directory")

// bindir finds the directory of initdb and postgres: $REIN_PG_BIN, else the newest
// /usr/lib/postgresql/*/bin, else the PATH's.
func bindir() (string, error) {
	if d := os.Getenv("REIN_PG_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", ErrAbsent
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// Start makes a cluster in a new temporary directory and starts its server.
func Start() (*Server, error) {
	bin, err := bindir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "rein-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, bin: bin}
	if os.Getuid() == 0 {
		if s.cred, err = unprivileged(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	initdb := s.command("initdb", "-D", s.data(), "-U", Role, "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	if err := s.start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// unprivileged is the user a root test run hands the cluster to.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root, and neither the user postgres nor nobody exists to run PostgreSQL as (initdb refuses root)")
}

func (s *Server) data() string { return filepath.Join(s.Dir, "data") }

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	return cmd
}

// start runs the server and waits until it accepts connections.
func (s *Server) start() error {
	log, err := os.OpenFile(filepath.Join(s.Dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := s.command("postgres", "-D", s.data(), "-k", s.Dir, "-c", "listen_addresses=", "-c", "max_connections=300",
		"-c", "shared_buffers=32MB", "-c", "log_min_messages=warning")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	s.cmd = cmd
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			go func() { <-exited }()
			return nil
		}
		select {
		case werr := <-exited:
			b, _ := os.ReadFile(filepath.Join(s.Dir, "server.log"))
			return fmt.Errorf("postgres exited: %v\n%s", werr, b)
		case <-time.After(50 * time.Millisecond): // the server's start-up is polled, nothing is assumed
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not accept connections within a minute: %w", err)
		}
	}
}

// URL is the connection URL of database db on the server's socket.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://%s@/%s?host=%s&sslmode=disable", Role, db, s.Dir)
}

// Database creates a new, empty database and returns its URL.
func (s *Server) Database(t testing.TB) string {
	t.Helper()
	s.mu.Lock()
	s.n++
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.n)
	s.mu.Unlock()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatalf("connect to the test server: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	return s.URL(name)
}

// Restart stops the server (fast shutdown: every connection is cut, every committed transaction
// kept) and starts it again on the same socket.
func (s *Server) Restart() error {
	if err := s.stop(syscall.SIGINT); err != nil {
		return err
	}
	return s.start()
}

// Halt stops the server, keeping the cluster, until Resume: the database gone away.
func (s *Server) Halt() error { return s.stop(syscall.SIGINT) }

// Resume starts the server Halt stopped.
func (s *Server) Resume() error { return s.start() }

// Stop stops the server and removes its directory.
func (s *Server) Stop() error {
	err := s.stop(syscall.SIGINT)
	return errors.Join(err, os.RemoveAll(s.Dir))
}

func (s *Server) stop(sig syscall.Signal) error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	pid := s.cmd.Process.Pid
	if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	// Wait for the postmaster to be gone: its pid file is removed at the end of its shutdown.
	pidfile := filepath.Join(s.data(), "postmaster.pid")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(pidfile); errors.Is(err, os.ErrNotExist) {
			if syscall.Kill(pid, 0) != nil {
				break
			}
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			return fmt.Errorf("postgres did not stop within a minute")
		}
		time.Sleep(20 * time.Millisecond) // polled: the server's shutdown is not ours to signal
	}
	s.cmd = nil
	return nil
}

// Main runs a test package's tests with a server started for them: *srv is set before m.Run, and
// nil when the binaries are absent outside CI (need then skips each test that asks for it).
func Main(m *testing.M, srv **Server) int {
	s, err := Start()
	switch {
	case errors.Is(err, ErrAbsent) && os.Getenv("CI") == "":
		absent = err.Error()
	case err != nil:
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		return 1
	}
	*srv = s
	code := m.Run()
	if s != nil {
		if err := s.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: stop: %v\n", err)
		}
	}
	return code
}

var absent string

// Need skips the test, saying why, when Main found no server to start.
func Need(t testing.TB, srv *Server) {
	t.Helper()
	if srv == nil {
		if absent == "" {
			absent = "no PostgreSQL server was started (call pgtest.Main from TestMain)"
		}
		t.Skip(strings.TrimSpace(absent))
	}
}
