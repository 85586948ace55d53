package pgstore

import (
	"context"
	"errors"
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

// Remove drops conversations' rows from the index, and the claims of the operations that created
// them.
func (s *Store) Remove(ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.pool.Exec(context.Background(), `WITH ops AS (DELETE FROM rein_ops WHERE conversation = ANY($1))
		DELETE FROM rein_conversations WHERE id = ANY($1)`, ids)
	if err != nil {
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

// ByOp returns the row of the conversation operation op created: the one its claim names
// (ClaimOp) — a row with only the id, the operation and its title while its creator has not
// indexed it yet — or, for a conversation made before operations were claimed, the first the
// index holds under op.
//
// A claim its creator never followed with a record — the host died between claiming and writing
// the first line — would answer every retry of the operation with a conversation that never
// comes. So a claim older than two leases (by the database's clock) whose conversation has no
// record and no live lease is withdrawn here, with that lease, and the retry creates anew.
func (s *Store) ByOp(op string) (store.Row, bool, error) {
	var id, title string
	err := s.pool.QueryRow(context.Background(), `WITH stale AS (
			DELETE FROM rein_ops o WHERE o.op = $1 AND o.claimed < now() - $2::interval
				AND NOT EXISTS (SELECT 1 FROM rein_records r WHERE r.conversation = o.conversation)
				AND NOT EXISTS (SELECT 1 FROM rein_leases l WHERE l.conversation = o.conversation AND l.expires > now())
			RETURNING o.conversation),
		gone AS (DELETE FROM rein_leases l USING stale WHERE l.conversation = stale.conversation)
		SELECT conversation, title FROM rein_ops WHERE op = $1 AND NOT EXISTS (SELECT 1 FROM stale)`,
		op, interval(2*s.opts.Lease)).Scan(&id, &title)
	switch {
	case err == nil:
		r, ok, err := s.Get(id)
		if err != nil || ok {
			return r, ok, err
		}
		return store.Row{ID: id, Op: op, OpTitle: title}, true, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return store.Row{}, false, fmt.Errorf("read the index: %w", err)
	}
	rows, err := s.query("WHERE op = $1 ORDER BY id LIMIT 1", op)
	if err != nil || len(rows) == 0 {
		return store.Row{}, false, err
	}
	return rows[0], true, nil
}

// ClaimOp claims operation op for the conversation id, about to be created with title, before
// anything of it is written: the claim is the operation's primary key, so of two creates under one
// operation — on one host or two, at the same instant — one claims it and the other is refused
// with a *store.OpTakenError naming the first's conversation. Claiming again for the same
// conversation succeeds.
func (s *Store) ClaimOp(ctx context.Context, op, id, title string) error {
	var got, gotTitle string
	err := s.pool.QueryRow(ctx, `INSERT INTO rein_ops (op, conversation, title) VALUES ($1, $2, $3)
		ON CONFLICT (op) DO UPDATE SET op = excluded.op RETURNING conversation, title`, op, id, title).Scan(&got, &gotTitle)
	if err != nil {
		return fmt.Errorf("claim operation %s: %w", op, err)
	}
	if got != id {
		return &store.OpTakenError{Op: op, Conversation: got, Title: gotTitle}
	}
	return nil
}

// DropOp withdraws operation op's claim for conversation id, whose create failed: the operation
// may be tried again.
func (s *Store) DropOp(ctx context.Context, op, id string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM rein_ops WHERE op = $1 AND conversation = $2`, op, id); err != nil {
		return fmt.Errorf("withdraw operation %s: %w", op, err)
	}
	return nil
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
