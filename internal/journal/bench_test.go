package journal

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

// BenchmarkAppendSync measures durable appends on the real filesystem: one fsync per record, as
// a session syncs each protocol record. It reports records/s and the p99 latency of one append.
func BenchmarkAppendSync(b *testing.B) {
	w, err := Create(fsys.OS{}, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	lines := make([][]byte, b.N)
	for i := range lines {
		lines[i] = encode(b, int64(i+1), 200) // a ~300-byte record, a typical protocol line
	}
	lat := make([]time.Duration, b.N)
	b.ResetTimer()
	start := time.Now()
	for i, line := range lines {
		t0 := time.Now()
		if _, err := w.AppendSync(line); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t0)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
	b.ReportMetric(float64(lat[len(lat)*99/100])/float64(time.Millisecond), "p99-ms")
}

// BenchmarkOpen measures verifying a large record on open: framing and checksums only (a no-op
// verify), and with strict decoding as the verify, the part of replay before the fold.
func BenchmarkOpen(b *testing.B) {
	name := filepath.Join(b.TempDir(), FileName)
	size := writeBig(b, name, 64<<20)
	for _, c := range []struct {
		name   string
		verify Verify
	}{
		{"frame", func(int64, []byte, record.Locus) error { return nil }},
		{"decode", decode},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				w, rep, err := Open(fsys.OS{}, name, c.verify)
				if err != nil || rep.Size != size {
					b.Fatal(rep, err)
				}
				w.Close()
			}
		})
	}
}

// writeBig writes a record of at least size bytes of varied real lines, and returns its length.
func writeBig(b *testing.B, name string, size int64) int64 {
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	var n int64
	for seq := int64(1); n < size; seq++ {
		line := encode(b, seq, int(seq%17)*60)
		bw.Write(line)
		n += int64(len(line))
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return n
}
