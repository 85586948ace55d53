package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/internal/store"
	"github.com/reinhq/rein/internal/store/pgstore"
	"github.com/reinhq/rein/internal/store/pgtest"
)

// age moves an operation's claim back by d, by the database's clock: what d passing does.
func age(t testing.TB, url, op string, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE rein_ops SET claimed = claimed - make_interval(secs => $2) WHERE op = $1`, op, d.Seconds()); err != nil {
		t.Fatal(err)
	}
}

// TestAnOrphanedClaimIsWithdrawn: a host that claimed an operation and died before writing the
// conversation's first record must not leave every retry of that operation waiting for a
// conversation that never comes. A claim older than two leases with no record and no live lease
// is withdrawn (with its lapsed lease) and the retry creates anew; a claim whose conversation has
// a record, or whose creator still holds a live lease, answers as before, however old.
func TestAnOrphanedClaimIsWithdrawn(t *testing.T) {
	pgtest.Need(t, server)
	url := server.Database(t)
	ctx := context.Background()
	const lease = time.Minute
	a := &host{s: open(t, url, pgstore.Options{Name: "a", Lease: lease, NoRenew: true}), root: t.TempDir()}
	b := open(t, url, pgstore.Options{Name: "b", Lease: lease})

	// Claimed, then the claimant died: no lease, no record.
	if err := a.s.ClaimOp(ctx, "op-dead", "dead1", "t"); err != nil {
		t.Fatal(err)
	}
	if r, ok, err := b.ByOp("op-dead"); err != nil || !ok || r.ID != "dead1" {
		t.Fatalf("a fresh claim: %+v %v %v, want dead1", r, ok, err)
	}
	age(t, url, "op-dead", lease) // one lease is not enough: its creator may be slow
	if r, ok, err := b.ByOp("op-dead"); err != nil || !ok || r.ID != "dead1" {
		t.Fatalf("a claim one lease old: %+v %v %v, want dead1", r, ok, err)
	}
	age(t, url, "op-dead", 2*lease)
	if r, ok, err := b.ByOp("op-dead"); err != nil || ok {
		t.Fatalf("an orphaned claim: %+v %v %v, want none", r, ok, err)
	}
	if err := b.ClaimOp(ctx, "op-dead", "new1", "t"); err != nil {
		t.Fatalf("the retry's claim: %v", err)
	}

	// Claimed and written: kept however old, and the claim answers.
	if err := a.s.ClaimOp(ctx, "op-live", "live1", "t"); err != nil {
		t.Fatal(err)
	}
	w := a.create(t, "live1")
	if _, err := w.Append(line(t, 1, "a")); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	lapse(t, url, "live1")
	age(t, url, "op-live", 10*lease)
	if r, ok, err := b.ByOp("op-live"); err != nil || !ok || r.ID != "live1" {
		t.Fatalf("an old claim with a record: %+v %v %v, want live1", r, ok, err)
	}
	if err := b.ClaimOp(ctx, "op-live", "other", "t"); !errors.As(err, new(*store.OpTakenError)) {
		t.Fatalf("claiming a written conversation's operation again: %v", err)
	}

	// Claimed, lease taken, nothing written yet: the creator is alive while its lease is.
	if err := a.s.ClaimOp(ctx, "op-slow", "slow1", "t"); err != nil {
		t.Fatal(err)
	}
	a.create(t, "slow1")
	age(t, url, "op-slow", 10*lease)
	if r, ok, err := b.ByOp("op-slow"); err != nil || !ok || r.ID != "slow1" {
		t.Fatalf("an old claim whose creator holds a live lease: %+v %v %v, want slow1", r, ok, err)
	}
	lapse(t, url, "slow1")
	if r, ok, err := b.ByOp("op-slow"); err != nil || ok {
		t.Fatalf("an old claim whose creator's lease lapsed with nothing written: %+v %v %v, want none", r, ok, err)
	}
	if _, err := b.Owner(ctx, "slow1"); !errors.Is(err, store.ErrNoConversation) {
		t.Fatalf("the withdrawn claim's lease: %v, want it gone", err)
	}
}
