package pgstore_test

import (
	"testing"

	"github.com/reinhq/rein/internal/store/pgstore"
	"github.com/reinhq/rein/internal/store/pgtest"
)

// BenchmarkAppendSync appends one record line to one conversation and syncs it, as a session
// commits a protocol record: one fenced transaction per line. appends/s is one conversation's
// rate of durable appends.
func BenchmarkAppendSync(b *testing.B) {
	pgtest.Need(b, server)
	url := server.Database(b)
	h := &host{s: open(b, url, pgstore.Options{Name: "a"}), root: b.TempDir()}
	w := h.create(b, "bench")
	defer w.Close()
	lines := make([][]byte, b.N)
	for i := range lines {
		lines[i] = line(b, int64(i+1), "bench")
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := w.Append(lines[i]); err != nil {
			b.Fatal(err)
		}
		if err := w.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
}
