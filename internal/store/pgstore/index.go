package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/internal/store"
)

// The conversation index in the store: the host's list of conversations (store.Row), one row per
// conversation, shared by every host. As on one machine it is a cache of the records, written by
// the conversation's owner after each change it makes, without waiting for the database's log to
// reach the disk (synchronous_commit off): a row lost in a crash of the database is rewritten at
// the conversation's next change.

const rowColumns = "id, title, closed, created, updated, working, phase, seq, path, size, op, op_title, backend"

// Put writes a conversation's row, replacing its previous one.
func (s *Store) Put(r store.Row) error {
	_, err := s.ipool.Exec(context.Background(), `INSERT INTO rein_conversations (`+rowColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (id) DO UPDATE SET title = excluded.title, closed = excluded.closed, created = excluded.created,
		updated = excluded.updated, working = excluded.working, phase = excluded.phase, seq = excluded.seq,
		path = excluded.path, size = excluded.size, op = excluded.op, op_title = excluded.op_title, backend = excluded.backend`,
		r.ID, r.Title, r.Closed, r.Created, r.Updated, r.Working, r.Phase, r.Seq, r.Path, r.Size, r.Op, r.OpTitle, r.Backend)
	if err != nil {
		return fmt.Errorf("index conversation %s: %w", r.ID, err)
	}
	return nil
}

// Remove drops conversations' rows from the index.
func (s *Store) Remove(ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := s.pool.Exec(context.Background(), `DELETE FROM rein_conversations WHERE id = ANY($1)`, ids); err != nil {
		return fmt.Errorf("drop conversations from the index: %w", err)
	}
	return nil
}

// Get returns one conversation's row.
func (s *Store) Get(id string) (store.Row, bool, error) {
	rows, err := s.query("WHERE id = $1", id)
	if err != nil || len(rows) == 0 {
		return store.Row{}, false, err
	}
	return rows[0], true, nil
}

// ByOp returns the row of the conversation operation op created (the first, if a copied record
// made two).
func (s *Store) ByOp(op string) (store.Row, bool, error) {
	rows, err := s.query("WHERE op = $1 ORDER BY id LIMIT 1", op)
	if err != nil || len(rows) == 0 {
		return store.Row{}, false, err
	}
	return rows[0], true, nil
}

// All returns every row, most recently updated first.
func (s *Store) All() ([]store.Row, error) { return s.query("ORDER BY updated DESC, id DESC") }

func (s *Store) query(where string, args ...any) ([]store.Row, error) {
	rows, err := s.pool.Query(context.Background(), "SELECT "+rowColumns+" FROM rein_conversations "+where, args...)
	if err != nil {
		return nil, fmt.Errorf("read the index: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Row, error) {
		var r store.Row
		err := row.Scan(&r.ID, &r.Title, &r.Closed, &r.Created, &r.Updated, &r.Working, &r.Phase, &r.Seq, &r.Path, &r.Size, &r.Op, &r.OpTitle, &r.Backend)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("read the index: %w", err)
	}
	return out, nil
}
