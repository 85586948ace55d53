package host_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/store/pgstore"
	"github.com/reinhq/rein/internal/store/pgtest"
)

// The figures of several hosts over one store (README, "running several hosts"). They report
// figures and assert no timing.
//
//	go test -run '^$' -bench SharedSendAck -benchtime 2000x ./internal/host
//	go test -run '^$' -bench SharedFailover -benchtime 20x ./internal/host   (each failover is a host;
//	                                                                         keep it under 100x)
//	go test -run '^$' -bench SharedSendForwarded -benchtime 2000x ./internal/host

// BenchmarkSharedSendAck measures how long a send takes to be acknowledged (durable in the store)
// with 256 conversations spread over three hosts, each conversation's exchange streaming slowly on
// the host that owns it, from 8 clients at once sending each to the conversation's owner, or to
// any host. Each iteration is one send.
func BenchmarkSharedSendAck(b *testing.B) {
	pgtest.Need(b, pg)
	url := pg.Database(b)
	const n = 256
	opts := rigOptions{simDelay: 500 * time.Millisecond, simLog: 1, quiet: true, noCheck: true, store: url,
		caps: caps{createRate: 1e6, createBurst: 1000}}
	var hosts []*rig
	for i := range 3 {
		o := opts
		o.storeOpts = pgstore.Options{Name: fmt.Sprintf("host-%d", i), Lease: time.Hour}
		hosts = append(hosts, newRig(b, o))
	}
	ids := make([]string, n)
	owner := make([]*rig, n)
	for i := range ids {
		owner[i] = hosts[i%3]
		ids[i] = owner[i].create(fmt.Sprintf("active %d", i))
		owner[i].send(ids[i], fmt.Sprintf("talk slowly %d", i))
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		running := 0
		for _, h := range hosts {
			running += h.h.Stats().Running
		}
		if running >= n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d exchanges running after a minute", running, n)
		}
	}
	// To the owner, as with sticky sessions; and to any host, as a load balancer without them
	// spreads them: two sends in three are handed on to the owner.
	for _, to := range []struct {
		name string
		via  func(k int) *rig
	}{{"owner", func(k int) *rig { return owner[k%n] }}, {"any-host", func(k int) *rig { return hosts[(k/n)%3] }}} { // the owner one time in three
		b.Run(to.name, func(b *testing.B) {
			p50, p99 := sendAcks(b, func(ctx context.Context, k int) error {
				_, err := to.via(k).c.Send(ctx, ids[k%n], api.Message{Op: client.NewOp(), Text: fmt.Sprintf("more %d", k), Queue: true})
				return err
			})
			b.Logf("send acknowledged with %d conversations streaming over 3 hosts, sent to %s (%d sends): p50 %v, p99 %v", n, strings.ReplaceAll(to.name, "-", " "), b.N, p50, p99)
		})
	}
}

// BenchmarkSharedFailover measures failover: a host owning a conversation mid-exchange dies (its
// connections to the store cut, its lease left to lapse), and the time to the first record the
// host that takes it over writes, as a client of that host reads it. Each iteration is one
// failover, with a lease of 600 ms (renewed every 200 ms, swept for every 200 ms).
func BenchmarkSharedFailover(b *testing.B) {
	pgtest.Need(b, pg)
	url := pg.Database(b)
	const lease = 600 * time.Millisecond
	survivor := newRig(b, rigOptions{quiet: true, noCheck: true, store: url, storeOpts: pgstore.Options{Name: "survivor", Lease: lease}})
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	for k := range b.N {
		b.StopTimer()
		owner := newRig(b, rigOptions{script: steps(slowText("", 1000, 20)), quiet: true, noCheck: true, store: url,
			storeOpts: pgstore.Options{Name: fmt.Sprintf("owner-%d", k), Lease: lease}})
		id := owner.create("failover")
		w := owner.events(id, 0)
		owner.send(id, "a slow one")
		w.live("text")
		follow := survivor.events(id, 0)
		b.StartTimer()
		died := time.Now()
		owner.die()
		last := lastRow(b, url, id) // the dead owner's rows are all there is of it
		follow.until("the new owner's first record", func(e api.Event) bool { return e.Seq > last })
		lat[k] = time.Since(died)
	}
	b.StopTimer()
	p50, p99 := percentiles(lat)
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.Logf("failover, owner dead to the new owner's first record read by a client, lease %v (%d failovers): p50 %v, p99 %v", lease, b.N, p50, p99)
}

// lastRow is the sequence number of a conversation's last row.
func lastRow(b *testing.B, url, id string) int64 {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM rein_records WHERE conversation = $1`, id).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkSharedSendForwarded measures what handing a send on to the owner adds: 32 conversations
// owned by host a, each with a slow exchange streaming, sent to from 8 clients at once — directly
// to a, and through b, which hands each send on to a. Each iteration is one send.
func BenchmarkSharedSendForwarded(b *testing.B) {
	pgtest.Need(b, pg)
	url := pg.Database(b)
	const n = 32
	opts := rigOptions{simDelay: 500 * time.Millisecond, simLog: 1, quiet: true, noCheck: true, store: url,
		caps: caps{createRate: 1e6, createBurst: 1000}}
	oa, ob := opts, opts
	oa.storeOpts = pgstore.Options{Name: "host-a", Lease: time.Hour}
	ob.storeOpts = pgstore.Options{Name: "host-b", Lease: time.Hour}
	owner, other := newRig(b, oa), newRig(b, ob)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = owner.create(fmt.Sprintf("active %d", i))
		owner.send(ids[i], fmt.Sprintf("talk slowly %d", i))
	}
	for _, via := range []struct {
		name string
		r    *rig
	}{{"direct", owner}, {"forwarded", other}} {
		b.Run(via.name, func(b *testing.B) {
			p50, p99 := sendAcks(b, func(ctx context.Context, k int) error {
				_, err := via.r.c.Send(ctx, ids[k%n], api.Message{Op: client.NewOp(), Text: fmt.Sprintf("more %d", k), Queue: true})
				return err
			})
			b.Logf("send acknowledged %s (%d sends): p50 %v, p99 %v", via.name, b.N, p50, p99)
		})
	}
}
