package host

import (
	"container/list"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reinhq/rein/internal/api"
	"golang.org/x/sys/unix"
)

// The host's connections are bounded so that no client can starve it: every stage of a request has
// a deadline (Limits), and a Gate holds at most Limits.MaxConns connections, of which at most
// Limits.MaxUnauthenticated have not yet presented the token. A connection that has shown the token
// is never closed to make room; one that has not is, oldest first: first those that never sent a
// byte, then those not being answered, then any. So idle or slow connections opened by anyone
// without the token cost the host a bounded number of file handles, and a client with the token
// always gets a connection in and is answered: its connection is the newest, it sends its request
// at once, and it is authorised as soon as that request is read. Only when every connection held
// has shown the token is a new one refused, at once, with 503 too_many_connections; nothing waits
// in a queue. A connection that never completes a request is closed by the header timeout.
//
// This is a small wrapper rather than golang.org/x/net/netutil.LimitListener, which makes excess
// connections wait in the kernel's accept queue: an attacker filling it would lock everyone out.

// Limits bound what clients can hold of the host's connections and time. The zero value of a field
// means its default (DefaultLimits for the caps, the Default* durations for the timeouts).
type Limits struct {
	MaxConns           int // connections held at once
	MaxUnauthenticated int // of which not yet authorised by the token

	HeaderTimeout time.Duration // to read a request's header, from the connection's start or a later request's first byte
	ReadTimeout   time.Duration // to read a whole request, body included
	WriteTimeout  time.Duration // to answer a request; each write of an events stream has its own
	IdleTimeout   time.Duration // a kept-alive connection with no request in progress
}

// The default timeouts.
const (
	DefaultHeaderTimeout = 5 * time.Second
	DefaultReadTimeout   = 30 * time.Second
	DefaultWriteTimeout  = 30 * time.Second
	DefaultIdleTimeout   = 60 * time.Second
)

// fileReserve is the part of the process's file limit kept for what is neither a client connection
// nor an open conversation: the index, standard streams, provider connections between exchanges,
// the listener.
const fileReserve = 128

// filesPerOpen is what one open conversation may hold at once: its record, a lock, a provider
// connection, a running tool's pipes.
const filesPerOpen = 8

// FileBudget divides a process's file limit (its soft RLIMIT_NOFILE) between client connections
// and open conversations: what is left after a reserve is halved between them, each half bounded
// by what a host for a few people needs (4096 connections; 512 open conversations, each counted at
// filesPerOpen files). A tiny limit still leaves 16 connections and 4 open conversations.
func FileBudget(nofile uint64) (maxConns, maxOpen int) {
	budget := 0
	if nofile > fileReserve {
		budget = int(min(nofile-fileReserve, 1<<20))
	}
	maxConns = min(max(budget/2, 16), 4096)
	maxOpen = min(max(budget/2/filesPerOpen, 4), DefaultMaxOpen)
	return maxConns, maxOpen
}

// DefaultLimits returns the limits for a process whose file limit is nofile: the caps from
// FileBudget, a quarter of the connections for those without the token, and the default timeouts.
func DefaultLimits(nofile uint64) Limits {
	conns, _ := FileBudget(nofile)
	return Limits{}.withDefaults(conns)
}

func (l Limits) withDefaults(conns int) Limits {
	if l.MaxConns <= 0 {
		l.MaxConns = conns
	}
	if l.MaxUnauthenticated <= 0 || l.MaxUnauthenticated > l.MaxConns {
		l.MaxUnauthenticated = max(l.MaxConns/4, 1)
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&l.HeaderTimeout, DefaultHeaderTimeout}, {&l.ReadTimeout, DefaultReadTimeout},
		{&l.WriteTimeout, DefaultWriteTimeout}, {&l.IdleTimeout, DefaultIdleTimeout}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	return l
}

// maxHeaderBytes bounds a request's header: a token, a cookie-less browser's headers.
const maxHeaderBytes = 64 << 10

type connKey struct{}

// HTTPServer returns the http.Server that serves the API within lim, and ln wrapped in a Gate that
// holds its connections within lim's caps: serve the one on the other (srv.Serve(gate)). A zero
// cap is sized from a file limit of 4096.
func (s *Server) HTTPServer(ln net.Listener, lim Limits) (*http.Server, *Gate) {
	conns, _ := FileBudget(4096)
	lim = lim.withDefaults(conns)
	s.lim = lim
	g := NewGate(ln, lim.MaxConns, lim.MaxUnauthenticated)
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: lim.HeaderTimeout,
		ReadTimeout:       lim.ReadTimeout,
		WriteTimeout:      lim.WriteTimeout,
		IdleTimeout:       lim.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		// The guard finds the request's connection here to mark it authorised.
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, c)
		},
		ConnState: func(c net.Conn, st http.ConnState) {
			if gc, ok := c.(*gatedConn); ok {
				gc.busy.Store(st == http.StateActive)
			}
		},
	}
	return srv, g
}

// authorise marks the connection a request came in on as authorised: the Gate no longer closes it
// to make room.
func authorise(r *http.Request) {
	if gc, ok := r.Context().Value(connKey{}).(*gatedConn); ok {
		gc.authorise()
	}
}

// Gate is a listener that holds at most max connections, of which at most maxUnauth not yet
// authorised (see the top of this file).
type Gate struct {
	net.Listener
	max, maxUnauth int

	mu      sync.Mutex
	held    int
	unauth  list.List // *gatedConn not yet authorised, oldest first
	counts  GateStats
	refusal []byte
}

// GateStats counts what a Gate has done.
type GateStats struct {
	Held            int   `json:"held"`            // connections held now
	Unauthenticated int   `json:"unauthenticated"` // of which not yet authorised
	Answering       int   `json:"answering"`       // of those, with a request being answered now
	Accepted        int64 `json:"accepted"`        // connections let in, ever
	Evicted         int64 `json:"evicted"`         // closed to make room for a newer one
	Refused         int64 `json:"refused"`         // refused at once: every connection held was authorised
}

// NewGate wraps ln; maxUnauth is at most max.
func NewGate(ln net.Listener, maxConns, maxUnauth int) *Gate {
	maxConns = max(maxConns, 1)
	maxUnauth = min(max(maxUnauth, 1), maxConns)
	e := api.Errorf(api.TooManyConnections, "the host holds %d connections, all authorised (its cap, rein serve --max-connections): retry shortly", maxConns)
	body := mustJSON(api.ErrorBody{Error: e})
	status := e.Code.Status()
	refusal := "HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)+1) + "\r\n\r\n" + string(body) + "\n"
	return &Gate{Listener: ln, max: maxConns, maxUnauth: maxUnauth, refusal: []byte(refusal)}
}

// Accept returns the next connection let in. To let one in over a cap it first closes the oldest
// unauthorised connection with no request in progress, else the oldest unauthorised one; when
// every connection held is authorised the new one is refused and Accept waits for the next.
func (g *Gate) Accept() (net.Conn, error) {
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if gc := g.admit(c); gc != nil {
			return gc, nil
		}
	}
}

func (g *Gate) admit(c net.Conn) *gatedConn {
	var evict []*gatedConn
	g.mu.Lock()
	for (g.unauth.Len() >= g.maxUnauth || g.held >= g.max) && g.unauth.Len() > 0 {
		v := g.victimLocked()
		g.dropLocked(v)
		g.counts.Evicted++
		evict = append(evict, v)
	}
	if g.held >= g.max {
		g.counts.Refused++
		g.mu.Unlock()
		// A fresh socket's send buffer takes this at once; the deadline only guards the accept loop.
		_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		_, _ = c.Write(g.refusal)
		_ = c.Close()
		return nil
	}
	gc := &gatedConn{Conn: c, g: g}
	gc.el = g.unauth.PushBack(gc)
	g.held++
	g.counts.Accepted++
	g.mu.Unlock()
	for _, v := range evict {
		_ = v.Conn.Close()
	}
	return gc
}

// victimLocked picks the connection to close: the oldest unauthorised one that never sent a byte,
// else the oldest not being answered, else the oldest. A connection whose request is waiting in
// the kernel, not yet read (the accept loop runs ahead of the connections' own goroutines under a
// flood), has spoken: a client that connects and sends its request at once is not taken for idle.
func (g *Gate) victimLocked() *gatedConn {
	var quiet *gatedConn
	for e := g.unauth.Front(); e != nil; e = e.Next() {
		gc := e.Value.(*gatedConn)
		if gc.busy.Load() {
			continue
		}
		if !gc.spoke.Load() {
			if !gc.waiting() {
				return gc
			}
			gc.spoke.Store(true)
		}
		if quiet == nil {
			quiet = gc
		}
	}
	if quiet != nil {
		return quiet
	}
	return g.unauth.Front().Value.(*gatedConn)
}

// dropLocked stops counting gc.
func (g *Gate) dropLocked(gc *gatedConn) {
	if gc.closed {
		return
	}
	gc.closed = true
	g.held--
	if gc.el != nil {
		g.unauth.Remove(gc.el)
		gc.el = nil
	}
}

// Stats returns the gate's counts now.
func (g *Gate) Stats() GateStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.counts
	st.Held, st.Unauthenticated = g.held, g.unauth.Len()
	for e := g.unauth.Front(); e != nil; e = e.Next() {
		if e.Value.(*gatedConn).busy.Load() {
			st.Answering++
		}
	}
	return st
}

// gatedConn is a connection the Gate holds.
type gatedConn struct {
	net.Conn
	g     *Gate
	busy  atomic.Bool // a request is being answered (http.StateActive)
	spoke atomic.Bool // a byte has been read from it
	// Guarded by g.mu:
	el     *list.Element // in g.unauth until authorised
	closed bool
}

func (c *gatedConn) authorise() {
	c.g.mu.Lock()
	defer c.g.mu.Unlock()
	if c.el != nil {
		c.g.unauth.Remove(c.el)
		c.el = nil
	}
}

// waiting reports whether bytes have arrived on the connection that have not been read yet.
func (c *gatedConn) waiting() bool {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	// FIONREAD: the bytes received and not yet read.
	_ = raw.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), fionread) })
	return n > 0
}

// Read reads from the connection, noting that it spoke.
func (c *gatedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.spoke.Load() {
		c.spoke.Store(true)
	}
	return n, err
}

// Close closes the connection and frees its place.
func (c *gatedConn) Close() error {
	c.g.mu.Lock()
	c.g.dropLocked(c)
	c.g.mu.Unlock()
	return c.Conn.Close()
}
