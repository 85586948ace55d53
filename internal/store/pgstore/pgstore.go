// Package pgstore keeps conversations in PostgreSQL so that several hosts can serve one set of
// them (DESIGN §12.1, "running several hosts" in the README): every record line as a row, one
// owner per conversation through a lease with a fencing token, and the conversation index as a
// table. It is the one package that links the PostgreSQL driver (jackc/pgx).
//
// # Tables
//
//	rein_records(conversation, seq, line)        one row per record line, the exact bytes without
//	                                             the "\n"; (conversation, seq) is the primary key,
//	                                             so a line is never appended twice
//	rein_blobs(conversation, digest, data)       the blobs of lines too long to hold their payload
//	rein_leases(conversation, epoch, owner, owner_url, expires)
//	rein_ops(op, conversation, title, claimed)   the operation each conversation was created by:
//	                                             op is the primary key, so one operation id makes
//	                                             one conversation, whichever hosts it reaches
//	rein_conversations(...)                      the index (store.Row)
//
// # Ownership
//
// A host owns a conversation while it holds the conversation's lease: owner is its name and
// expires lies ahead of the database's clock, now() (no host's clock takes part). Acquiring bumps
// the epoch, the fencing token, and succeeds only when the lease is free (released: owner is
// empty), lapsed (expires has passed), or already this host's. Every append is one transaction
// that re-reads the epoch FOR SHARE and writes only if it is still the one the writer acquired:
// an owner that paused past its lease while another host took over is refused (store.ErrFenced),
// and the FOR SHARE lock makes a takeover wait for an append in progress, so the new owner's
// replay, read after its acquire commits, holds every line the old owner was told was durable.
// Leases are renewed every third of their length; a host that cannot renew reports every
// conversation it holds as lost once two thirds of the lease have passed since the last renewal
// that succeeded — before the lease can end — so it stops their agents before another host may
// take them.
//
// # The file beside the rows
//
// The rows are the truth. A host that acquires a conversation writes its rows out to the record
// file in its own state directory (Materialize) and opens the session there as usual, wrapping
// the file's writer (Options.Replicate of package session): each line is appended to the file
// and, at the next Sync, to the rows, in the fenced transaction. The file is this host's copy,
// rewritten from the rows at every acquire, so loci, pointers, replay and doctor read it exactly
// as they read a record on one machine.
//
// # Reaching the owner
//
// A lease names its owner and the URL other hosts reach it at (SetAdvertise), so a host that is
// asked to change a conversation another holds can hand the request on to it (Owner).
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/store"
)

// DefaultLease is a lease's length when Options.Lease is zero.
const DefaultLease = 15 * time.Second

// Options configure a Store.
type Options struct {
	// Name is this host's name in the leases it holds, shown to clients a mutation is refused to;
	// default: the machine's hostname and the process id.
	Name string
	// Lease is a lease's length; renewals come every third of it. Default DefaultLease.
	Lease time.Duration
	// Lost is called, on the renewing goroutine, with each conversation whose lease this host no
	// longer holds: another host took it, or renewals failed for too long. The host must stop the
	// conversation's agent and drop its session. It must not block.
	Lost func(conversation string)
	// NoRenew leaves the leases unrenewed, as a host paused or cut off from the database would:
	// for tests of what happens to such a host.
	NoRenew bool
}

// Store is one host's connection to the shared conversations.
type Store struct {
	pool     *pgxpool.Pool
	ipool    *pgxpool.Pool // the index's writes (index.go)
	opts     Options
	mu       sync.Mutex
	held     map[string]int64 // conversation → the epoch this host acquired it at
	stop     context.CancelFunc
	done     chan struct{}
	lastR    time.Time   // when the last renewal that succeeded was sent, guarded by mu
	url      string      // where other hosts reach this one (SetAdvertise), guarded by mu
	deadline *time.Timer // reports every lease lost unless a renewal succeeds first (arm)

	watch    watchers      // listen.go
	listened chan struct{} // closed when the listening goroutine has ended
}

// Open connects to the database at url (a postgres:// URL or keyword/value string), creates the
// tables if they are missing, and starts renewing the leases this Store acquires.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.Name == "" {
		h, _ := os.Hostname()
		opts.Name = fmt.Sprintf("%s/%d", h, os.Getpid())
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("the store's URL: %w (give a postgres:// URL)", err)
	}
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to the store: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	// The index is a cache of the records: its writes need not wait for the WAL's flush, as the
	// records' do (a row lost with the database's last moments is rewritten at the next change).
	icfg := cfg.Copy()
	icfg.MaxConns = 4
	icfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	ipool, err := pgxpool.NewWithConfig(ctx, icfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to the store: %w", err)
	}
	rctx, stop := context.WithCancel(context.Background())
	s := &Store{pool: pool, ipool: ipool, opts: opts, held: map[string]int64{}, stop: stop, done: make(chan struct{}),
		listened: make(chan struct{})}
	if !opts.NoRenew {
		s.arm(time.Now()) // nothing is held yet: this only starts the clock
	}
	go s.renew(rctx)
	go s.listen(rctx)
	return s, nil
}

const schema = `
CREATE TABLE IF NOT EXISTS rein_leases (
	conversation text PRIMARY KEY,
	epoch        bigint NOT NULL,
	owner        text NOT NULL,
	expires      timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS rein_records (
	conversation text NOT NULL,
	seq          bigint NOT NULL,
	line         bytea NOT NULL,
	PRIMARY KEY (conversation, seq)
);
CREATE TABLE IF NOT EXISTS rein_blobs (
	conversation text NOT NULL,
	digest       text NOT NULL,
	data         bytea NOT NULL,
	PRIMARY KEY (conversation, digest)
);
CREATE TABLE IF NOT EXISTS rein_conversations (
	id       text PRIMARY KEY,
	title    text NOT NULL,
	closed   boolean NOT NULL,
	created  bigint NOT NULL,
	updated  bigint NOT NULL,
	working  boolean NOT NULL,
	phase    text NOT NULL,
	seq      bigint NOT NULL,
	path     text NOT NULL,
	size     bigint NOT NULL,
	op       text NOT NULL,
	op_title text NOT NULL
);
ALTER TABLE rein_conversations ADD COLUMN IF NOT EXISTS backend text NOT NULL DEFAULT '';
ALTER TABLE rein_leases ADD COLUMN IF NOT EXISTS owner_url text NOT NULL DEFAULT '';
CREATE TABLE IF NOT EXISTS rein_ops (
	op           text PRIMARY KEY,
	conversation text NOT NULL,
	title        text NOT NULL
);
ALTER TABLE rein_ops ADD COLUMN IF NOT EXISTS claimed timestamptz NOT NULL DEFAULT now();
CREATE INDEX IF NOT EXISTS rein_conversations_updated ON rein_conversations (updated DESC, id DESC);
CREATE INDEX IF NOT EXISTS rein_conversations_op ON rein_conversations (op);
`

// migrate creates the tables, one host at a time.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(1919249774)"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, schema)
		return err
	})
	if err != nil {
		return fmt.Errorf("create the store's tables: %w", err)
	}
	return nil
}

// Name returns this host's name in the leases.
func (s *Store) Name() string { return s.opts.Name }

// Lease returns a lease's length.
func (s *Store) Lease() time.Duration { return s.opts.Lease }

// SetAdvertise sets the URL other hosts reach this one at (http://host:port), kept in every lease
// it takes from now on and, from its next renewal, in those it holds.
func (s *Store) SetAdvertise(url string) {
	s.mu.Lock()
	s.url = url
	s.mu.Unlock()
}

// Advertise returns the URL other hosts reach this one at ("" until SetAdvertise).
func (s *Store) Advertise() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Owner says who holds a conversation's lease now. It wraps store.ErrNoConversation when the
// store has no such conversation.
func (s *Store) Owner(ctx context.Context, id string) (store.Owner, error) {
	var o store.Owner
	err := s.pool.QueryRow(ctx, `SELECT owner, owner_url, expires, owner <> '' AND expires >= now() FROM rein_leases WHERE conversation = $1`, id).
		Scan(&o.Name, &o.URL, &o.Until, &o.Live)
	if errors.Is(err, pgx.ErrNoRows) {
		return o, fmt.Errorf("the owner of conversation %s: %w", id, store.ErrNoConversation)
	}
	if err != nil {
		return o, fmt.Errorf("the owner of conversation %s: %w", id, err)
	}
	return o, nil
}

// Close stops renewing and closes the connections. Leases still held lapse on their own.
func (s *Store) Close() error {
	s.stop()
	<-s.done
	<-s.listened
	s.mu.Lock()
	if s.deadline != nil {
		s.deadline.Stop()
	}
	s.mu.Unlock()
	s.pool.Close()
	s.ipool.Close()
	return nil
}

func interval(d time.Duration) string { return fmt.Sprintf("%d milliseconds", d.Milliseconds()) }

// Acquire takes the lease of a conversation for this host and returns its new epoch. It refuses
// with a *store.OwnedError when another host holds a live lease, and with store.ErrNoConversation
// when the store has no such conversation.
func (s *Store) Acquire(ctx context.Context, id string) (int64, error) {
	var epoch int64
	err := s.pool.QueryRow(ctx, `UPDATE rein_leases SET epoch = epoch + 1, owner = $2, owner_url = $4, expires = now() + $3::interval
		WHERE conversation = $1 AND (owner = '' OR owner = $2 OR expires < now()) RETURNING epoch`,
		id, s.opts.Name, interval(s.opts.Lease), s.Advertise()).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		var owner, url string
		var until time.Time
		err := s.pool.QueryRow(ctx, `SELECT owner, owner_url, expires FROM rein_leases WHERE conversation = $1`, id).Scan(&owner, &url, &until)
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, fmt.Errorf("acquire conversation %s: %w", id, store.ErrNoConversation)
		}
		if err != nil {
			return 0, fmt.Errorf("acquire conversation %s: %w", id, err)
		}
		return 0, &store.OwnedError{Conversation: id, Owner: owner, URL: url, Until: until}
	}
	if err != nil {
		return 0, fmt.Errorf("acquire conversation %s: %w", id, err)
	}
	s.mu.Lock()
	s.held[id] = epoch
	s.mu.Unlock()
	return epoch, nil
}

// create makes a new conversation's lease, owned by this host at epoch 1.
func (s *Store) create(ctx context.Context, id string) (int64, error) {
	_, err := s.pool.Exec(ctx, `INSERT INTO rein_leases (conversation, epoch, owner, owner_url, expires) VALUES ($1, 1, $2, $4, now() + $3::interval)`,
		id, s.opts.Name, interval(s.opts.Lease), s.Advertise())
	if err != nil {
		return 0, fmt.Errorf("create conversation %s in the store: %w", id, err)
	}
	s.mu.Lock()
	s.held[id] = 1
	s.mu.Unlock()
	return 1, nil
}

// Release gives up this host's lease of a conversation, if it still holds it at epoch: any host
// may acquire it at once.
func (s *Store) Release(ctx context.Context, id string, epoch int64) error {
	s.mu.Lock()
	if s.held[id] == epoch {
		delete(s.held, id)
	}
	s.mu.Unlock()
	_, err := s.pool.Exec(ctx, `UPDATE rein_leases SET owner = '', expires = now() WHERE conversation = $1 AND epoch = $2`, id, epoch)
	if err != nil {
		return fmt.Errorf("release conversation %s: %w", id, err)
	}
	return nil
}

// Holds reports the epoch this host holds a conversation at, if it does.
func (s *Store) Holds(id string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.held[id]
	return e, ok
}

// Lapsed lists the conversations whose owner neither renewed nor released their lease: what a
// host that died or was cut off left, for another to take over.
func (s *Store) Lapsed(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT conversation FROM rein_leases WHERE owner <> '' AND expires < now() ORDER BY conversation`)
	if err != nil {
		return nil, fmt.Errorf("list lapsed leases: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list lapsed leases: %w", err)
	}
	return ids, nil
}

// renew renews the held leases every third of a lease, and reports the ones lost.
func (s *Store) renew(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.opts.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if s.opts.NoRenew {
			continue
		}
		s.renewOnce(ctx)
	}
}

// renewOnce renews every held lease in one statement.
func (s *Store) renewOnce(ctx context.Context) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.held))
	epochs := make([]int64, 0, len(s.held))
	for id, e := range s.held {
		ids, epochs = append(ids, id), append(epochs, e)
	}
	s.mu.Unlock()
	sent := time.Now()
	rctx, cancel := context.WithTimeout(ctx, s.opts.Lease/3)
	rows, err := s.pool.Query(rctx, `UPDATE rein_leases l SET expires = now() + $4::interval, owner_url = $5
		FROM unnest($1::text[], $2::bigint[]) AS h(c, e)
		WHERE l.conversation = h.c AND l.epoch = h.e AND l.owner = $3 RETURNING l.conversation`,
		ids, epochs, s.opts.Name, interval(s.opts.Lease), s.Advertise())
	var kept []string
	if err == nil {
		kept, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	cancel()
	if err != nil {
		return // the deadline armed by the last renewal that succeeded stands
	}
	s.arm(sent)
	renewed := make(map[string]bool, len(kept))
	for _, id := range kept {
		renewed[id] = true
	}
	var lost []string
	s.mu.Lock()
	for i, id := range ids {
		if !renewed[id] && s.held[id] == epochs[i] {
			delete(s.held, id)
			lost = append(lost, id)
		}
	}
	s.mu.Unlock()
	for _, id := range lost {
		s.lose(id)
	}
}

// arm records a renewal sent at sent that succeeded, and arms the deadline it sets: unless another
// succeeds first, every lease held is reported lost two thirds of a lease after sent. Each lease
// runs a whole lease after its last renewal by the database's clock, and the database received it
// after sent, so the agents stop with a third of a lease to spare before another host may take
// their conversations.
func (s *Store) arm(sent time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastR = sent
	if s.deadline != nil {
		s.deadline.Stop()
	}
	s.deadline = time.AfterFunc(time.Until(sent.Add(s.opts.Lease*2/3)), func() {
		s.mu.Lock()
		stale := s.lastR.Equal(sent)
		s.mu.Unlock()
		if stale {
			s.loseAll()
		}
	})
}

func (s *Store) loseAll() {
	s.mu.Lock()
	ids := make([]string, 0, len(s.held))
	for id := range s.held {
		ids = append(ids, id)
	}
	clear(s.held)
	s.mu.Unlock()
	for _, id := range ids {
		s.lose(id)
	}
}

func (s *Store) lose(id string) {
	s.mu.Lock()
	lost := s.opts.Lost
	s.mu.Unlock()
	if lost != nil {
		lost(id)
	}
}

// OnLost sets Options.Lost: what is told of each conversation whose lease this host lost.
func (s *Store) OnLost(f func(id string)) {
	s.mu.Lock()
	s.opts.Lost = f
	s.mu.Unlock()
}

// Materialize writes a conversation's rows out to the record file at path, replacing what the
// file held, and its blobs beside it: this host's copy, to open the session from. The rows must
// run 1, 2, 3, … with no gap.
func (s *Store) Materialize(ctx context.Context, fs fsys.FS, id, path string) error {
	rows, err := s.pool.Query(ctx, `SELECT seq, line FROM rein_records WHERE conversation = $1 ORDER BY seq`, id)
	if err != nil {
		return fmt.Errorf("read conversation %s from the store: %w", id, err)
	}
	var buf []byte
	var want int64 = 1
	var seq int64
	var line []byte
	_, err = pgx.ForEachRow(rows, []any{&seq, &line}, func() error {
		if seq != want {
			return fmt.Errorf("the store holds record %d of conversation %s where %d belongs", seq, id, want)
		}
		want++
		buf = append(append(buf, line...), '\n')
		return nil
	})
	if err != nil {
		return fmt.Errorf("read conversation %s from the store: %w", id, err)
	}
	dir := filepath.Dir(path)
	if err := fsys.MkdirAllSync(fs, dir); err != nil {
		return fmt.Errorf("materialize conversation %s: %w", id, err)
	}
	brows, err := s.pool.Query(ctx, `SELECT digest, data FROM rein_blobs WHERE conversation = $1`, id)
	if err != nil {
		return fmt.Errorf("read conversation %s's blobs from the store: %w", id, err)
	}
	var digest string
	var data []byte
	_, err = pgx.ForEachRow(brows, []any{&digest, &data}, func() error {
		return journal.PutBlob(fs, path, digest, data)
	})
	if err != nil {
		return fmt.Errorf("materialize conversation %s's blobs: %w", id, err)
	}
	if err := replaceFile(fs, path, buf); err != nil {
		return fmt.Errorf("materialize conversation %s: %w", id, err)
	}
	return nil
}

// replaceFile puts data at path: written to a temporary file, synced, renamed over path.
func replaceFile(fs fsys.FS, path string, data []byte) error {
	tmp := path + ".new"
	if err := fs.RemoveAll(tmp); err != nil {
		return err
	}
	f, err := fs.Create(tmp)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		return err
	}
	if err := fs.Rename(tmp, path); err != nil {
		return err
	}
	return fs.SyncDir(filepath.Dir(path))
}

// Replicate wraps a record file's writer in the Journal that appends its lines to the store too
// (session.Options.Replicate). The conversation is the record's directory's name. One this host
// holds is appended to at the epoch it holds; one the store does not have yet (a create: the file
// is empty) is created, owned by this host.
func (s *Store) Replicate(path string, file *journal.Writer) (*Writer, error) {
	id := filepath.Base(filepath.Dir(path))
	epoch, ok := s.Holds(id)
	if !ok {
		if file.Next() != 1 {
			return nil, fmt.Errorf("open conversation %s: this host does not hold its lease (acquire it first)", id)
		}
		var err error
		if epoch, err = s.create(context.Background(), id); err != nil {
			return nil, err
		}
	}
	return &Writer{s: s, id: id, epoch: epoch, file: file}, nil
}

// Writer is a conversation's Journal in the store: every line goes to the record file at once,
// and to the rows at the next Sync, in one transaction fenced by the epoch.
type Writer struct {
	s       *Store
	id      string
	epoch   int64
	file    *journal.Writer
	pending []pendingLine
	err     error
}

type pendingLine struct {
	seq  int64
	line []byte
}

// Epoch returns the epoch the writer appends at.
func (w *Writer) Epoch() int64 { return w.epoch }

// Append writes a line to the file and keeps it for the next Sync.
func (w *Writer) Append(line []byte) (record.Locus, error) {
	if w.err != nil {
		return record.Locus{}, w.err
	}
	loc, err := w.file.Append(line)
	if err != nil {
		return loc, err
	}
	w.pending = append(w.pending, pendingLine{loc.Seq, line[: len(line)-1 : len(line)-1]})
	return loc, nil
}

// Sync appends the pending lines as rows in one transaction that re-reads the lease's epoch FOR
// SHARE and writes nothing if it moved (store.ErrFenced). Any failure poisons the Writer, as a
// failed fsync poisons a file's: whether a commit whose answer was lost happened is for the next
// owner's read of the rows to say.
func (w *Writer) Sync() error {
	if w.err != nil {
		return w.err
	}
	if len(w.pending) == 0 {
		return nil
	}
	seqs := make([]int64, len(w.pending))
	lines := make([][]byte, len(w.pending))
	for i, p := range w.pending {
		seqs[i], lines[i] = p.seq, p.line
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.s.opts.Lease)
	defer cancel()
	// One statement, so one transaction and one round trip: the lease's row is read FOR SHARE
	// (a takeover's update waits for the commit), the rows are inserted only at the writer's
	// epoch, and the notification is sent only with them.
	var epoch, inserted int64
	err := w.s.pool.QueryRow(ctx, `WITH l AS (SELECT epoch FROM rein_leases WHERE conversation = $1 FOR SHARE),
		ins AS (INSERT INTO rein_records (conversation, seq, line)
			SELECT $1, s, b FROM unnest($3::bigint[], $4::bytea[]) AS u(s, b) WHERE (SELECT epoch FROM l) = $2 RETURNING 1)
		SELECT l.epoch, (SELECT count(*) FROM ins), CASE WHEN l.epoch = $2 THEN pg_notify('rein_records', $5) END IS NULL FROM l`,
		w.id, w.epoch, seqs, lines, fmt.Sprintf("%s %d", w.id, seqs[len(seqs)-1])).Scan(&epoch, &inserted, new(bool))
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		err = fmt.Errorf("%w (its lease is gone)", store.ErrFenced)
	case err == nil && epoch != w.epoch:
		err = fmt.Errorf("%w (it appends at epoch %d; the lease is at %d)", store.ErrFenced, w.epoch, epoch)
	case err == nil && inserted != int64(len(seqs)):
		err = fmt.Errorf("%d of %d records were appended", inserted, len(seqs))
	}
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "23505" {
			err = fmt.Errorf("%w: a record was appended twice (%s)", store.ErrFenced, pe.Message)
		}
		w.err = fmt.Errorf("append records %d–%d of conversation %s to the store: %w (%w)", seqs[0], seqs[len(seqs)-1], w.id, err, journal.ErrPoisoned)
		return w.err
	}
	w.pending = w.pending[:0]
	return nil
}

// PutBlob stores a blob in the store (content-addressed: one already there is kept).
func (w *Writer) PutBlob(digest string, data []byte) error {
	if w.err != nil {
		return w.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.s.opts.Lease)
	defer cancel()
	_, err := w.s.pool.Exec(ctx, `INSERT INTO rein_blobs (conversation, digest, data) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, w.id, digest, data)
	if err != nil {
		w.err = fmt.Errorf("store blob %s of conversation %s: %w (%w)", digest, w.id, err, journal.ErrPoisoned)
		return w.err
	}
	return nil
}

// Close closes the file and releases the lease, if this host still holds it at the writer's
// epoch. Lines not yet synced are not appended.
func (w *Writer) Close() error {
	err := w.file.Close()
	ctx, cancel := context.WithTimeout(context.Background(), w.s.opts.Lease)
	defer cancel()
	return errors.Join(err, w.s.Release(ctx, w.id, w.epoch))
}

// Next returns the sequence number the next appended line must carry.
func (w *Writer) Next() int64 { return w.file.Next() }

// Abandon closes the file and leaves the lease as it is, neither renewed nor released, as a host
// that stopped dead would: for tests of the hosts that come after it.
func (w *Writer) Abandon() error {
	w.s.mu.Lock()
	if w.s.held[w.id] == w.epoch {
		delete(w.s.held, w.id)
	}
	w.s.mu.Unlock()
	return w.file.Close()
}
