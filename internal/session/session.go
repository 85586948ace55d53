// Package session is the single writer of one session's record: it proposes records to the fold,
// writes and syncs them through the journal, applies them, and publishes what changed. Nothing
// else writes a record file, and one Session at a time writes a given one, across processes: an
// open Session holds the record's lock (package journal), and a second writer is refused with the
// first one's name.
//
// The order is fixed and written here once: propose → judge → encode (redacted) → append → sync
// (protocol records before they are applied; events no later than the next protocol record or an
// explicit Sync) → apply → publish. A record the fold refuses on the live path is a harness bug:
// the append fails and nothing is written.
//
// Readers hold snapshots. After each apply the writer publishes the folded state as a value that
// never changes (fold.State.Snapshot) together with the loci of the records it folded; Snapshot
// hands it out without a lock, so a reader never sees a half-applied state, never holds the live
// one, and never waits for a writer. Departed turns are read back from the file through
// digest-checked pointers built from the same snapshot.
package session

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
)

// Options are the injected edges of a session.
type Options struct {
	FS  fsys.FS
	Now func() time.Time
	// Redact takes secrets out of every text a record carries from outside (tool output, model
	// text, provider errors: see redact.go) before it is written, and out of live events before
	// they are published. Default: nothing is redacted.
	Redact Redactor
	// Replicate, when set, wraps the record file's writer in the Journal the session appends
	// through, at Create and Open: a store that holds the truth elsewhere (package pgstore keeps
	// every line as a row in PostgreSQL) and the file as this process's copy of it. Nil: the file
	// is the record, as it is for one machine.
	Replicate func(path string, file *journal.Writer) (Journal, error)
}

// Journal is what a session appends its record's lines through: the record file's writer
// (*journal.Writer), or a store's that wraps it (Options.Replicate). Its rules are the file's
// (package journal): Append checks and writes one line and returns its locus in the file; a line is
// durable once Sync returns after it; a failed Append or Sync poisons it; Close releases the
// record. A Journal that also has PutBlob(digest string, data []byte) error is handed each blob
// once the file's copy is stored, before the line naming it is appended.
type Journal interface {
	Append(line []byte) (record.Locus, error)
	Sync() error
	Close() error
}

// syncBehinder is the optional side of a Journal whose sync can run beside its appends
// (*journal.Writer's SyncBehind). AppendBehind syncs a Journal without it as Append does.
type syncBehinder interface {
	SyncBehind() func() error
}

// blobPutter is the optional side of a Journal that keeps blobs too.
type blobPutter interface {
	PutBlob(digest string, data []byte) error
}

// journalFor is the Journal over the record file's writer w.
func (o Options) journalFor(w *journal.Writer) (Journal, error) {
	if o.Replicate == nil {
		return w, nil
	}
	j, err := o.Replicate(w.Path(), w)
	if err != nil {
		return nil, errors.Join(err, w.Close())
	}
	return j, nil
}

func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = fsys.OS{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Redact == nil {
		o.Redact = RedactFunc(func(s string) string { return s })
	}
	return o
}

// Session is one open session: its folded state and its record file.
type Session struct {
	opts Options
	id   string
	path string

	// The write path, serialised by wmu: the live state, which nothing outside it reads.
	wmu    sync.Mutex
	st     *fold.State
	w      Journal
	loci   loci // appended only, so a published view never changes
	failed error
	closed bool
	behind chan error // the sync AppendBehind left running, until a write awaits it; nil if none

	// published is what readers get: a snapshot as of the last applied record.
	published atomic.Pointer[view]

	smu  sync.Mutex
	subs map[int]chan Update
	next int
	held heldText // streamed text not yet published, guarded by smu (redact.go)
}

// Update is what subscribers receive: a record that was applied, or a live event that is
// published but not recorded (streamed text, tool output).
type Update struct {
	Record *record.Record
	Live   *Live
}

// Live is a live, unrecorded event.
type Live struct {
	Kind   string `json:"kind"` // "text", "thinking", "tool_call", "tool_args", "tool_start", "tool_output", "tool_end", "restart", "status"
	Text   string `json:"text,omitempty"`
	CallID string `json:"call_id,omitempty"`
	Name   string `json:"name,omitempty"`
}

// view is one published moment of the session: the folded state and the loci of its records.
// Neither ever changes.
type view struct {
	st   *fold.State
	loci loci
}

// publishState hands readers the state as the write path has just left it. The caller is the write
// path (or a constructor).
func (s *Session) publishState() {
	s.published.Store(&view{st: s.st.Snapshot(), loci: s.loci.view()})
}

func (s *Session) view() *view { return s.published.Load() }

// ErrFailed wraps every error after a session failed (an fsync error, a refused live record).
var ErrFailed = errors.New("session failed")

// Create creates a session in exactly dir and writes its first record, session_started, as given.
// The Session holds the record's writer lock until Close (see package journal). It is Start's
// lower half: rein makes its sessions with Start (a fresh id, cleanup on failure); a test that
// needs a session at a fixed place calls Create.
func Create(dir string, opts Options, started *record.SessionStarted) (*Session, error) {
	opts = opts.withDefaults()
	fw, err := journal.Create(opts.FS, dir)
	if err != nil {
		return nil, err
	}
	w, err := opts.journalFor(fw)
	if err != nil {
		return nil, err
	}
	s := &Session{opts: opts, id: started.Session, path: fw.Path(), st: fold.New(), w: w, subs: map[int]chan Update{}}
	s.publishState()
	if err := s.Commit(started); err != nil {
		w.Close()
		return nil, err
	}
	return s, nil
}

// Open takes a session's writer lock, replays its record through the fold (quarantining a torn
// tail) and returns it ready to append; Close releases the lock. A record another writer holds —
// another process, or another Session of it in this one — is refused with a *journal.HeldError
// naming the holder, and nothing is read; a refused record leaves the file untouched and returns a
// *journal.RefusedError.
func Open(path string, opts Options) (*Session, journal.Report, error) {
	opts = opts.withDefaults()
	st := fold.New()
	var at loci
	blobs := journal.Blobs(opts.FS, path)
	fw, rep, err := journal.Open(opts.FS, path, func(seq int64, line []byte, loc record.Locus) error {
		r, err := record.DecodeWith(line, seq, blobs)
		if err != nil {
			return err
		}
		if err := st.Step(r); err != nil {
			return err
		}
		at.add(loc)
		return nil
	})
	if err != nil {
		return nil, rep, err
	}
	w, err := opts.journalFor(fw)
	if err != nil {
		return nil, rep, err
	}
	id := st.Meta().Session
	if id == "" {
		// A crash between creating the record and writing its first line leaves it empty: the
		// session is still named by its directory.
		id = filepath.Base(filepath.Dir(path))
	}
	s := &Session{opts: opts, id: id, path: path, st: st, w: w, loci: at, subs: map[int]chan Update{}}
	s.publishState()
	return s, rep, nil
}

// Load replays a session's record read-only, for a reader that needs a Session rather than a
// state: a fork's read of its parent. It takes no lock, so it works while a writer holds the record,
// and quarantines nothing (a torn tail, or a line its writer is appending, is left where it is).
// The Session refuses every write with ErrReadOnly; Close releases nothing.
func Load(path string, opts Options) (*Session, journal.Report, error) {
	opts = opts.withDefaults()
	st := fold.New()
	var at loci
	rep, err := journal.Inspect(opts.FS, path, func(seq int64, line []byte, loc record.Locus) error {
		r, err := record.Decode(line, seq)
		if err != nil {
			return err
		}
		if err := st.Step(r); err != nil {
			return err
		}
		at.add(loc)
		return nil
	})
	if err != nil {
		return nil, rep, err
	}
	id := st.Meta().Session
	if id == "" {
		id = filepath.Base(filepath.Dir(path))
	}
	s := &Session{opts: opts, id: id, path: path, st: st, loci: at, subs: map[int]chan Update{}}
	s.publishState()
	return s, rep, nil
}

// ErrReadOnly is returned by every write to a Session made by Load.
var ErrReadOnly = errors.New("the session was loaded read-only: open it to write")

// Replay folds a record file without opening it for writing (and without quarantining anything).
func Replay(fs fsys.FS, path string) (*fold.State, journal.Report, error) {
	if fs == nil {
		fs = fsys.OS{}
	}
	st := fold.New()
	blobs := journal.Blobs(fs, path)
	rep, err := journal.Inspect(fs, path, func(seq int64, line []byte, _ record.Locus) error {
		r, err := record.DecodeWith(line, seq, blobs)
		if err != nil {
			return err
		}
		return st.Step(r)
	})
	return st, rep, err
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Path returns the record file's path.
func (s *Session) Path() string { return s.path }

// Append writes records in order. Each protocol record is synced before it is applied; events are
// written at once and synced with the next protocol record or Sync.
func (s *Session) Append(ps ...record.Payload) error { return s.write(false, ps) }

// Commit appends records and syncs them all before returning: for events something must act on
// durably (tool_started before a tool runs; a host submission before it is acknowledged).
func (s *Session) Commit(ps ...record.Payload) error { return s.write(true, ps) }

// AppendBehind is Append for a batch's tool results, whose sync need not hold up the next
// request: its protocol records are applied at once, and their fsync, started at once, runs
// beside what the caller does next (building, validating and sending that request). The next
// write that syncs (the reply's commit), Sync and Close wait for it first, and its failure fails
// the session there, so nothing acts on the reply to a request before the results it carried
// are durable. A crash loses them only within that one fsync, as it would lose them during
// Append's; the provider may have been sent them by then, which changes nothing it keeps.
func (s *Session) AppendBehind(ps ...record.Payload) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.writeMode(false, true, ps)
}

// AppendPlan writes the records plan returns, computed from the state as it stands at the writer:
// no other record lands between the reading and the writing, so a decision made from the state
// (deliver this message, withdraw that one) cannot be overtaken by another writer's. plan is
// given the latest snapshot, which under the writer's lock is the state the records will be
// judged against; it runs under that lock, so it must not call back into the session. Nothing is
// written when it returns none.
func (s *Session) AppendPlan(plan func(st *fold.State) []record.Payload) error {
	return s.writePlan(false, plan)
}

// CommitPlan is AppendPlan, synced before it returns, as Commit is.
func (s *Session) CommitPlan(plan func(st *fold.State) []record.Payload) error {
	return s.writePlan(true, plan)
}

func (s *Session) writePlan(syncAll bool, plan func(st *fold.State) []record.Payload) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	ps := plan(s.view().st)
	if len(ps) == 0 {
		return nil
	}
	return s.writeMode(syncAll, false, ps)
}

func (s *Session) write(syncAll bool, ps []record.Payload) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.writeMode(syncAll, false, ps)
}

// sync makes what was written durable, and waits for the sync AppendBehind left running, if
// any; wmu is held. The two overlap: this one covers every line the other does (an fsync of the
// file), so it need not wait to start; but only both succeeding says the lines are durable (the
// kernel reports a failed write-back to one fsync only), so it returns after both, the earlier
// one's failure first.
func (s *Session) sync() error {
	err := s.w.Sync()
	if berr := s.awaitBehind(); berr != nil {
		return berr
	}
	if err != nil {
		return s.fail(err)
	}
	return nil
}

// awaitBehind waits for the sync AppendBehind left running, if any; wmu is held.
func (s *Session) awaitBehind() error {
	if s.behind == nil {
		return nil
	}
	err := <-s.behind
	s.behind = nil
	if err != nil {
		return s.fail(err)
	}
	return nil
}

// syncBehind starts syncing what was written, beside the caller, if the Journal can; else it
// syncs now. wmu is held.
func (s *Session) syncBehind() error {
	sb, ok := s.w.(syncBehinder)
	if !ok {
		return s.sync()
	}
	if err := s.awaitBehind(); err != nil {
		return err
	}
	f, done := sb.SyncBehind(), make(chan error, 1)
	go func() { done <- f() }()
	s.behind = done
	return nil
}

// writeMode writes ps, its protocol records synced behind (AppendBehind) or before they are
// applied; called with wmu held.
func (s *Session) writeMode(syncAll, behind bool, ps []record.Payload) error {
	if s.w == nil {
		return ErrReadOnly
	}
	if s.failed != nil {
		return fmt.Errorf("%w: %w", ErrFailed, s.failed)
	}
	// Written records wait here until they are applied. A protocol record is applied only after
	// a sync; the events that follow it in the same call are written before that sync, so a
	// protocol record and its events (an assistant message and its first tool_started) cost one
	// fsync. Events never depend on what they follow; the next protocol record does, so it waits
	// for the pending ones to be applied.
	type written struct {
		r   record.Record
		loc record.Locus
	}
	var pending []written
	var applied []record.Record
	protocolPending := false
	apply := func(sync bool) error {
		switch {
		case sync && behind:
			if err := s.syncBehind(); err != nil {
				return err
			}
		case sync:
			if err := s.sync(); err != nil {
				return err
			}
		}
		defer s.publishState()
		for _, w := range pending {
			if err := s.st.Step(w.r); err != nil {
				return s.fail(err)
			}
			s.loci.add(w.loc)
			applied = append(applied, w.r)
		}
		pending, protocolPending = pending[:0], false
		return nil
	}
	for _, p := range ps {
		p = s.redact(p)
		class, _ := record.ClassOf(p.Kind())
		if class == record.Protocol && len(pending) > 0 {
			if err := apply(protocolPending); err != nil {
				return err
			}
		}
		seq := s.st.Seq() + 1 + int64(len(pending))
		line, err := record.Encode(record.Record{Seq: seq, Time: s.opts.Now().UnixMilli(), Body: p})
		if err != nil {
			return s.fail(err)
		}
		// The fold applies what the line says, not the value it was made from, so the live state
		// is the state a replay will build, byte for byte (invalid UTF-8, for one, does not survive
		// JSON).
		r, err := record.Decode(line, seq)
		if err != nil {
			return s.fail(fmt.Errorf("a record does not survive its own encoding (a harness bug): %w", err))
		}
		if len(line) > record.BlobOver || carriesImages(p) {
			if line, err = s.externalize(line); err != nil {
				return s.fail(err)
			}
		}
		if len(pending) == 0 {
			if err := s.st.Judge(r); err != nil {
				return s.fail(fmt.Errorf("the fold refused a live record (a harness bug): %w", err))
			}
		}
		loc, err := s.w.Append(line)
		if err != nil {
			return s.fail(err)
		}
		pending = append(pending, written{r, loc})
		if class == record.Protocol {
			protocolPending = true
		} else if !protocolPending {
			if err := apply(false); err != nil {
				return err
			}
		}
	}
	if err := apply(protocolPending || syncAll); err != nil {
		return err
	}
	for i := range applied {
		s.publish(Update{Record: &applied[i]})
	}
	return nil
}

// externalize stores a long line's payload as a blob beside the record, durably, and returns the
// blob line to append in its place.
func (s *Session) externalize(line []byte) ([]byte, error) {
	blobLine, digest, payload, err := record.Externalize(line)
	if err != nil {
		return nil, fmt.Errorf("a record does not survive its own encoding (a harness bug): %w", err)
	}
	if err := journal.PutBlob(s.opts.FS, s.path, digest, payload); err != nil {
		return nil, err
	}
	if bp, ok := s.w.(blobPutter); ok {
		if err := bp.PutBlob(digest, payload); err != nil {
			return nil, err
		}
	}
	return blobLine, nil
}

func (s *Session) fail(err error) error {
	s.failed = err
	return fmt.Errorf("%w: %w", ErrFailed, err)
}

// Failed returns the error that failed the session, or nil while it can still be written.
func (s *Session) Failed() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.failed
}

// Sync makes every written event durable.
func (s *Session) Sync() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.w == nil {
		return ErrReadOnly
	}
	if s.failed != nil {
		return fmt.Errorf("%w: %w", ErrFailed, s.failed)
	}
	return s.sync()
}

// Snapshot returns the folded state as of the last applied record: a value that never changes
// (its Step refuses; Clone it to fold further). It takes no lock, and any number of goroutines
// may hold and read it while the session goes on; take a new one to see what was applied since.
// Every reader, the session's own writers included, reads the state through Snapshot: the live
// state never leaves the write path.
func (s *Session) Snapshot() *fold.State { return s.view().st }

// Close closes the record file and releases the record's lock.
func (s *Session) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.smu.Lock()
	for k, ch := range s.subs {
		close(ch)
		delete(s.subs, k)
	}
	s.smu.Unlock()
	if s.w == nil || s.closed {
		return nil
	}
	s.closed = true
	return errors.Join(s.awaitBehind(), s.w.Close())
}

// Discard removes the session — its directory, the record and its blobs — and closes it: for a
// session made for a prompt that was then refused before anything of it was recorded, which
// would otherwise stand as the workspace's newest, empty, in front of the one worked in. The
// directory goes while the session still holds the record's lock, so no other process opens it
// in between. A session whose record is kept elsewhere too (Options.Replicate) is refused: only
// its file would go.
func (s *Session) Discard() error {
	if s.opts.Replicate != nil {
		return errors.New("discard a session: its record is kept in a store too; only its file would be removed")
	}
	s.wmu.Lock()
	switch {
	case s.w == nil:
		s.wmu.Unlock()
		return ErrReadOnly
	case s.closed:
		// Its lock is released: another process may have the session open now.
		s.wmu.Unlock()
		return errors.New("discard a session: it is closed")
	}
	err := s.opts.FS.RemoveAll(filepath.Dir(s.path))
	s.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("discard the session %s: %w", s.id, err)
	}
	return s.Close()
}

// Publish sends a live event to subscribers; it is not recorded.
func (s *Session) Publish(l Live) { s.publish(Update{Live: &l}) }

// Subscribe returns a channel of updates and a function that ends the subscription. A subscriber
// that falls more than 4096 updates behind is dropped: its channel closes and it must re-read.
func (s *Session) Subscribe() (<-chan Update, func()) {
	s.smu.Lock()
	defer s.smu.Unlock()
	ch := make(chan Update, 4096)
	k := s.next
	s.next++
	s.subs[k] = ch
	return ch, func() {
		s.smu.Lock()
		defer s.smu.Unlock()
		if c, ok := s.subs[k]; ok {
			close(c)
			delete(s.subs, k)
		}
	}
}

func (s *Session) publish(u Update) {
	s.smu.Lock()
	defer s.smu.Unlock()
	if len(s.subs) == 0 {
		s.held = heldText{}
		return
	}
	for _, u := range s.redactUpdate(u) {
		for k, ch := range s.subs {
			select {
			case ch <- u:
			default:
				close(ch)
				delete(s.subs, k)
			}
		}
	}
}
