package fold

import (
	"cmp"
	"maps"
	"slices"
)

// A State is a value (DESIGN §2: readers get immutable snapshots). Its containers are persistent:
// Clone shares them instead of copying them, and a write to something a copy may see copies that
// part first. Three shapes cover every field of State:
//
//   - vec, for what only grows and is edited anywhere: the turn table (a steering line or tool
//     results on the newest turn; evictions and withdrawals on a run) and the submissions (each
//     moves through its states). Chunks of 64: a write copies one chunk, Clone copies the spine
//     (one slice header per 64 elements).
//   - flat, for the slices the context bounds or that rarely change in place (the frontier, the
//     rendered context, residues): a write below what a copy may see copies the array; appending
//     past it costs nothing.
//   - table, for every map: written entries go to a map of the table's own, and Clone freezes it
//     into the layers every copy reads, merged as they pile up so that a lookup reads O(log n)
//     maps.
//
// A scalar field is copied with the State; a slice field outside these types must be replaced
// whole, never written in place (owed, asked). TestStateIsAValue holds every field to this, and
// TestSnapshotsNeverChange holds the result.
//
// Sharing writes the shared value only when it has something of its own to give up, so cloning a
// snapshot (which owns nothing) is a pure read: many goroutines may clone one snapshot at once.

// chunkLen is how many elements a vec keeps per array: a write to a shared element copies this
// many, and Clone copies one slice header per this many.
const chunkLen = 64

// vec is a sequence that grows at its end and is edited anywhere.
type vec[T any] struct {
	chunks [][]T  // every chunk but the last holds chunkLen elements
	mine   []bool // mine[i]: chunks[i] is this vec's alone and may be written in place
	n      int
}

func (v *vec[T]) len() int { return v.n }

func (v *vec[T]) at(i int) T { return v.chunks[i/chunkLen][i%chunkLen] }

// ptr returns element i to edit in place, copying its chunk first if a copy may see it.
func (v *vec[T]) ptr(i int) *T {
	c := i / chunkLen
	if !v.mine[c] {
		v.chunks[c] = append(make([]T, 0, chunkLen), v.chunks[c]...)
		v.mine[c] = true
	}
	return &v.chunks[c][i%chunkLen]
}

func (v *vec[T]) set(i int, x T) { *v.ptr(i) = x }

// push appends x. Appending into a shared chunk's spare room is safe: every copy's header of that
// chunk is capped at the length it saw, so no copy reads or writes past it.
func (v *vec[T]) push(x T) {
	c := v.n / chunkLen
	switch {
	case c == len(v.chunks):
		v.chunks = append(v.chunks, make([]T, 0, chunkLen))
		v.mine = append(v.mine, true)
	case len(v.chunks[c]) == cap(v.chunks[c]): // a copy's capped chunk: append moves it
		v.chunks[c] = append(make([]T, 0, chunkLen), v.chunks[c]...)
		v.mine[c] = true
	}
	v.chunks[c] = append(v.chunks[c], x)
	v.n++
}

// share returns a copy of v. Both now see every chunk as shared; the copy's chunks are capped.
func (v *vec[T]) share() vec[T] {
	c := vec[T]{chunks: make([][]T, len(v.chunks)), mine: make([]bool, len(v.chunks)), n: v.n}
	for i, ch := range v.chunks {
		c.chunks[i] = ch[:len(ch):len(ch)]
		if v.mine[i] {
			v.mine[i] = false
		}
	}
	return c
}

// flat is a slice whose array copies share: positions below shared may be read by a copy.
type flat[T any] struct {
	s      []T
	shared int
}

func (f *flat[T]) len() int { return len(f.s) }

func (f *flat[T]) at(i int) T { return f.s[i] }

// view returns the elements, capped so that an append to the result cannot reach f's array.
func (f *flat[T]) view() []T { return f.s[:len(f.s):len(f.s)] }

// own makes the array f's alone, copying it if a copy may see any of it.
func (f *flat[T]) own() {
	if f.shared > 0 {
		s := make([]T, len(f.s), max(cap(f.s), 2*len(f.s), 4))
		copy(s, f.s)
		f.s, f.shared = s, 0
	}
}

// mut returns the elements to edit in place (and to cut and append to: give the result back
// with replace).
func (f *flat[T]) mut() []T {
	f.own()
	return f.s
}

// replace takes back a slice mut returned, edited.
func (f *flat[T]) replace(s []T) { f.s = s }

func (f *flat[T]) ptr(i int) *T {
	if i < f.shared {
		f.own()
	}
	return &f.s[i]
}

// put writes x at position i, or appends it when i is the length.
func (f *flat[T]) put(i int, x T) {
	if i == len(f.s) {
		f.push(x)
		return
	}
	*f.ptr(i) = x
}

// push appends x. Past shared the array's spare room is f's own; below it (after a cut) a copy
// may be reading, so the array is copied first.
func (f *flat[T]) push(x T) {
	if len(f.s) < f.shared {
		f.own()
	}
	if len(f.s) == cap(f.s) {
		f.shared = 0 // append moves to a new array of f's own
	}
	f.s = append(f.s, x)
}

// cut shortens f to n elements. It writes nothing; a later push below shared copies.
func (f *flat[T]) cut(n int) { f.s = f.s[:n] }

// share returns a copy of f. A copy made before a cut may still see past the length, so shared
// never falls.
func (f *flat[T]) share() flat[T] {
	if f.shared < len(f.s) {
		f.shared = len(f.s)
	}
	return flat[T]{s: f.view(), shared: len(f.s)}
}

// table is a map.
type table[K comparable, V any] struct {
	top    map[K]slot[V]   // this table's own entries, written in place; nil when none
	layers []map[K]slot[V] // frozen, oldest first, never written again; copies share them
}

// slot is a table's entry: a value, or (ok false) the mark that a key was deleted over the
// layers below.
type slot[V any] struct {
	v  V
	ok bool
}

func (t *table[K, V]) get(k K) (V, bool) {
	if e, ok := t.top[k]; ok {
		return e.v, e.ok
	}
	for i := len(t.layers) - 1; i >= 0; i-- {
		if e, ok := t.layers[i][k]; ok {
			return e.v, e.ok
		}
	}
	var zero V
	return zero, false
}

func (t *table[K, V]) has(k K) bool {
	_, ok := t.get(k)
	return ok
}

func (t *table[K, V]) put(k K, v V) { t.write(k, slot[V]{v, true}) }

func (t *table[K, V]) del(k K) {
	if t.has(k) {
		t.write(k, slot[V]{})
	}
}

func (t *table[K, V]) write(k K, e slot[V]) {
	if t.top == nil {
		t.top = map[K]slot[V]{}
	}
	t.top[k] = e
}

// share freezes t's own entries into a layer (pile) and returns a copy reading the same layers.
func (t *table[K, V]) share() table[K, V] {
	if len(t.top) > 0 {
		size := func(m map[K]slot[V]) int { return len(m) }
		t.layers = pile(t.layers, t.top, size, func(a, b map[K]slot[V], bottom bool) map[K]slot[V] {
			m := make(map[K]slot[V], len(a)+len(b))
			maps.Copy(m, a)
			maps.Copy(m, b)
			if bottom { // nothing below for a deletion to hide
				maps.DeleteFunc(m, func(_ K, e slot[V]) bool { return !e.ok })
			}
			return m
		})
		t.top = nil
	}
	return table[K, V]{layers: t.layers[:len(t.layers):len(t.layers)]}
}

// pile puts top on layers (a copy's: the array below is shared) and, while the newest layer is at
// least half the size of the one below, merges the two into a new one (bottom: nothing lies below
// it), so sizes fall geometrically: a lookup reads O(log n) layers, and each entry is copied
// O(log n) times over the container's life.
func pile[L any](layers []L, top L, size func(L) int, merge func(a, b L, bottom bool) L) []L {
	layers = append(layers[:len(layers):len(layers)], top)
	for n := len(layers); n >= 2 && 2*size(layers[n-1]) >= size(layers[n-2]); n = len(layers) {
		layers = append(layers[:n-2:n-2], merge(layers[n-2], layers[n-1], n == 2))
	}
	return layers
}

// keySet is a set of call keys kept as a table is (pile), its frozen layers sorted slices rather than
// maps: 16 bytes a key where a map spends about 40. Keys are only added.
type keySet struct {
	top    map[callKey]struct{} // this set's own keys, written in place; nil when none
	layers [][]callKey          // frozen, sorted, oldest first, never written again; copies share them
}

func (k *keySet) has(x callKey) bool {
	if _, ok := k.top[x]; ok {
		return true
	}
	for _, l := range k.layers {
		if _, ok := slices.BinarySearchFunc(l, x, cmpKey); ok {
			return true
		}
	}
	return false
}

func (k *keySet) put(x callKey) {
	if k.top == nil {
		k.top = map[callKey]struct{}{}
	}
	k.top[x] = struct{}{}
}

// share freezes k's own keys into a sorted layer and returns a copy reading the same layers.
func (k *keySet) share() keySet {
	if len(k.top) > 0 {
		size := func(l []callKey) int { return len(l) }
		k.layers = pile(k.layers, slices.SortedFunc(maps.Keys(k.top), cmpKey), size, func(a, b []callKey, _ bool) []callKey {
			m := slices.Concat(a, b)
			slices.SortFunc(m, cmpKey)
			return slices.Clip(slices.Compact(m))
		})
		k.top = nil
	}
	return keySet{layers: k.layers[:len(k.layers):len(k.layers)]}
}

func cmpKey(a, b callKey) int {
	if c := cmp.Compare(a[0], b[0]); c != 0 {
		return c
	}
	return cmp.Compare(a[1], b[1])
}

// all returns every entry in one new map.
func (t *table[K, V]) all() map[K]V {
	m := map[K]V{}
	for _, l := range append(t.layers[:len(t.layers):len(t.layers)], t.top) {
		for k, e := range l {
			if e.ok {
				m[k] = e.v
			} else {
				delete(m, k)
			}
		}
	}
	return m
}

// contents and isShared are for tests: what a container holds, in plain Go, and whether its
// owner has marked all of it shared (as Clone must leave every container of the state it copies).

func (v vec[T]) contents() any {
	out := make([]T, 0, v.n)
	for _, c := range v.chunks {
		out = append(out, c...)
	}
	return out
}

func (v vec[T]) isShared() bool { return !slices.Contains(v.mine, true) }

func (f flat[T]) contents() any { return f.view() }

func (f flat[T]) isShared() bool { return f.shared >= len(f.s) }

func (t table[K, V]) contents() any { return t.all() }

func (t table[K, V]) isShared() bool { return len(t.top) == 0 }

func (r rows) contents() any {
	out := make([]Turn, 0, r.n)
	r.each(0, func(_ int, t Turn) bool {
		out = append(out, t)
		return true
	})
	return out
}

func (r rows) isShared() bool { return !slices.Contains(r.mine, true) }

func (k keySet) contents() any {
	out := map[callKey]bool{}
	for x := range k.top {
		out[x] = true
	}
	for _, l := range k.layers {
		for _, x := range l {
			out[x] = true
		}
	}
	return out
}

func (k keySet) isShared() bool { return len(k.top) == 0 }
