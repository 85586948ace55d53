package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/redact"
	osbox "github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/store/pgstore"
	"github.com/reinhq/rein/internal/tool/fetch"
)

// hostSpec is what rein serve and rein chat start a host with, beyond the flags they share with
// rein run: where it listens, its token, the caps on its clients and conversations, the web chat it
// serves (nil: none), and where what it cannot answer to a caller is logged.
type hostSpec struct {
	addr  string
	token func() (string, error)
	lim   host.Limits // connections and their deadlines (host.Server.HTTPServer)
	caps  host.Config // of which MaxConversations, MaxOpen, CreateRate and CreateBurst
	web   fs.FS
	// log opens where what the host cannot answer to a caller goes (a record skipped, a
	// handler's panic), once the host is about to open, and what closes it.
	log  func() (io.Writer, func())
	name string // "rein serve", "rein chat": how its log lines begin
	// back chooses the agent programs conversations run in (--backend, --backends).
	back backendFlags
	// store, when set, is where the conversations live, shared with other hosts; the host closes
	// it after itself.
	store *pgstore.Store
	// advertise is the URL other hosts over the store reach this one at ("" derives it from the
	// listen address, unless that is a wildcard).
	advertise string
}

// hosted is a host serving its API over HTTP: rein serve's, or rein chat's in-process one.
type hosted struct {
	host  *host.Host
	srv   *http.Server
	gate  *host.Gate
	addr  string // where it listens
	token string
	wired *wiring
	// closeLog closes the log, after the host.
	closeLog func()
	// mcp is the host's MCP servers, shared by its conversations; ended after the host.
	mcp *mcpStarting
	// back is the external back-ends offered; what they keep between turns (Codex's app-server)
	// is ended after the host.
	back offered
	// store is the shared store the conversations live in, if any; closed after the host.
	store *pgstore.Store
}

// closeStore closes the shared store, once the host is closed.
func (x *hosted) closeStore() {
	if x.store != nil {
		x.store.Close()
		x.store = nil
	}
}

// startHost resolves the provider, opens the host over the conversations of the workspace ws (in
// the state root root) and makes its HTTP server on a listener at spec.addr, within spec.lim. The
// token becomes a secret: whatever prints it from here on is redacted, and so is every answer the
// host writes. The caller serves it (run, or go srv.Serve(gate)) and closes it.
func startHost(f runFlags, ws, root string, spec hostSpec, stderr io.Writer) (*hosted, error) {
	wired, err := f.resolve(stderr)
	if err != nil {
		return nil, err
	}
	x := &hosted{wired: wired, closeLog: func() {}, mcp: startMCP(nil), store: spec.store}
	var ln net.Listener
	fail := func(err error) (*hosted, error) {
		if ln != nil {
			ln.Close()
		}
		if x.host != nil {
			x.host.Close()
		}
		x.closeStore()
		x.closeLog()
		x.mcp.close()
		wired.close()
		return nil, err
	}
	// The tools are built for each conversation; a rule naming no tool, or a bad sandbox, is
	// refused before anything is opened.
	if err := f.sandbox.resolve(stderr); err != nil {
		return fail(err)
	}
	probe, err := buildRunner(ws, wired.toolSet(wired.model), f.permission, f.allow, f.deny, osbox.Policy{Mode: osbox.Off}, fetch.Options{})
	if err != nil {
		return fail(exitf(exitUsage, "%v", err))
	}
	servers, err := mcpServers(stderr, ws, f.file)
	if err != nil {
		return fail(err)
	}
	x.mcp = startMCP(servers)
	mcpm, states, err := x.mcp.join(stderr)
	if err != nil {
		return fail(err)
	}
	if mcpm != nil {
		if err := withMCP(probe, mcpm, servers); err != nil {
			return fail(err)
		}
		if err := judgeMCPRules(stderr, probe.Policy, probe.Tools, servers); err != nil {
			return fail(err)
		}
	}
	if spec.back.def == "" {
		spec.back.def = "rein"
	}
	back, err := spec.back.resolve(stderr)
	if err != nil {
		return fail(err)
	}
	x.back = back
	if x.token, err = spec.token(); err != nil {
		return fail(exitf(exitFailed, "cannot create the token: %v", err))
	}
	cfg := spec.caps
	cfg.Root, cfg.Cwd, cfg.Version = root, ws, version
	cfg.Provider, cfg.Model, cfg.Window = wired.name, wired.model, wired.window
	cfg.Sandbox = f.sandbox.chosen.String()
	cfg.Tools = string(wired.toolSet(wired.model))
	cfg.Session = session.Options{Redact: redactText}
	if st := spec.store; st != nil {
		cfg.Store = st
		cfg.Session.Replicate = func(path string, file *journal.Writer) (session.Journal, error) { return st.Replicate(path, file) }
	}
	f.checkpoints.open(root, ws, stderr)
	cfg.Checkpoints = f.checkpoints.repo
	cfg.NewAgentFor = hostAgent(ws, wired, f, hostMCP{mcpm, servers, states}, back)
	cfg.Backend, cfg.Backends = back.hostDefault(), back.names()
	var logw io.Writer
	logw, x.closeLog = spec.log()
	cfg.Log = logw
	// Listen first: a host over a store gives its URL in the leases it takes from its start.
	if ln, err = net.Listen("tcp", spec.addr); err != nil {
		return fail(exitf(exitUsage, "cannot listen on %s: %v", spec.addr, err))
	}
	x.addr = ln.Addr().String()
	var advertised string
	if spec.store != nil {
		if advertised, err = advertiseURL(spec.advertise, x.addr); err != nil {
			return fail(exitf(exitUsage, "%v", err))
		}
		if advertised == "" {
			fmt.Fprintf(stderr, "%s: listening on %s, a wildcard address, with no --advertise: other hosts cannot hand this one "+
				"the requests for the conversations it serves, and refuse them naming it (give --advertise http://<name>:<port>)\n", spec.name, x.addr)
		}
		spec.store.SetAdvertise(advertised)
	}
	if x.host, err = host.Open(cfg); err != nil {
		return fail(exitf(exitFailed, "cannot open the host: %v", err))
	}
	server := host.NewServer(x.host, x.token, x.addr, spec.web)
	if advertised != "" {
		u, _ := url.Parse(advertised)
		server.AllowHost(u.Host) // other hosts address it by its advertised name
	}
	x.srv, x.gate = server.HTTPServer(ln, spec.lim)
	x.srv.Handler = redact.Handler(x.srv.Handler, &secrets)
	x.srv.ErrorLog = log.New(logw, spec.name+": ", log.LstdFlags)
	secrets.Add("REIN_TOKEN", x.token)
	return x, nil
}

// advertiseURL is the URL other hosts reach this one at: flag, when given (an http or https URL
// with a host and nothing after it), else the listen address addr when it names one host — ""
// when it is a wildcard (0.0.0.0, ::), which no other host can reach this one by.
func advertiseURL(flag, addr string) (string, error) {
	if flag != "" {
		u, err := url.Parse(flag)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") ||
			u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return "", fmt.Errorf("--advertise %q: give the URL other hosts reach this one at, as http://<name>:<port>", flag)
		}
		return u.Scheme + "://" + u.Host, nil
	}
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("the listen address %q: %w", addr, err)
	}
	if ip := net.ParseIP(h); h == "" || (ip != nil && ip.IsUnspecified()) {
		return "", nil
	}
	return "http://" + addr, nil
}

// run serves until ctx is done, then lets the requests under way finish for up to grace and
// closes the host (every exchange quiesces, every record is left settled). A server that fails
// closes the host too.
func (x *hosted) run(ctx context.Context, grace time.Duration) error {
	errc := make(chan error, 1)
	go func() { errc <- x.srv.Serve(x.gate) }()
	select {
	case err := <-errc:
		x.host.Close()
		x.closeStore()
		x.closeLog()
		x.mcp.close()
		x.back.close()
		x.wired.close()
		return exitf(exitFailed, "serve: %v", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	_ = x.srv.Shutdown(shut)
	err := x.host.Close()
	x.closeStore()
	x.closeLog()
	x.mcp.close()
	x.back.close()
	x.wired.close()
	closeSandboxes()
	return err
}

// close stops the server at once, which ends the event streams, then closes the host and the
// provider.
func (x *hosted) close() error {
	err := x.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	err = errors.Join(err, x.host.Close())
	x.closeStore()
	x.closeLog()
	x.mcp.close()
	x.back.close()
	x.wired.close()
	closeSandboxes()
	return err
}
