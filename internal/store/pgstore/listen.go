package pgstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/internal/record"
)

// Following a conversation from its rows, on any host. Every append notifies the channel
// rein_records with "<conversation> <last seq>" in its transaction, so the notification is sent
// only if the rows are committed. A notification is a hint, never the data: a watcher woken by it
// reads the rows after its own cursor (Records). The Store keeps one connection listening; each
// time it (re)connects it wakes every watcher, so whatever was committed while it was away is read
// too — a notification lost with a connection costs a query, never a record.

// watchers are the wake channels of one Store, by conversation.
type watchers struct {
	mu   sync.Mutex
	next int
	by   map[string]map[int]chan struct{}
}

func (w *watchers) wake(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range w.by[id] {
		poke(ch)
	}
}

func (w *watchers) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.by {
		for _, ch := range m {
			poke(ch)
		}
	}
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Watch returns a channel that receives when rows may have been appended to a conversation (or
// the listening connection came back, and they may have been while it was away), and the function
// that ends the watch. The channel holds one wake at most: a reader that was busy reads once.
func (s *Store) Watch(id string) (<-chan struct{}, func()) {
	w := &s.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.by == nil {
		w.by = map[string]map[int]chan struct{}{}
	}
	if w.by[id] == nil {
		w.by[id] = map[int]chan struct{}{}
	}
	k := w.next
	w.next++
	ch := make(chan struct{}, 1)
	w.by[id][k] = ch
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.by[id], k)
		if len(w.by[id]) == 0 {
			delete(w.by, id)
		}
	}
}

// listen keeps one connection listening on rein_records until ctx ends, reconnecting after any
// failure and waking every watcher each time it is listening again.
func (s *Store) listen(ctx context.Context) {
	defer close(s.listened)
	cfg := s.pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = "rein listen " + s.opts.Name
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			if _, err = conn.Exec(ctx, "LISTEN rein_records"); err == nil {
				s.watch.wakeAll()
				for {
					n, err := conn.WaitForNotification(ctx)
					if err != nil {
						break
					}
					id, _, _ := strings.Cut(n.Payload, " ")
					s.watch.wake(id)
				}
			}
			conn.Close(context.Background())
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond): // the database is away: ask again shortly
		}
	}
}

// Records reads a conversation's records after sequence number after, in order, from the rows.
func (s *Store) Records(ctx context.Context, id string, after int64) ([]record.Record, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, line FROM rein_records WHERE conversation = $1 AND seq > $2 ORDER BY seq`, id, after)
	if err != nil {
		return nil, fmt.Errorf("read conversation %s from the store: %w", id, err)
	}
	var out []record.Record
	var seq int64
	var line []byte
	blobs := s.blobs(id)
	want := after + 1
	_, err = pgx.ForEachRow(rows, []any{&seq, &line}, func() error {
		if seq != want {
			return fmt.Errorf("the store holds record %d of conversation %s where %d belongs", seq, id, want)
		}
		want++
		r, err := record.DecodeWith(line, seq, blobs)
		if err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read conversation %s from the store: %w", id, err)
	}
	return out, nil
}

// blobs reads a conversation's blobs from the store, for record.DecodeWith.
func (s *Store) blobs(id string) record.Blobs {
	return func(digest string) ([]byte, error) {
		var data []byte
		err := s.pool.QueryRow(context.Background(), `SELECT data FROM rein_blobs WHERE conversation = $1 AND digest = $2`, id, digest).Scan(&data)
		if err != nil {
			return nil, fmt.Errorf("blob %s of conversation %s: %w", digest, id, err)
		}
		return data, nil
	}
}
