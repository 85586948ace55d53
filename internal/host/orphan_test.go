package host_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/store/pgstore"
	"github.com/reinhq/rein/internal/store/pgtest"
)

// TestSharedOrphanedCreateIsMadeAnew: a host claimed a create's operation and died before writing
// the conversation's first record. A retry of that create on another host is answered — at first
// with the claimed conversation, which has nothing to show yet — and once the claim is older than
// two leases, with no record and no live lease behind it, the retry creates the conversation
// anew, on the host it reached, and later retries answer that one.
func TestSharedOrphanedCreateIsMadeAnew(t *testing.T) {
	pgtest.Need(t, pg)
	url := pg.Database(t)
	const lease = time.Hour
	b := sharedRig(t, url, "host-b", rigOptions{quiet: true, storeOpts: pgstore.Options{Lease: lease}})

	// The dead host's claim: made, and nothing after it.
	dead, err := pgstore.Open(context.Background(), url, pgstore.Options{Name: "host-dead", Lease: lease, NoRenew: true})
	if err != nil {
		t.Fatal(err)
	}
	op, orphan := client.NewOp(), session.NewID(time.Now())
	if err := dead.ClaimOp(context.Background(), op, orphan, "orphan"); err != nil {
		t.Fatal(err)
	}
	dead.Close()

	// A retry while the claim is young is told to retry: its creator may be slow.
	if _, _, err := b.c.Create(ctxT(t), op, "orphan"); api.CodeOf(err) != api.NotOwner || !strings.Contains(err.Error(), orphan) {
		t.Fatalf("a retry of a young claim: %v; want not_owner naming %s, being created elsewhere", err, orphan)
	}

	// Two leases later, by the database's clock.
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `UPDATE rein_ops SET claimed = claimed - interval '3 hours' WHERE op = $1`, op); err != nil {
		t.Fatal(err)
	}
	v, replayed, err := b.c.Create(ctxT(t), op, "orphan")
	if err != nil || replayed || v.ID == orphan || v.ID == "" {
		t.Fatalf("a retry of an orphaned claim: %+v replayed %v, %v; want a new conversation made here", v, replayed, err)
	}
	made := v.ID
	again, replayed, err := b.c.Create(ctxT(t), op, "orphan")
	if err != nil || !replayed || again.ID != made {
		t.Fatalf("a retry after the create: %+v replayed %v, %v; want %s", again, replayed, err, made)
	}
	b.send(made, "hello")
	if c, err := b.h.Get(made); err == nil {
		c.Wait(ctxT(t))
	}
	checkRows(t, url, made, true)
}
