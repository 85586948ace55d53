// Package host runs many conversations for many clients (DESIGN §12). Each conversation is a
// session; the host adds submissions with their lifecycle, Stop, operation ids, the conversation
// index and a wire API.
//
// A conversation's requests are served under its one lock, in arrival order. What becomes of a
// message — handed to the running exchange, delivered, withdrawn by a Stop, answered, rejected
// after a restart — is not decided by the host on the side: each step is a record the fold judges
// against the submission table (fold.Transitions), and the host writes what the fold's plans
// return (fold.StopPlan, HandPlan, FinishPlan, RestartPlan, AnswerPlan), computed from the state
// at the session's writer (Session.CommitPlan) so the agent's goroutine, which writes the same
// record, cannot overtake the judgement; only once the write is durable does the host carry out
// the plan's effects (start an exchange, cancel one). The host reads a session's folded state only
// through Session.Read. The record is the one truth: after a restart the host rebuilds everything
// from it, and the conversation index (index.go) is a cache of it.
//
// The scenario files under testdata/scenarios script sends, Stops, approvals and restarts against
// a real host and hold the records and states they lead to (TestScenarios).
//
// A conversation with no work and no subscribers rests: after Config.IdleAfter its session is
// closed and its agent dropped, so it costs only its id and its lock in memory and its row in the
// index; the next request that needs it replays its record. At most Config.MaxOpen are open at
// once: opening one more first rests the least recently used idle one.
//
// No client can starve the host (conns.go): every connection and request has a deadline, the
// connections held are capped (fewer for those that have not shown the token), and creates are
// capped in number and rate; a refusal is immediate and leaves nothing behind.
//
// The lock order is Host.create, then Conv.mu, then Host.mu (the map only) or Host.omu (the open
// set), then the session's and the index's own locks. Another conversation's lock is only ever
// tried (to rest it), never waited for.
package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/checkpoint"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/store"
	"github.com/reinhq/rein/internal/tool"
)

// DefaultIdleAfter is how long a conversation with no work and no subscribers keeps its session
// open when Config.IdleAfter is zero.
const DefaultIdleAfter = 2 * time.Minute

// Config is what a Host is built from; cmd/rein wires it.
type Config struct {
	Root     string // rein's state root; conversations live under Root/sessions/<slug of Cwd>/
	Cwd      string // the workspace new conversations work in
	Provider string
	Model    string
	Window   int64
	Version  string
	// Sandbox says the OS sandbox the conversations' commands run under, recorded when one is
	// created ("" records nothing).
	Sandbox string
	// Tools names the tool set the default model is offered (package toolset), recorded when a
	// conversation is created.
	Tools string
	// NewAgent builds the agent of a conversation's session (provider, tools, system prompt). It
	// is called each time a resting conversation's session is reopened.
	NewAgent func(sess *session.Session) (*agent.Agent, error)
	// NewAgentFor, when set, is used instead of NewAgent: it builds the agent with the
	// conversation's provider and model (a person may switch them: capability model.v1) and wires
	// Setup.Approver into its tool runner, so the calls its policy asks about are put to the person
	// through the host and wait for the answer (capability approvals.v1).
	NewAgentFor func(sess *session.Session, s Setup) (*agent.Agent, error)
	Session     session.Options
	Now         func() time.Time
	// IdleAfter is how long a conversation with no work and no subscribers keeps its session
	// open before it rests; 0 means DefaultIdleAfter, a negative value keeps sessions open.
	IdleAfter time.Duration
	// Log receives the few things the host cannot answer to a caller: a record it skips at Open,
	// a write that failed after its request was answered. Nil means os.Stderr.
	Log io.Writer

	// MaxConversations caps the conversations the host holds (every session of the workspace,
	// resting or open, closed ones included): a create or fork beyond it is refused with
	// too_many_conversations. 0 means DefaultMaxConversations; negative, no cap.
	MaxConversations int
	// MaxOpen caps the conversations whose session is open at once (each holds its record open
	// and its agent in memory). To open one more, the host first rests the least recently used
	// conversation with no work and no subscribers; when every open one is working or watched the
	// request is refused with too_many_open. 0 means DefaultMaxOpen; negative, no cap.
	MaxOpen int
	// CreateRate is how many creates and forks a second the host accepts, sustained, in bursts of
	// up to CreateBurst (at least 1); more are refused with rate_limited and a Retry-After. The
	// host has one token, so this is the token holder's rate. 0 means no limit.
	CreateRate  float64
	CreateBurst int
	// Checkpoints is the workspace's shadow repository, when the conversations' agents take
	// checkpoints: a rewind may then take the files back too (capability rewind-files.v1).
	Checkpoints *checkpoint.Repo
	// Backend is the back-end a new conversation's turns run in when its create names none
	// (api.BackendRein, BackendClaude, BackendCodex; "" is rein's own loop), and Backends the
	// external ones a create may name besides rein (capability backends.v1). The choice is
	// recorded (a backend event), so a conversation keeps it across restarts; NewAgentFor
	// builds its agent for it (Setup.Backend).
	Backend  string
	Backends []string
	// Store, when set, keeps the conversations where several hosts share them (shared.go): the
	// records as rows, one owner per conversation under a lease, the index as the store's table.
	// Session.Replicate must then append through the same store. Nil: the records under Root are
	// the truth, as on one machine.
	Store Store
}

// The default caps on conversations.
const (
	DefaultMaxConversations = 10_000
	DefaultMaxOpen          = 512
)

// Setup is what NewAgentFor builds a conversation's agent with.
type Setup struct {
	Provider string // the conversation's provider: the host's, unless a person switched it
	Model    string // the conversation's model
	// Backend is the back-end the conversation's turns run in, as its record says: "" or
	// api.BackendRein for rein's own loop, else an external program's (api.BackendClaude, ...).
	Backend string
	// Approver puts a call the tool policy routes to the person (permission mode ask) to the
	// conversation's clients and waits for the answer, or for a Stop.
	Approver tool.Approver
}

// Host is the set of conversations.
type Host struct {
	cfg    Config
	dir    string
	ix     indexer
	sqlite *index     // the index on one machine; nil with a Store
	shelf  *shelf     // archived and deleted conversations (shelf.go)
	mu     sync.Mutex // guards convs and ops
	convs  map[string]*Conv
	ops    map[string]*Conv // by the operation that created them: a retried create is found without a query
	create sync.Mutex       // serialises creates and forks
	rate   bucket           // creates and forks, guarded by create
	wg     sync.WaitGroup   // running exchanges
	omu    sync.Mutex       // guards open (after Conv.mu in the lock order)
	open   map[*Conv]bool   // the conversations whose session is open (see admit)
	sweeps sync.WaitGroup   // the sweep for lapsed leases, with a Store (shared.go)
	ctx    context.Context
	stop   context.CancelFunc
}

// errf is a refusal with an API code (package api): the HTTP API answers it with the code's
// status, and an in-process caller finds it with errors.As or api.CodeOf.
func errf(code api.Code, format string, args ...any) error {
	return api.Errorf(code, format, args...)
}

// Open starts a host over the conversations already on disk. A conversation whose index row
// matches its record (same size, not working) is listed from the row without being replayed; any
// other is replayed, settled if a crash left it in flight, and its accepted-but-undelivered
// submissions are rejected as "host restarted" so a client can offer Retry; nothing is delivered
// twice. A conversation another process holds (a rein run, another host on the same state) is
// listed as held (View.Held), read-only, and left alone. A missing or damaged index is rebuilt
// from the records.
func Open(cfg Config) (*Host, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Session.Now == nil {
		cfg.Session.Now = cfg.Now // one clock: the sessions' records and ids read the host's
	}
	if cfg.IdleAfter == 0 {
		cfg.IdleAfter = DefaultIdleAfter
	}
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	if cfg.MaxConversations == 0 {
		cfg.MaxConversations = DefaultMaxConversations
	}
	if cfg.MaxOpen == 0 {
		cfg.MaxOpen = DefaultMaxOpen
	}
	h := &Host{cfg: cfg, dir: session.ProjectDir(cfg.Root, cfg.Cwd), convs: map[string]*Conv{}, ops: map[string]*Conv{}, open: map[*Conv]bool{},
		rate: bucket{rate: cfg.CreateRate, burst: float64(max(cfg.CreateBurst, 1))}}
	if err := os.MkdirAll(h.dir, 0o700); err != nil {
		return nil, fmt.Errorf("open the host: %w", err)
	}
	h.ctx, h.stop = context.WithCancel(context.Background())
	if cfg.Store != nil {
		// Pointers into other hosts' copies are read from the rows (pointers.go).
		h.cfg.Session.FS = &pointerFS{FS: h.fs(), h: h}
		if err := h.openShared(); err != nil {
			h.stop()
			return nil, err
		}
		return h, nil
	}
	ix, _, err := openIndex(filepath.Join(h.dir, IndexFile))
	if err != nil {
		return nil, err
	}
	h.ix, h.sqlite = ix, ix
	if h.shelf, err = openShelf(h.dir, cfg.Now()); err != nil {
		ix.close()
		return nil, err
	}
	if err := h.purgeDeleted(); err != nil {
		ix.close()
		return nil, err
	}
	if err := h.load(); err != nil {
		ix.close()
		return nil, err
	}
	return h, nil
}

// load lists the records on disk against the index, replaying what the index cannot vouch for.
func (h *Host) load() error {
	rows, err := h.ix.All()
	if err != nil {
		return err
	}
	byID := make(map[string]Row, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	entries, err := session.List(h.cfg.Root, h.cfg.Cwd)
	if err != nil {
		return err
	}
	for _, e := range entries {
		c := &Conv{h: h, id: e.ID, path: e.Path}
		r, ok := byID[e.ID]
		delete(byID, e.ID)
		if ok && !r.Working && r.Path == e.Path && fileSize(e.Path) == r.Size {
			c.op, c.opTitle, c.known = r.Op, r.OpTitle, true
			// Another process (another host) may hold it open without having written since.
			if holder, held, err := journal.Live(h.fs(), e.Path); err == nil && held {
				c.held = &holder
			}
			h.add(c)
			continue
		}
		if err := c.recover(); err != nil {
			// A refused record is left untouched and out of the host; say so once.
			fmt.Fprintf(h.cfg.Log, "rein serve: skipping conversation %s: %v\n", e.ID, err)
			continue
		}
		h.add(c)
	}
	gone := make([]string, 0, len(byID))
	for id := range byID {
		gone = append(gone, id)
	}
	return h.ix.Remove(gone)
}

// Close stops every running exchange (each quiesces), closes the records and the index.
func (h *Host) Close() error {
	h.stop()
	convs := h.all()
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
		c.mu.Lock()
		errs = append(errs, c.closeLocked())
		c.mu.Unlock()
	}
	if h.sqlite != nil {
		errs = append(errs, h.sqlite.close())
	}
	h.sweeps.Wait()
	return errors.Join(errs...)
}

func (h *Host) all() []*Conv {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*Conv, 0, len(h.convs))
	for _, c := range h.convs {
		out = append(out, c)
	}
	return out
}

// Create makes a new conversation. A repeat of the same operation id with the same title answers
// the conversation it created; with another title it is refused.
func (h *Host) Create(op, title string) (*Conv, bool, error) {
	return h.CreateOn(op, title, "")
}

// CreateOn is Create with the back-end the conversation's turns run in (capability backends.v1):
// "" takes the host's default (Config.Backend). A back-end the host does not offer is refused,
// naming those it does.
func (h *Host) CreateOn(op, title, backend string) (*Conv, bool, error) {
	if op == "" {
		return nil, false, errf(api.BadRequest, "op_id is required: give every mutating request an operation id")
	}
	if backend == "" {
		backend = h.cfg.Backend
	}
	if backend != "" && !slices.Contains(h.Backends(), backend) {
		return nil, false, errf(api.BadRequest, "unknown back-end %q: this host offers %s (rein serve --backend, and the programs it found)", backend, strings.Join(h.Backends(), ", "))
	}
	c := h.madeHere(op)
	if c == nil {
		var first []record.Payload
		if backend != "" {
			first = append(first, &record.Backend{Name: backend, Op: op})
		}
		made, replayed, err := h.make(op, title, "", first...)
		if err != nil || !replayed {
			return made, replayed, err
		}
		c = made
	}
	if c.opTitle != title && c.opTitle != h.redact(title) {
		return nil, false, errf(api.OpConflict, "operation %s already created conversation %s with a different title", op, c.id)
	}
	return c, true, nil
}

// Backends are the back-ends a create may name: rein's own, then the external ones offered.
func (h *Host) Backends() []string {
	out := []string{api.BackendRein}
	for _, b := range h.cfg.Backends {
		if !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	return out
}

// madeHere returns the conversation an operation created, if this host holds it already. Any
// other is looked for by make, under the create lock, so that a create this host is making now
// is never taken for another host's; so is one known only from another host's claim that has not
// been written yet (byOp asks the store about it again).
func (h *Host) madeHere(op string) *Conv {
	h.mu.Lock()
	c := h.ops[op]
	h.mu.Unlock()
	if c != nil && h.cfg.Store != nil && c.unwritten() {
		return nil
	}
	return c
}

// byOp finds the conversation an operation created. Every conversation the host holds has had its
// creating operation read (from its index row or its record's first line) by the time it is added.
//
// With a Store, a conversation adopted from another host's claim that has not shown a record yet
// is asked about again: the store withdraws a claim whose creator died before writing (Store.ByOp),
// and this host then forgets it, so that a retry of the operation creates anew rather than waiting
// for ever on a conversation that never comes.
func (h *Host) byOp(op string) (*Conv, bool, error) {
	h.mu.Lock()
	c := h.ops[op]
	h.mu.Unlock()
	if h.cfg.Store == nil || c != nil && !c.unwritten() {
		return c, c != nil, nil
	}
	// Another host may have created it: the shared index knows.
	r, ok, err := h.cfg.Store.ByOp(op)
	if err != nil {
		return nil, false, err
	}
	if c != nil && (!ok || r.ID != c.id) {
		h.forget(c)
	}
	if !ok {
		return nil, false, nil
	}
	return h.adopt(r), true, nil
}

// unwritten reports whether c is a conversation known only from another host's claim of its
// operation: no session open here and no index row. A conversation busy (its lock held) is not.
func (c *Conv) unwritten() bool {
	if !c.mu.TryLock() {
		return false
	}
	defer c.mu.Unlock()
	if c.sess != nil {
		return false
	}
	_, indexed, err := c.h.ix.Get(c.id)
	return err == nil && !indexed
}

// forget drops a conversation adopted from a claim the store has since withdrawn.
func (h *Host) forget(c *Conv) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ops[c.op] == c {
		delete(h.ops, c.op)
	}
	if h.convs[c.id] == c {
		delete(h.convs, c.id)
	}
}

// redact passes text through the sessions' redactor: a title sent again is compared with the one
// recorded.
func (h *Host) redact(text string) string {
	if h.cfg.Session.Redact == nil {
		return text
	}
	return h.cfg.Session.Redact.Redact(text)
}

// add puts a conversation whose creating operation is known into the host.
func (h *Host) add(c *Conv) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.convs[c.id] = c
	if c.op != "" {
		if _, dup := h.ops[c.op]; !dup || c.id < h.ops[c.op].id {
			h.ops[c.op] = c // two records naming one operation (a copied record): the first made answers
		}
	}
}

// make creates a conversation under operation op: a new session whose first records are
// session_started and, for a fork, first. Creates are serialised, and a second one under the same
// operation answers the first's conversation, so one operation id makes at most one conversation.
// A create is judged against the caps (rate, conversations, open sessions) before anything is
// written, and one that fails after its directory was made removes it: a refused or failed create
// leaves nothing on disk and no index row.
func (h *Host) make(op, title, parent string, first ...record.Payload) (*Conv, bool, error) {
	if h.ctx.Err() != nil {
		return nil, false, errHostClosed
	}
	h.create.Lock()
	defer h.create.Unlock()
	if c, ok, err := h.byOp(op); err != nil || ok {
		return c, ok, err
	}
	if err := h.judgeCreate(); err != nil {
		return nil, false, err
	}
	c := &Conv{h: h, op: op, opTitle: title, known: true}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := h.admit(c); err != nil {
		return nil, false, err
	}
	// Start mints the id and leaves nothing on disk if it fails.
	opts, claimed := h.claiming(op, title)
	sess, err := session.Start(h.dir, opts, record.SessionStarted{
		Provider: h.cfg.Provider, Model: h.cfg.Model, ContextWindow: h.cfg.Window, Cwd: h.cfg.Cwd,
		Version: h.cfg.Version, Parent: parent, Title: title, Op: op, Sandbox: h.cfg.Sandbox, Tools: h.cfg.Tools,
	}, first...)
	if err != nil {
		h.release(c)
		var taken *store.OpTakenError
		if errors.As(err, &taken) {
			// Another host created under the same operation at the same instant, and claimed it
			// first: its conversation answers, as to a retry.
			return h.madeElsewhere(taken, title)
		}
		if *claimed != "" {
			err = errors.Join(err, h.ix.Remove([]string{*claimed}))
		}
		return nil, false, fmt.Errorf("create a conversation: %w", err)
	}
	c.id = sess.ID()
	c.path = sess.Path()
	c.sess = sess
	// The operation's title is kept as the record holds it (redacted), as origin reads it back.
	c.opTitle = sess.Snapshot().Meta().Title
	c.ag, err = c.newAgent(sess)
	if err == nil {
		err = c.indexLocked()
	}
	if err != nil {
		return nil, false, h.discard(c.id, errors.Join(err, c.closeLocked()))
	}
	c.restLocked()
	h.add(c)
	return c, false, nil
}

// claiming returns the session options a create under op starts its session with. With a Store,
// the operation is claimed for the new conversation's id in the store (Store.ClaimOp) as its
// record is opened, before anything of it is written, so that of two hosts creating under one
// operation at once only one writes a conversation; claimed then holds the id claimed.
func (h *Host) claiming(op, title string) (session.Options, *string) {
	opts, claimed := h.cfg.Session, new(string)
	st := h.cfg.Store
	if st == nil {
		return opts, claimed
	}
	replicate := opts.Replicate
	opts.Replicate = func(path string, file *journal.Writer) (session.Journal, error) {
		id := filepath.Base(filepath.Dir(path))
		ctx, cancel := context.WithTimeout(h.ctx, st.Lease())
		defer cancel()
		if err := st.ClaimOp(ctx, op, id, h.redact(title)); err != nil {
			return nil, err
		}
		*claimed = id
		return replicate(path, file)
	}
	return opts, claimed
}

// madeElsewhere answers a create whose operation another create claimed first with that
// create's conversation, as a retry is answered; one under another title is refused.
func (h *Host) madeElsewhere(taken *store.OpTakenError, title string) (*Conv, bool, error) {
	c, ok, err := h.byOp(taken.Op)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		c = h.adopt(Row{ID: taken.Conversation, Op: taken.Op, OpTitle: taken.Title})
	}
	if c.opTitle != title && c.opTitle != h.redact(title) {
		return nil, false, errf(api.OpConflict, "operation %s already created conversation %s with a different title", taken.Op, c.id)
	}
	return c, true, nil
}

// judgeCreate refuses a create over the rate or the cap on conversations. Called with h.create
// held.
func (h *Host) judgeCreate() error {
	if max := h.cfg.MaxConversations; max > 0 {
		h.mu.Lock()
		n := len(h.convs)
		h.mu.Unlock()
		if n >= max {
			return &api.Error{Code: api.TooManyConversations, Message: fmt.Sprintf("the host holds %d conversations, its cap "+
				"(rein serve --max-conversations): raise the cap, or move old sessions out of %s", n, h.dir)}
		}
	}
	if ok, wait := h.rate.take(h.cfg.Now()); !ok {
		return &api.Error{Code: api.RateLimited, RetryAfter: wait, Message: fmt.Sprintf("conversations are being created faster than "+
			"this host allows (%g a second, in bursts of %g; rein serve --create-rate): retry in %v", h.rate.rate, h.rate.burst,
			wait.Round(time.Millisecond))}
	}
	return nil
}

// discard removes what a failed create left: the conversation's directory and its index row.
func (h *Host) discard(id string, err error) error {
	if rerr := h.fs().RemoveAll(filepath.Join(h.dir, id)); rerr != nil {
		err = errors.Join(err, fmt.Errorf("remove the failed conversation's directory: %w", rerr))
	}
	if rerr := h.ix.Remove([]string{id}); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return fmt.Errorf("create a conversation: %w", err)
}

// admit takes a place among the conversations whose session is open, for c, which is about to open
// its session: when the places are all taken it rests the least recently used idle conversation
// first. Called with c.mu held; the others' locks are only tried, so two conversations admitting
// at once cannot deadlock.
func (h *Host) admit(c *Conv) error {
	for {
		h.omu.Lock()
		if h.cfg.MaxOpen < 0 || len(h.open) < h.cfg.MaxOpen || h.open[c] {
			h.open[c] = true
			h.omu.Unlock()
			return nil
		}
		others := make([]*Conv, 0, len(h.open))
		for o := range h.open {
			others = append(others, o)
		}
		h.omu.Unlock()
		if !restOldest(others) {
			return &api.Error{Code: api.TooManyOpen, RetryAfter: time.Second, Message: fmt.Sprintf("the host has %d conversations open, "+
				"each working or watched (its cap, rein serve --max-open-conversations): retry when one finishes, or raise the cap",
				len(others))}
		}
	}
}

// restOldest rests the least recently used of convs that is idle and not locked by a request now,
// and reports whether it rested one.
func restOldest(convs []*Conv) bool {
	type cand struct {
		c    *Conv
		last time.Time
	}
	var idle []cand
	for _, o := range convs {
		if o.mu.TryLock() {
			if o.idleLocked() {
				idle = append(idle, cand{o, o.last})
			}
			o.mu.Unlock()
		}
	}
	slices.SortFunc(idle, func(a, b cand) int { return a.last.Compare(b.last) })
	for _, o := range idle {
		if !o.c.mu.TryLock() {
			continue
		}
		rested := false
		if o.c.idleLocked() {
			if err := o.c.closeLocked(); err != nil {
				fmt.Fprintf(o.c.h.cfg.Log, "rein serve: conversation %s: %v\n", o.c.id, err)
			}
			rested = true
		}
		o.c.mu.Unlock()
		if rested {
			return true
		}
	}
	return false
}

// release gives c's place among the open conversations back.
func (h *Host) release(c *Conv) {
	h.omu.Lock()
	delete(h.open, c)
	h.omu.Unlock()
}

// bucket is a token bucket: up to burst takes at once, refilled at rate a second. A zero rate
// never refuses.
type bucket struct {
	rate, burst float64
	tokens      float64
	at          time.Time
}

// take takes one token at now, or reports how long until one is there.
func (b *bucket) take(now time.Time) (ok bool, wait time.Duration) {
	if b.rate <= 0 {
		return true, 0
	}
	if b.at.IsZero() {
		b.tokens = b.burst
	} else if d := now.Sub(b.at); d > 0 {
		b.tokens = min(b.burst, b.tokens+d.Seconds()*b.rate)
	}
	b.at = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
}

// Get returns a conversation by id. With a Store, one another host created is found in the
// shared index.
func (h *Host) Get(id string) (*Conv, error) {
	h.mu.Lock()
	c, ok := h.convs[id]
	h.mu.Unlock()
	if ok {
		return c, nil
	}
	if h.cfg.Store != nil {
		if r, found, err := h.ix.Get(id); err != nil {
			return nil, err
		} else if found {
			return h.adopt(r), nil
		}
	}
	return nil, errf(api.NotFound, "no conversation %s", id)
}

// List returns every conversation's view, most recently updated first. Resting conversations are
// read from the index; only those with an open session are read live.
func (h *Host) List() ([]api.View, error) {
	rows, err := h.ix.All()
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	convs := make(map[string]*Conv, len(h.convs))
	for id, c := range h.convs {
		convs[id] = c
	}
	h.mu.Unlock()
	vs := make([]view, 0, len(convs))
	for _, r := range rows {
		c := convs[r.ID]
		if c == nil && h.cfg.Store != nil {
			c = h.adopt(r) // another host created it
		}
		if c == nil {
			continue
		}
		delete(convs, r.ID)
		vs = append(vs, c.viewOr(r))
	}
	// A conversation whose row is missing (its last index write failed) is read and indexed anew.
	for _, c := range convs {
		v, err := c.view()
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	slices.SortFunc(vs, func(a, b view) int {
		if a.updated != b.updated {
			return compare(b.updated, a.updated)
		}
		return compare(b.ID, a.ID)
	})
	out := make([]api.View, len(vs))
	for i, v := range vs {
		out[i] = v.View
		h.placeView(&out[i])
	}
	return out, nil
}

func compare[T int64 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Rebuild rewrites the index from the records: every conversation's row is computed anew (a
// resting one's record replayed read-only), under its lock, and rows of conversations the host
// does not hold are dropped.
func (h *Host) Rebuild() error {
	for _, c := range h.all() {
		c.mu.Lock()
		if h.cfg.Store != nil && c.sess == nil {
			c.mu.Unlock()
			continue // its owner keeps its row
		}
		c.known = false // read the creating operation back from the record too
		err := c.indexLocked()
		c.mu.Unlock()
		if err != nil {
			return err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	rows, err := h.ix.All()
	if err != nil {
		return err
	}
	var gone []string
	for _, r := range rows {
		if h.convs[r.ID] == nil {
			gone = append(gone, r.ID)
		}
	}
	return h.ix.Remove(gone)
}

// Rest closes the session of every conversation with no work and no subscribers now, rather than
// after Config.IdleAfter. Each reopens on demand.
func (h *Host) Rest() error {
	var errs []error
	for _, c := range h.all() {
		c.mu.Lock()
		if c.idleLocked() {
			errs = append(errs, c.closeLocked())
		}
		c.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Stats counts the host's conversations: all of them, those whose session is open (the others
// rest, costing only their id in memory), and those with an exchange running.
type Stats struct {
	Conversations int `json:"conversations"`
	Open          int `json:"open"`
	Running       int `json:"running"`
}

// Stats counts the conversations now.
func (h *Host) Stats() Stats {
	var st Stats
	for _, c := range h.all() {
		c.mu.Lock()
		st.Conversations++
		if c.sess != nil {
			st.Open++
		}
		if c.ex != nil {
			st.Running++
		}
		c.mu.Unlock()
	}
	return st
}

var errHostClosed = errf(api.HostClosed, "the host is shutting down")

// fs is the filesystem the host's sessions live on (under the reading of pointers from the rows,
// with a store).
func (h *Host) fs() fsys.FS {
	switch fs := h.cfg.Session.FS.(type) {
	case nil:
		return fsys.OS{}
	case *pointerFS:
		return fs.FS
	default:
		return fs
	}
}

// fileSize is the size of a record file, or -1 if it cannot be read.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return fi.Size()
}

// origin reads the creating operation and title from a record's first line, session_started.
func origin(path string) (op, title string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadBytes('\n')
	if err != nil {
		return "", "", fmt.Errorf("read the first record of %s: %w", path, err)
	}
	r, err := record.DecodeWith(line, 1, journal.Blobs(fsys.OS{}, path))
	if err != nil {
		return "", "", err
	}
	if s, ok := r.Body.(*record.SessionStarted); ok {
		return s.Op, s.Title, nil
	}
	return "", "", nil
}
