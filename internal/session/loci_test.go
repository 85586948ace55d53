package session

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/reinhq/rein/internal/record"
)

// TestLociAreTheLoci: the compact loci give back every locus added, by seq and after any seq,
// lengths of any size and lines between records included, across chunks and marks; and a view
// taken at any moment keeps answering as it did then, whatever is added after it.
func TestLociAreTheLoci(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		records := rapid.SampledFrom([]int{0, 1, 7, lociChunk - 1, lociChunk, lociChunk + 1, 2*lociChunk + 17}).Draw(t, "records")
		rng := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0))
		viewAt := map[int]bool{}
		for range rapid.IntRange(0, 4).Draw(t, "views") {
			viewAt[rapid.IntRange(0, records).Draw(t, "view at")] = true
		}
		var l loci
		var want []record.Locus
		type frozen struct {
			v    loci
			want []record.Locus
		}
		var views []frozen
		lens := []int64{1, 200, 70_000, math.MaxUint32, math.MaxUint32 + 5}
		off := int64(0)
		for i := 0; i <= records; i++ {
			if viewAt[i] {
				views = append(views, frozen{l.view(), append([]record.Locus(nil), want...)})
			}
			if i == records {
				break
			}
			n := lens[rng.IntN(len(lens))]
			loc := record.Locus{Seq: int64(len(want) + 1), Off: off, Len: n, Sum: rng.Uint32()}
			l.add(loc)
			want = append(want, loc)
			off += n
			if rng.IntN(8) == 0 { // a line the loci do not hold, between two records
				off += rng.Int64N(1 << 40)
			}
		}
		check := func(what string, l *loci, want []record.Locus) {
			if l.len() != len(want) {
				t.Fatalf("%s: %d loci, want %d", what, l.len(), len(want))
			}
			for i, w := range want {
				if got := l.at(int64(i + 1)); got != w {
					t.Fatalf("%s: seq %d: %+v, want %+v", what, i+1, got, w)
				}
			}
			after := rapid.IntRange(0, len(want)).Draw(t, "after")
			if diff := cmp.Diff(want[after:], l.after(int64(after))); diff != "" && len(want) > after {
				t.Fatalf("%s: after %d (-want +got):\n%s", what, after, diff)
			}
		}
		check("the loci", &l, want)
		for i := range views {
			check("a view", &views[i].v, views[i].want)
		}
	})
}
