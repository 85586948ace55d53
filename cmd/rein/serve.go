package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/redact"
	"github.com/reinhq/rein/internal/store/pgstore"
	"github.com/reinhq/rein/internal/web"
	"github.com/spf13/cobra"
)

// serveFlags are serve's own flags: where it listens and what its clients may take of it.
type serveFlags struct {
	addr        string
	maxConns    int
	maxUnauth   int
	maxConvs    int
	maxOpen     int
	createRate  float64
	createBurst int
	store       string        // a PostgreSQL URL: conversations shared with other hosts ("" keeps them in files)
	storeLease  time.Duration // the lease on each conversation this host owns
	hostName    string        // this host's name in the leases
	advertise   string        // the URL other hosts reach this one at
}

func newServeCmd() *cobra.Command {
	var f runFlags
	var sf serveFlags
	var back backendFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Host conversations for web and terminal clients",
		Long: `serve runs rein's host: many conversations for many clients, over a JSON/HTTP API with
a server-sent-events stream per conversation (docs/api.md), and the web chat at /.

It listens on loopback by default. Every request needs the bearer token created on
first start (kept with mode 0600 in $REIN_HOME/serve.token); the URL printed at
startup carries it for the web chat. Stop works from the moment a message is sent.

No client can starve it: connections and requests have deadlines, connections are
capped (more tightly for those that have not shown the token), and so are the
conversations it holds, those open at once, and the rate they are created at; a
refusal is immediate (429 or 503 with a JSON error, docs/api.md). The caps left at
0 are sized from the process's limit on open files, printed at startup.`,
		Example: `  rein serve --provider sim
  rein serve --addr 127.0.0.1:8080
  rein serve --backend claude          (new conversations run in Claude Code)
  rein serve --backends claude,codex   (rein by default; Claude Code or Codex on request)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.configure(cmd); err != nil {
				return err
			}
			return serve(cmd, f, sf, back)
		},
	}
	f.register(cmd)
	back.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&sf.addr, "addr", "127.0.0.1:0", "the address to listen on (port 0 picks one)")
	fl.IntVar(&sf.maxConns, "max-connections", 0, "the most client connections held at once (0: sized from the open-file limit)")
	fl.IntVar(&sf.maxUnauth, "max-unauthenticated", 0, "of which not yet shown the token; the oldest is closed to make room (0: a quarter)")
	fl.IntVar(&sf.maxConvs, "max-conversations", host.DefaultMaxConversations, "the most conversations the host holds; creating more is refused")
	fl.IntVar(&sf.maxOpen, "max-open-conversations", 0, "the most conversations open at once; idle ones rest to make room (0: sized from the open-file limit)")
	fl.Float64Var(&sf.createRate, "create-rate", 5, "conversations created or forked a second, sustained (0: no limit)")
	fl.IntVar(&sf.createBurst, "create-burst", 60, "conversations created or forked at once before --create-rate applies")
	fl.StringVar(&sf.store, "store", "", "a postgres:// URL: keep the conversations in PostgreSQL, shared with other hosts (default: files under the state root; also $REIN_STORE, or store in the config file)")
	fl.DurationVar(&sf.storeLease, "store-lease", pgstore.DefaultLease, "with --store: how long this host's hold on a conversation lasts unrenewed; another host takes a dead host's conversations over after it")
	fl.StringVar(&sf.advertise, "advertise", "", "with --store: the URL other hosts reach this one at, to hand it requests for the conversations it serves (default: http://<--addr> unless --addr is a wildcard)")
	fl.StringVar(&sf.hostName, "host-name", "", "with --store: this host's name, shown to clients a request is refused to (default: the hostname and the process id)")
	return cmd
}

// serveToken returns the host's bearer token, creating it (mode 0600) on first start.
func serveToken(root string) (string, error) {
	path := filepath.Join(root, "serve.token")
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) >= 32 {
		return strings.TrimSpace(string(b)), nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", err
	}
	tok, err := freshToken()
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", err
	}
	return tok, nil
}

// fileLimit returns the process's soft limit on open files. Go raises it to the hard limit at
// start (since 1.19; to the hard limit less one on Linux, so that it can tell a later prlimit from
// its own raise and still give child processes the original); a soft limit left lower than that is
// raised here.
func fileLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("read the open-file limit: %w", err)
	}
	if lim.Cur+1 < lim.Max && lim.Max != math.MaxUint64 { // an infinite hard limit is not a soft one

		raised := lim
		raised.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			lim = raised
		}
	}
	return uint64(lim.Cur), nil
}

// limits checks serve's caps and sizes those left at 0 from the open-file limit nofile.
func (sf serveFlags) limits(nofile uint64) (host.Limits, int, error) {
	for _, c := range []struct {
		name string
		v    int
	}{{"--max-connections", sf.maxConns}, {"--max-unauthenticated", sf.maxUnauth}, {"--max-conversations", sf.maxConvs},
		{"--max-open-conversations", sf.maxOpen}, {"--create-burst", sf.createBurst}} {
		if c.v < 0 {
			return host.Limits{}, 0, fmt.Errorf("%s is %d: give a count, or 0 for the default", c.name, c.v)
		}
	}
	if sf.maxConvs == 0 {
		return host.Limits{}, 0, fmt.Errorf("--max-conversations is 0: give the most conversations the host may hold (default %d)", host.DefaultMaxConversations)
	}
	if sf.createRate < 0 || math.IsNaN(sf.createRate) || math.IsInf(sf.createRate, 0) {
		return host.Limits{}, 0, fmt.Errorf("--create-rate is %v: give conversations a second, or 0 for no limit", sf.createRate)
	}
	if sf.maxConns > 0 && sf.maxUnauth > sf.maxConns {
		return host.Limits{}, 0, fmt.Errorf("--max-unauthenticated (%d) is over --max-connections (%d): it is a part of them", sf.maxUnauth, sf.maxConns)
	}
	lim := host.DefaultLimits(nofile)
	conns, open := host.FileBudget(nofile)
	if sf.maxConns > 0 {
		lim.MaxConns = sf.maxConns
		lim.MaxUnauthenticated = max(sf.maxConns/4, 1)
	}
	if sf.maxUnauth > 0 {
		lim.MaxUnauthenticated = sf.maxUnauth
	}
	if sf.maxOpen > 0 {
		open = sf.maxOpen
	}
	// Each open conversation may hold 8 files (its record, a lock, a provider connection, a tool's
	// pipes), as host.FileBudget counts them.
	if uint64(lim.MaxConns+open*8) > nofile {
		return host.Limits{}, 0, fmt.Errorf("%d connections and %d open conversations need more files than this process may open (%d; "+
			"raise it with ulimit -n, or lower --max-connections or --max-open-conversations; the defaults are %d and %d)",
			lim.MaxConns, open, nofile, conns, open)
	}
	return lim, open, nil
}

func serve(cmd *cobra.Command, f runFlags, sf serveFlags, back backendFlags) error {
	ws, err := workspace(f.cwd)
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	nofile, err := fileLimit()
	if err != nil {
		return exitf(exitFailed, "%v", err)
	}
	lim, maxOpen, err := sf.limits(nofile)
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	root, err := stateRoot()
	if err != nil {
		return exitf(exitUsage, "%v", err)
	}
	if sf.store == "" {
		sf.store = os.Getenv("REIN_STORE")
	}
	if sf.store == "" {
		sf.store = f.file.Store // the config file's store
	}
	if sf.advertise != "" && sf.store == "" {
		return exitf(exitUsage, "--advertise is for hosts sharing a store: give --store too, or leave --advertise out")
	}
	var st *pgstore.Store
	if sf.store != "" {
		if sf.storeLease < 3*time.Second/10 {
			return exitf(exitUsage, "--store-lease is %v: give at least 300ms (renewals come every third of it)", sf.storeLease)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		st, err = pgstore.Open(ctx, sf.store, pgstore.Options{Name: sf.hostName, Lease: sf.storeLease})
		cancel()
		if err != nil {
			return exitf(exitFailed, "cannot open the store: %v", err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "rein serve: conversations in the shared store as host %s (lease %v)\n", st.Name(), sf.storeLease)
	}
	x, err := startHost(f, ws, root, hostSpec{
		store: st, advertise: sf.advertise,
		addr: sf.addr, token: func() (string, error) { return serveToken(root) }, lim: lim,
		caps: host.Config{MaxConversations: sf.maxConvs, MaxOpen: maxOpen, CreateRate: sf.createRate, CreateBurst: sf.createBurst},
		web:  web.Files(), log: func() (io.Writer, func()) { return cmd.ErrOrStderr(), func() {} }, name: "rein serve", back: back,
	}, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	rate := "no limit on creates"
	if sf.createRate > 0 {
		rate = fmt.Sprintf("%g creates a second (bursts of %d)", sf.createRate, max(sf.createBurst, 1))
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "rein serve: open-file limit %d: up to %d connections (%d without the token), %d conversations, %d open at once, %s\n",
		nofile, lim.MaxConns, lim.MaxUnauthenticated, sf.maxConvs, maxOpen, rate)
	// The one line that shows the token; it is redacted like any key everywhere else.
	fmt.Fprintf(redact.Unwrap(cmd.OutOrStdout()), "rein serve: http://%s/#token=%s\n", x.addr, x.token)
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
	defer stop()
	return x.run(ctx, 2*time.Second)
}
