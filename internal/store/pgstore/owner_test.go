package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/reinhq/rein/internal/store"
	"github.com/reinhq/rein/internal/store/pgstore"
	"github.com/reinhq/rein/internal/store/pgtest"
)

// TestOwnerNamesTheHostAndItsURL: a lease names its owner and the URL it advertised; a lapsed or
// released lease is not live; an owner that advertises late publishes its URL at its next renewal.
func TestOwnerNamesTheHostAndItsURL(t *testing.T) {
	pgtest.Need(t, server)
	url := server.Database(t)
	ctx := context.Background()
	a := &host{s: open(t, url, pgstore.Options{Name: "a", Lease: 900 * time.Millisecond}), root: t.TempDir()}
	b := open(t, url, pgstore.Options{Name: "b", Lease: time.Hour})
	if _, err := b.Owner(ctx, "none"); !errors.Is(err, store.ErrNoConversation) {
		t.Fatalf("the owner of no conversation: %v", err)
	}
	w := a.create(t, "c1")
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	o, err := b.Owner(ctx, "c1")
	if err != nil || o.Name != "a" || o.URL != "" || !o.Live {
		t.Fatalf("owner %+v %v, want a, live, no URL", o, err)
	}
	// a advertises now: its next renewal, within a third of its lease, publishes the URL.
	a.s.SetAdvertise("http://a.internal:8080")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if o, err = b.Owner(ctx, "c1"); err == nil && o.URL == "http://a.internal:8080" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("owner %+v %v: the URL never reached the lease", o, err)
		}
	}
	// b is refused with the URL; once the lease lapses it is no longer live.
	var owned *store.OwnedError
	if _, err := b.Acquire(ctx, "c1"); !errors.As(err, &owned) || owned.URL != "http://a.internal:8080" {
		t.Fatalf("b's acquire: %v, want owned by a at its URL", err)
	}
	w.Abandon()
	lapse(t, url, "c1")
	if o, err := b.Owner(ctx, "c1"); err != nil || o.Live || o.Name != "a" {
		t.Fatalf("owner after the lapse %+v %v, want a, not live", o, err)
	}
	// b takes it, with its own URL; released, it is no one's.
	b.SetAdvertise("http://b.internal:8080")
	epoch, err := b.Acquire(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if o, err := a.s.Owner(ctx, "c1"); err != nil || o.Name != "b" || o.URL != "http://b.internal:8080" || !o.Live {
		t.Fatalf("owner after b's takeover %+v %v", o, err)
	}
	if err := b.Release(ctx, "c1", epoch); err != nil {
		t.Fatal(err)
	}
	if o, err := a.s.Owner(ctx, "c1"); err != nil || o.Live || o.Name != "" {
		t.Fatalf("owner after the release %+v %v, want no one", o, err)
	}
}

// TestClaimOpOnce: of any number of claims of one operation, at once, from several stores, one
// conversation's wins and every other is refused naming it (rapid draws the claims; the seed is
// printed on failure); the winner may claim again, and a claim withdrawn may be made anew.
func TestClaimOpOnce(t *testing.T) {
	pgtest.Need(t, server)
	url := server.Database(t)
	stores := []*pgstore.Store{open(t, url, pgstore.Options{Name: "a"}), open(t, url, pgstore.Options{Name: "b"}), open(t, url, pgstore.Options{Name: "c"})}
	var checks atomic.Int64
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		op := fmt.Sprintf("op-%d", checks.Add(1)) // a new operation for every check
		n := rapid.IntRange(1, 8).Draw(rt, "claims")
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			s := stores[rapid.IntRange(0, len(stores)-1).Draw(rt, fmt.Sprintf("store%d", i))]
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = s.ClaimOp(ctx, op, fmt.Sprintf("%s-conv-%d", op, i), fmt.Sprintf("title %d", i))
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			if err == nil {
				if winner >= 0 {
					rt.Fatalf("claims %d and %d both won", winner, i)
				}
				winner = i
			}
		}
		if winner < 0 {
			rt.Fatalf("no claim won: %v", errs)
		}
		want := fmt.Sprintf("%s-conv-%d", op, winner)
		for i, err := range errs {
			var taken *store.OpTakenError
			if i != winner && (!errors.As(err, &taken) || taken.Conversation != want || taken.Title != fmt.Sprintf("title %d", winner)) {
				rt.Fatalf("claim %d: %v, want refused naming %s", i, err, want)
			}
		}
		if err := stores[0].ClaimOp(ctx, op, want, "again"); err != nil {
			rt.Fatalf("the winner's claim again: %v", err)
		}
		r, ok, err := stores[1].ByOp(op)
		if err != nil || !ok || r.ID != want {
			rt.Fatalf("ByOp: %+v %v %v, want %s", r, ok, err, want)
		}
		if err := stores[2].DropOp(ctx, op, want); err != nil {
			rt.Fatal(err)
		}
		if err := stores[1].ClaimOp(ctx, op, op+"-anew", ""); err != nil {
			rt.Fatalf("a claim after the withdrawal: %v", err)
		}
	})
}
