package host

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"

	"github.com/reinhq/rein/internal/store"
)

// The conversation index is a cache of the records, kept in an embedded SQLite database beside
// them (DESIGN §12.1): one row per conversation, written through the conversation's lock after
// every state change the host makes, so listing a thousand conversations reads a thousand rows
// instead of replaying a thousand records, and an idle conversation needs nothing in memory but
// its id.
//
// The records stay the truth. Each row carries the size of the record file it was computed from;
// at Open a row whose size differs from the file's (a crash between the record and the row, a
// record appended by another rein while the host was down), a row that says working, and a record
// with no row are replayed and rewritten, and rows with no record are dropped. A database that is
// missing, unreadable, corrupt or of another schema version is deleted and rebuilt from the
// records. The database is written without fsync (WAL, synchronous=NORMAL): losing its tail costs
// a replay at the next Open, never a wrong answer.

// indexVersion is the schema version, kept in PRAGMA user_version; a database of another version
// is rebuilt.
const indexVersion = 2

// IndexFile is the name of the index database in a workspace's directory of conversations.
const IndexFile = "index.db"

const indexSchema = `
CREATE TABLE conversations (
	id       TEXT PRIMARY KEY,
	title    TEXT NOT NULL,
	status   TEXT NOT NULL,    -- open or closed
	created  INTEGER NOT NULL, -- unix ms
	updated  INTEGER NOT NULL, -- unix ms of the last record
	working  INTEGER NOT NULL, -- the one working rule, as of the row
	phase    TEXT NOT NULL,
	seq      INTEGER NOT NULL, -- the record number the row is as of
	path     TEXT NOT NULL,    -- the record file
	size     INTEGER NOT NULL, -- its size in bytes when the row was written
	op       TEXT NOT NULL,    -- the operation that created the conversation
	op_title TEXT NOT NULL,    -- the title that operation gave
	backend  TEXT NOT NULL     -- the agent program it runs in; '' for rein's own loop
);
CREATE INDEX conversations_updated ON conversations (updated DESC, id DESC);
CREATE INDEX conversations_op ON conversations (op);
PRAGMA user_version = 2;
`

// Row is one conversation as the index holds it.
type Row = store.Row

// indexer is the conversation index: the SQLite database beside the records (index), or, when
// several hosts share the conversations, the store's table (Config.Store).
type indexer interface {
	Put(r Row) error
	Get(id string) (Row, bool, error)
	All() ([]Row, error)
	Remove(ids []string) error
}

// index is the open database.
type index struct {
	db   *sql.DB
	path string
}

// openIndex opens the index at path, creating it, or recreating it when it is unreadable,
// corrupt or of another schema version. fresh reports that it starts empty.
func openIndex(path string) (ix *index, fresh bool, err error) {
	ix, fresh, err = tryIndex(path)
	if err == nil {
		return ix, fresh, nil
	}
	// The records are the truth: a database that cannot be used is thrown away and rebuilt.
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			return nil, false, fmt.Errorf("remove the damaged index %s: %w (it was damaged: %v)", p, rerr, err)
		}
	}
	ix, _, err = tryIndex(path)
	if err != nil {
		return nil, false, fmt.Errorf("create the index %s: %w", path, err)
	}
	return ix, true, nil
}

func tryIndex(path string) (*index, bool, error) {
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(5000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, false, err
	}
	// One connection: writes are serialised here rather than retried on SQLITE_BUSY, and each row
	// is small.
	db.SetMaxOpenConns(1)
	ix := &index{db: db, path: path}
	fresh, err := ix.prepare()
	if err != nil {
		db.Close()
		return nil, false, err
	}
	return ix, fresh, nil
}

// prepare checks the database and creates the schema in an empty one.
func (ix *index) prepare() (fresh bool, err error) {
	var check string
	if err := ix.db.QueryRow("PRAGMA quick_check").Scan(&check); err != nil {
		return false, err
	}
	if check != "ok" {
		return false, fmt.Errorf("the index is corrupt: %s", check)
	}
	var version int
	if err := ix.db.QueryRow("PRAGMA user_version").Scan(&version); err != nil {
		return false, err
	}
	switch version {
	case indexVersion:
		return false, nil
	case 0:
		var n int
		if err := ix.db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
			return false, err
		}
		if n != 0 {
			return false, errors.New("the index holds tables rein did not make")
		}
		if _, err := ix.db.Exec(indexSchema); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, fmt.Errorf("the index has schema version %d; this rein uses %d", version, indexVersion)
}

func (ix *index) close() error { return ix.db.Close() }

const rowColumns = "id, title, status, created, updated, working, phase, seq, path, size, op, op_title, backend"

// Put writes a row, replacing the conversation's previous one.
func (ix *index) Put(r Row) error {
	_, err := ix.db.Exec(`INSERT INTO conversations (`+rowColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET title = excluded.title, status = excluded.status, created = excluded.created,
		updated = excluded.updated, working = excluded.working, phase = excluded.phase, seq = excluded.seq,
		path = excluded.path, size = excluded.size, op = excluded.op, op_title = excluded.op_title, backend = excluded.backend`,
		r.ID, r.Title, status(r.Closed), r.Created, r.Updated, r.Working, r.Phase, r.Seq, r.Path, r.Size, r.Op, r.OpTitle, r.Backend)
	if err != nil {
		return fmt.Errorf("index conversation %s: %w", r.ID, err)
	}
	return nil
}

// replace makes the index hold exactly rows, in one transaction.
func (ix *index) replace(rows []Row) error {
	tx, err := ix.db.BeginTx(context.Background(), nil)
	if err != nil {
		return fmt.Errorf("rebuild the index: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec("DELETE FROM conversations"); err != nil {
		return fmt.Errorf("rebuild the index: %w", err)
	}
	for _, r := range rows {
		if _, err := tx.Exec(`INSERT INTO conversations (`+rowColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.Title, status(r.Closed), r.Created, r.Updated, r.Working, r.Phase, r.Seq, r.Path, r.Size, r.Op, r.OpTitle, r.Backend); err != nil {
			return fmt.Errorf("rebuild the index: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("rebuild the index: %w", err)
	}
	return nil
}

// Remove drops the rows of conversations that are no longer on disk.
func (ix *index) Remove(ids []string) error {
	for _, id := range ids {
		if _, err := ix.db.Exec("DELETE FROM conversations WHERE id = ?", id); err != nil {
			return fmt.Errorf("drop conversation %s from the index: %w", id, err)
		}
	}
	return nil
}

// Get returns one conversation's row.
func (ix *index) Get(id string) (Row, bool, error) {
	rows, err := ix.query("WHERE id = ?", id)
	if err != nil || len(rows) == 0 {
		return Row{}, false, err
	}
	return rows[0], true, nil
}

// All returns every row, most recently updated first.
func (ix *index) All() ([]Row, error) { return ix.query("ORDER BY updated DESC, id DESC") }

func (ix *index) query(where string, args ...any) ([]Row, error) {
	rs, err := ix.db.Query("SELECT "+rowColumns+" FROM conversations "+where, args...)
	if err != nil {
		return nil, fmt.Errorf("read the index: %w", err)
	}
	defer rs.Close()
	var out []Row
	for rs.Next() {
		var r Row
		var st string
		if err := rs.Scan(&r.ID, &r.Title, &st, &r.Created, &r.Updated, &r.Working, &r.Phase, &r.Seq, &r.Path, &r.Size, &r.Op, &r.OpTitle, &r.Backend); err != nil {
			return nil, fmt.Errorf("read the index: %w", err)
		}
		r.Closed = st == "closed"
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("read the index: %w", err)
	}
	return out, nil
}

func status(closed bool) string {
	if closed {
		return "closed"
	}
	return "open"
}
