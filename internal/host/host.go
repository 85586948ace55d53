// Package host runs many conversations for many clients (DESIGN §12). Each conversation is a
// session; the host adds submissions with their lifecycle, Stop, operation ids and a wire API.
//
// Every decision about a conversation — accept a message, deliver it, withdraw it, stop — is made
// under that conversation's one lock, in arrival order, and written through the session's single
// writer before it takes effect. The record is the one truth: after a restart the host rebuilds
// everything from it, and the conversation index is a cache of it.
package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// Config is what a Host is built from; cmd/rein wires it.
type Config struct {
	Root     string // rein's state root; conversations live under Root/sessions/<slug of Cwd>/
	Cwd      string // the workspace new conversations work in
	Provider string
	Model    string
	Window   int64
	Version  string
	// NewAgent builds the agent of a conversation's session (provider, tools, system prompt).
	NewAgent func(sess *session.Session) (*agent.Agent, error)
	Session  session.Options
	Now      func() time.Time
}

// Host is the set of conversations.
type Host struct {
	cfg   Config
	dir   string
	mu    sync.Mutex
	convs map[string]*Conv
	wg    sync.WaitGroup // running exchanges
	ctx   context.Context
	stop  context.CancelFunc
}

// Error is a refusal with an HTTP-minded code ("not_found", "op_conflict", "bad_request", ...).
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

func errf(code, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Open starts a host over the conversations already on disk: each is replayed, settled if a
// crash left it in flight, and its accepted-but-undelivered submissions are rejected as "host
// restarted" so a client can offer Retry; nothing is delivered twice.
func Open(cfg Config) (*Host, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &Host{cfg: cfg, dir: session.ProjectDir(cfg.Root, cfg.Cwd), convs: map[string]*Conv{}}
	h.ctx, h.stop = context.WithCancel(context.Background())
	entries, err := session.List(cfg.Root, cfg.Cwd)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		c, err := h.open(e.ID, e.Path)
		if err != nil {
			// A refused record is left untouched and out of the host; say so once.
			fmt.Fprintf(os.Stderr, "rein serve: skipping conversation %s: %v\n", e.ID, err)
			continue
		}
		h.convs[e.ID] = c
	}
	return h, nil
}

// Close stops every running exchange (each quiesces) and closes the records.
func (h *Host) Close() error {
	h.stop()
	h.mu.Lock()
	convs := make([]*Conv, 0, len(h.convs))
	for _, c := range h.convs {
		convs = append(convs, c)
	}
	h.mu.Unlock()
	for _, c := range convs {
		c.mu.Lock()
		if c.ex != nil {
			c.ex.cancel()
		}
		c.mu.Unlock()
	}
	h.wg.Wait()
	var errs []error
	for _, c := range convs {
		errs = append(errs, c.sess.Close())
	}
	return errors.Join(errs...)
}

// open opens one conversation's record and reconciles it after a restart.
func (h *Host) open(id, path string) (*Conv, error) {
	sess, _, err := session.Open(path, h.cfg.Session)
	if err != nil {
		return nil, err
	}
	ag, err := h.cfg.NewAgent(sess)
	if err != nil {
		sess.Close()
		return nil, err
	}
	c := &Conv{h: h, id: id, sess: sess, ag: ag}
	if err := c.reconcile(); err != nil {
		sess.Close()
		return nil, err
	}
	return c, nil
}

// Create makes a new conversation. A repeat of the same operation id answers the conversation it
// created.
func (h *Host) Create(op, title string) (*Conv, bool, error) {
	if op == "" {
		return nil, false, errf("bad_request", "op_id is required: give every mutating request an operation id")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.convs {
		var m fold.Meta
		c.sess.Read(func(st *fold.State) { m = st.Meta() })
		if m.Op == op {
			if m.Title != title && title != "" {
				return nil, false, errf("op_conflict", "operation %s already created conversation %s with a different title", op, c.id)
			}
			return c, true, nil
		}
	}
	id := session.NewID(h.cfg.Now())
	sess, err := session.Create(filepath.Join(h.dir, id), h.cfg.Session, &record.SessionStarted{
		Session: id, Provider: h.cfg.Provider, Model: h.cfg.Model, ContextWindow: h.cfg.Window, Cwd: h.cfg.Cwd,
		Version: h.cfg.Version, Title: title, Op: op,
	})
	if err != nil {
		return nil, false, err
	}
	ag, err := h.cfg.NewAgent(sess)
	if err != nil {
		sess.Close()
		return nil, false, err
	}
	c := &Conv{h: h, id: id, sess: sess, ag: ag}
	h.convs[id] = c
	return c, false, nil
}

// Get returns a conversation by id.
func (h *Host) Get(id string) (*Conv, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.convs[id]
	if !ok {
		return nil, errf("not_found", "no conversation %s", id)
	}
	return c, nil
}

// List returns every conversation's view, most recently updated first.
func (h *Host) List() []View {
	h.mu.Lock()
	convs := make([]*Conv, 0, len(h.convs))
	for _, c := range h.convs {
		convs = append(convs, c)
	}
	h.mu.Unlock()
	out := make([]View, 0, len(convs))
	for _, c := range convs {
		out = append(out, c.View())
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Updated != out[j].Updated {
			return out[i].Updated > out[j].Updated
		}
		return out[i].ID > out[j].ID
	})
	return out
}

func newMessageID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "m-" + hex.EncodeToString(b[:])
}

var _ = journal.FileName

var osStderr = os.Stderr
