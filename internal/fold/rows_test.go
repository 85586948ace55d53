package fold

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/internal/record"
	"pgregory.net/rapid"
)

// The turn table is a slice of Turn, however its chunks are packed: random pushes, edits in place
// (a withdrawal, a residue over a row, messages released, steering's seqs), settles and copies
// leave it reading, searching and iterating as a plain slice does — and every copy as the slice
// it was — while every whole chunk that holds no messages is packed after a settle.
func TestRowsAreASlice(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		defer func(n int) { rowsPerChunk = n }(rowsPerChunk)
		rowsPerChunk = rapid.SampledFrom([]int{1, 2, 3, 5, chunkLen}).Draw(rt, "rows per chunk")
		type copyOf struct {
			r     rows
			model []Turn
		}
		var (
			r      rows
			model  []Turn
			copies []copyOf
			id     int64
			seq    int64
		)
		roles := []record.Role{record.User, record.Assistant, "system", ""}
		kinds := []TurnKind{Own, Imported, Inherited, Residual, "odd", ""}
		newTurn := func() Turn {
			id += rapid.Int64Range(1, 1000).Draw(rt, "id step")
			t := Turn{
				ID:       id,
				Role:     rapid.SampledFrom(roles).Draw(rt, "role"),
				Kind:     rapid.SampledFrom(kinds).Draw(rt, "kind"),
				Label:    rapid.OneOf(rapid.String(), rapid.SampledFrom([]string{"bash", "", "read_file", "Running the tests now."})).Draw(rt, "label"),
				Bytes:    rapid.Int64().Draw(rt, "bytes"),
				Discount: rapid.Int64Range(-5, 1<<40).Draw(rt, "discount"),
				Under:    rapid.IntRange(-1, 1<<20).Draw(rt, "under"),
			}
			switch rapid.IntRange(0, 3).Draw(rt, "seqs") {
			case 0:
			case 1:
				t.Seqs = []int64{}
			default:
				for range rapid.IntRange(1, 3).Draw(rt, "n seqs") {
					seq += rapid.Int64Range(-3, 1<<33).Draw(rt, "seq step")
					t.Seqs = append(t.Seqs, seq)
				}
			}
			if rapid.Bool().Draw(rt, "pointer") {
				t.Pointer = &record.Pointer{File: "/p", Loci: []record.Locus{{Seq: id}}}
			}
			if rapid.Bool().Draw(rt, "messages") {
				t.Messages = []record.Message{{Role: t.Role, Parts: []record.Part{{Type: record.PartText, Text: t.Label}}}}
			}
			return t
		}
		check := func(what string, r *rows, model []Turn) {
			if r.len() != len(model) {
				rt.Fatalf("%s: %d rows, want %d", what, r.len(), len(model))
			}
			for i := range model {
				if d := cmp.Diff(model[i], r.at(i)); d != "" {
					rt.Fatalf("%s: row %d (-want +got):\n%s", what, i, d)
				}
			}
			from := 0
			if len(model) > 0 {
				from = rapid.IntRange(0, len(model)).Draw(rt, "each from")
			}
			var got []Turn
			r.each(from, func(i int, t Turn) bool {
				if i != from+len(got) {
					rt.Fatalf("%s: each yielded position %d after %d rows from %d", what, i, len(got), from)
				}
				got = append(got, t)
				return true
			})
			if len(got) == 0 && from == len(model) {
				got = model[from:]
			}
			if d := cmp.Diff(model[from:], got); d != "" {
				rt.Fatalf("%s: each from %d (-want +got):\n%s", what, from, d)
			}
			for _, probe := range []int64{0, id + 1, rapid.Int64Range(0, id+1).Draw(rt, "probe")} {
				want, _ := slices.BinarySearchFunc(model, probe, func(t Turn, id int64) int { return int(t.ID - id) })
				if got := r.search(probe); got != want {
					rt.Fatalf("%s: search(%d) = %d, want %d", what, probe, got, want)
				}
			}
		}
		for range rapid.IntRange(0, 120).Draw(rt, "ops") {
			switch op := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case op <= 3:
				t := newTurn()
				r.push(t)
				model = append(model, t)
			case op <= 6 && len(model) > 0:
				i := rapid.IntRange(0, len(model)-1).Draw(rt, "edit")
				p, m := r.ptr(i), &model[i]
				switch rapid.IntRange(0, 4).Draw(rt, "edit what") {
				case 0:
					p.Withdrawn, m.Withdrawn = true, true
					p.Messages, m.Messages = nil, nil
				case 1:
					u := rapid.IntRange(-1, 1<<20).Draw(rt, "new under")
					p.Under, m.Under = u, u
					p.Messages, m.Messages = nil, nil
				case 2:
					b := rapid.Int64().Draw(rt, "new bytes")
					p.Bytes, m.Bytes = b, b
				case 3:
					seq++
					m.Seqs = append(m.Seqs[:len(m.Seqs):len(m.Seqs)], seq)
					p.Seqs = append(p.Seqs[:len(p.Seqs):len(p.Seqs)], seq)
				case 4:
					p.Messages, m.Messages = nil, nil
				}
			case op == 7:
				r.settle()
				for c, ch := range r.chunks {
					whole := c < len(r.chunks)-1 || r.n%rowsPerChunk == 0
					bare := !slices.ContainsFunc(model[c*rowsPerChunk:min((c+1)*rowsPerChunk, len(model))], holdsMessages)
					if (ch.pk != nil) != (whole && bare) {
						rt.Fatalf("after a settle chunk %d is packed %v: whole %v, without messages %v", c, ch.pk != nil, whole, bare)
					}
				}
			case op == 8:
				copies = append(copies, copyOf{r.share(), slices.Clone(model)})
			default:
				if len(copies) > 0 { // a copy goes on: what it writes is its own
					k := rapid.IntRange(0, len(copies)-1).Draw(rt, "copy")
					c := &copies[k]
					t := newTurn()
					c.r.push(t)
					c.model = append(slices.Clone(c.model), t)
					if len(c.model) > 1 {
						c.r.ptr(0).Withdrawn = true
						c.model[0].Withdrawn = true
						c.model[0].Messages = nil
						c.r.ptr(0).Messages = nil
					}
					c.r.settle()
				}
			}
			check("the table", &r, model)
		}
		for k := range copies {
			check("a copy", &copies[k].r, copies[k].model)
		}
	})
}

// TestPackedRows plays the fold's property tests again with chunks of three rows, so that their
// short sessions pack and unpack chunks of the turn table at every eviction, rewind and fork.
func TestPackedRows(t *testing.T) {
	defer func(n int) { rowsPerChunk = n }(rowsPerChunk)
	rowsPerChunk = 3
	t.Run("LiveEqualsReplay", TestLiveEqualsReplay)
	t.Run("SnapshotsNeverChange", TestSnapshotsNeverChange)
	t.Run("IncrementalEqualsWhole", TestIncrementalEqualsWhole)
	t.Run("Inheritance", TestInheritance)
	t.Run("StateIsAValue", TestStateIsAValue)
}

// The set of call keys is a set: random adds and copies that go on adding leave each answering as
// a map would of what it was given, with keys that share a first word, and the copy of a copy.
func TestKeySetIsASet(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		type copyOf struct {
			k    keySet
			seen map[callKey]bool
		}
		sets := []copyOf{{seen: map[callKey]bool{}}}
		key := func() callKey {
			return callKey{rapid.Uint64Range(0, 3).Draw(rt, "hi"), rapid.Uint64Range(0, 40).Draw(rt, "lo")}
		}
		for range rapid.IntRange(0, 200).Draw(rt, "ops") {
			i := rapid.IntRange(0, len(sets)-1).Draw(rt, "set")
			s := &sets[i]
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0, 1:
				x := key()
				s.k.put(x)
				s.seen[x] = true
			case 2:
				c := copyOf{s.k.share(), maps.Clone(s.seen)}
				sets = append(sets, c)
			default:
				x := key()
				if got := s.k.has(x); got != s.seen[x] {
					rt.Fatalf("set %d has %v: %v, want %v", i, x, got, s.seen[x])
				}
			}
		}
		for i, s := range sets {
			for x := range s.seen {
				if !s.k.has(x) {
					rt.Fatalf("set %d lost %v", i, x)
				}
			}
			if got := s.k.contents().(map[callKey]bool); len(got) != len(s.seen) {
				rt.Fatalf("set %d holds %d keys, want %d", i, len(got), len(s.seen))
			}
		}
	})
}
