package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/store"
)

// Several hosts, one set of conversations (Config.Store; the README's "running several hosts").
//
// The store holds the records as rows and the index as a table; each host keeps a copy of the
// records it works on under its own Root. A host owns a conversation while its session is open
// here: opening one acquires its lease (bumping the epoch that fences off any earlier owner),
// writes the rows out to this host's copy and replays it; closing it — a rest, a shutdown —
// releases the lease, so whichever host the next request reaches takes it up. A request that needs
// the session of a conversation another host owns is refused with not_owner, naming that host.
//
// When the store says this host lost a lease (another host took it over after this one paused, or
// renewals failed for most of a lease), the conversation's running exchange is cancelled and its
// session dropped; every append after the takeover was refused by the fence, so the record holds
// nothing from this host after it. A host that dies leaves its leases to lapse: every host sweeps
// for lapsed leases every third of a lease, and the first to acquire one replays the record and
// settles it as a restart does — the exchange in flight quiesced as crashed, its calls answered
// truthfully, accepted submissions rejected as "host restarted" (fold.RestartPlan).

// Store is where the conversations live when several hosts share them: package pgstore's Store.
type Store interface {
	// Name is this host's name in the leases it holds.
	Name() string
	// Lease is a lease's length.
	Lease() time.Duration
	// Acquire takes a conversation's lease for this host, or refuses with a *store.OwnedError.
	Acquire(ctx context.Context, id string) (epoch int64, err error)
	// Holds reports whether this host holds a conversation's lease, and at which epoch.
	Holds(id string) (epoch int64, ok bool)
	// Owner says which host holds a conversation's lease now, and where it is reached.
	Owner(ctx context.Context, id string) (store.Owner, error)
	// ClaimOp claims an operation id for the conversation about to be created under it, or refuses
	// with a *store.OpTakenError naming the conversation another create made under it.
	ClaimOp(ctx context.Context, op, id, title string) error
	// Materialize writes a conversation's records out to the record file at path.
	Materialize(ctx context.Context, fs fsys.FS, id, path string) error
	// Lapsed lists the conversations whose owner neither renewed nor released its lease.
	Lapsed(ctx context.Context) ([]string, error)
	// OnLost sets what is called with each conversation whose lease this host lost.
	OnLost(func(id string))
	// Records reads a conversation's records after sequence number after, from the rows.
	Records(ctx context.Context, id string, after int64) ([]record.Record, error)
	// Watch returns a channel that receives when a conversation's rows may have grown (a hint:
	// read the rows to know), and the function that ends the watch.
	Watch(id string) (<-chan struct{}, func())
	// The conversation index (store.Row).
	Put(r store.Row) error
	Get(id string) (store.Row, bool, error)
	ByOp(op string) (store.Row, bool, error) // the conversation an operation created
	All() ([]store.Row, error)
	Remove(ids []string) error
}

// openShared opens a host over a store: the conversations are listed from its index, nothing is
// replayed until a request needs it, and the sweep for lapsed leases begins.
func (h *Host) openShared() error {
	if h.cfg.Session.Replicate == nil {
		return errors.New("open the host: a store needs the sessions to append through it (Session.Replicate)")
	}
	h.ix = h.cfg.Store
	var err error
	if h.shelf, err = openShelf(h.dir, h.cfg.Now()); err != nil {
		return err
	}
	rows, err := h.ix.All()
	if err != nil {
		return err
	}
	for _, r := range rows {
		h.adopt(r)
	}
	h.cfg.Store.OnLost(h.lost)
	h.sweeps.Add(1)
	go h.sweep()
	return nil
}

// adopt adds the conversation of an index row the host does not hold yet, and returns the one it
// holds.
func (h *Host) adopt(r Row) *Conv {
	h.mu.Lock()
	c, ok := h.convs[r.ID]
	h.mu.Unlock()
	if ok {
		return c
	}
	c = &Conv{h: h, id: r.ID, path: filepath.Join(h.dir, r.ID, journal.FileName), op: r.Op, opTitle: r.OpTitle, known: true}
	h.mu.Lock()
	defer h.mu.Unlock()
	if o, ok := h.convs[r.ID]; ok {
		return o
	}
	h.convs[c.id] = c
	if c.op != "" {
		if _, dup := h.ops[c.op]; !dup {
			h.ops[c.op] = c
		}
	}
	return c
}

// acquireLocked takes the conversation's lease and writes its records out to this host's copy,
// before the session is opened from it. Called with c.mu held.
func (c *Conv) acquireLocked() error {
	st := c.h.cfg.Store
	ctx, cancel := context.WithTimeout(c.h.ctx, st.Lease())
	defer cancel()
	if _, err := st.Acquire(ctx, c.id); err != nil {
		var owned *store.OwnedError
		if errors.As(err, &owned) {
			return &api.Error{Code: api.NotOwner, RetryAfter: time.Until(owned.Until), Message: fmt.Sprintf("conversation %s is served by host %s "+
				"(its lease runs to %s unless renewed): send this request there, or retry once that host lets it go",
				c.id, owned.Owner, owned.Until.UTC().Format(time.RFC3339))}
		}
		return fmt.Errorf("open conversation %s: %w", c.id, err)
	}
	if err := st.Materialize(ctx, c.h.fs(), c.id, c.path); err != nil {
		return fmt.Errorf("open conversation %s: %w", c.id, err)
	}
	return nil
}

// unsettledShared reports whether a conversation just taken up from the store has anything a host
// that died left open: an exchange in flight, or a submission not yet terminal (a host lets a
// conversation go only when it has none).
func (c *Conv) unsettledShared() bool {
	st := c.sess.Snapshot()
	if st.InFlight() || !st.IsReady() {
		return true
	}
	return len(st.OpenSubmissions()) > 0
}

// dropLocked ends the session of a conversation this host may no longer write (its lease was
// taken over, or a write was fenced): the running exchange is cancelled and the session closed
// once it has ended. Called with c.mu held.
func (c *Conv) dropLocked() {
	if c.ex != nil {
		c.dropping = true
		c.ex.cancel()
		return
	}
	c.stopChildrenLocked()
	if err := c.closeLocked(); err != nil {
		fmt.Fprintf(c.h.cfg.Log, "rein serve: conversation %s, dropped: %v\n", c.id, err)
	}
}

// rowsViewLocked is the view of a conversation another host owns, folded from its rows. Called
// with c.mu held.
// A conversation whose creating operation another host has just claimed may have no row yet: its
// first record is awaited, for as long as that host could take to write it.
func (c *Conv) rowsViewLocked() (view, error) {
	st := c.h.cfg.Store
	wake, unwatch := st.Watch(c.id)
	defer unwatch()
	ctx, cancel := context.WithTimeout(c.h.ctx, min(st.Lease(), 10*time.Second))
	defer cancel()
	unwritten := func() error {
		return &api.Error{Code: api.NotOwner, RetryAfter: time.Second, Message: fmt.Sprintf("conversation %s is being "+
			"created by another host, which has not written it yet: retry, and it is answered from wherever it is served", c.id)}
	}
	var recs []record.Record
	for {
		var err error
		if recs, err = st.Records(ctx, c.id, 0); err != nil {
			if ctx.Err() != nil && c.h.ctx.Err() == nil { // the wait ran out during the read
				return view{}, unwritten()
			}
			return view{}, fmt.Errorf("read conversation %s: %w", c.id, err)
		}
		if len(recs) > 0 {
			break
		}
		select {
		case <-wake:
		case <-time.After(50 * time.Millisecond): // a notification is a hint: look again anyway
		case <-ctx.Done():
			return view{}, unwritten()
		}
	}
	folded := fold.New()
	for _, r := range recs {
		if err := folded.Step(r); err != nil {
			return view{}, fmt.Errorf("read conversation %s: %w", c.id, err)
		}
	}
	return viewOf(c.id, folded), nil
}

// fenced reports whether err says another host took the conversation over.
func fenced(err error) bool { return errors.Is(err, store.ErrFenced) }

// lost is told, by the store, of a conversation whose lease this host lost.
func (h *Host) lost(id string) {
	h.mu.Lock()
	c, ok := h.convs[id]
	h.mu.Unlock()
	if !ok {
		return
	}
	go func() { // the store's renewing goroutine must not wait on a conversation's lock
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.sess != nil {
			fmt.Fprintf(h.cfg.Log, "rein serve: conversation %s: this host lost its lease; stopping its agent\n", id)
			c.dropLocked()
		}
	}()
}

// sweep takes over, every third of a lease, the conversations whose owner stopped renewing.
func (h *Host) sweep() {
	defer h.sweeps.Done()
	t := time.NewTicker(h.cfg.Store.Lease() / 3)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
		ids, err := h.cfg.Store.Lapsed(h.ctx)
		if err != nil {
			continue // the store is unreachable: the next sweep asks again
		}
		for _, id := range ids {
			h.takeOver(id)
		}
	}
}

// takeOver acquires a conversation whose lease lapsed and settles it (openLocked), then lets it
// rest.
func (h *Host) takeOver(id string) {
	c, err := h.Get(id)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess != nil {
		return
	}
	if err := c.openLocked(); err != nil {
		if api.CodeOf(err) != api.NotOwner && h.ctx.Err() == nil {
			fmt.Fprintf(h.cfg.Log, "rein serve: take over conversation %s: %v\n", id, err)
		}
		return
	}
	if err := c.indexLocked(); err != nil {
		fmt.Fprintf(h.cfg.Log, "rein serve: conversation %s: %v\n", id, err)
	}
	c.restLocked()
}

// follow subscribes to a conversation from the store: its records are read from the rows after
// the cursor, and again each time the store says they may have grown or its listening connection
// came back, so a client of any host misses nothing, and never reads a record that is not durable
// in the store (one a dying owner wrote only to its copy). The state each event carries is the fold
// of the rows read so far. live, when this host has the session open, brings its live events
// (streamed text), which only the owner has; end ends that local subscription.
func (c *Conv) follow(after int64, live <-chan session.Update, end func()) (*Subscription, error) {
	st := c.h.cfg.Store
	wake, unwatch := st.Watch(c.id) // before the first read: nothing appended after it is missed
	recs, err := st.Records(c.h.ctx, c.id, 0)
	folded := fold.New()
	for _, r := range recs {
		if err != nil {
			break
		}
		err = folded.Step(r)
	}
	if err != nil {
		unwatch()
		return nil, fmt.Errorf("follow conversation %s: %w", c.id, err)
	}
	ctx, cancel := context.WithCancel(c.h.ctx)
	updates := make(chan session.Update, 4096)
	stop := func() {
		cancel()
		unwatch()
		if end != nil {
			end()
		}
	}
	sub := &Subscription{Updates: updates, c: c, cancel: stop, remote: true}
	sub.snap.Store(folded.Snapshot())
	for _, r := range recs {
		if r.Seq > after {
			sub.Records = append(sub.Records, r)
		}
	}
	// send hands an update on, or ends the stream when the client has fallen behind: it resumes
	// from its cursor and misses nothing.
	send := func(u session.Update) bool {
		select {
		case updates <- u:
			return true
		default:
			cancel()
			return false
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-wake:
			}
			more, err := st.Records(ctx, c.id, folded.Seq())
			if err != nil {
				continue // the store is away: the listener's return wakes this again
			}
			for _, r := range more {
				if err := folded.Step(r); err != nil {
					fmt.Fprintf(c.h.cfg.Log, "rein serve: follow conversation %s: %v\n", c.id, err)
					cancel()
					return
				}
				sub.snap.Store(folded.Snapshot())
				if !send(session.Update{Record: &r}) {
					return
				}
			}
		}
	}()
	if live != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case u, ok := <-live:
					if !ok {
						return // the session closed here: the records still come from the rows
					}
					if u.Live != nil && !send(u) {
						return
					}
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(updates)
	}()
	return sub, nil
}
