package fold

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"slices"
	"sort"
	"unsafe"

	"github.com/reinhq/rein/internal/record"
)

// rows is the turn table: a vec of Turn (persist.go) whose chunks are packed once no row in them
// holds messages. A session keeps a row for every turn it ever had, so over a long session the
// rows that left the context (under a residue, or withdrawn) are nearly all of them; a Turn is
// 144 bytes and its Seqs another allocation, where a packed row is about ten bytes of varints and
// its label when the chunk does not hold it already. A packed chunk is never written: reading a
// row decodes it, and a write unpacks the chunk into Turns first (a withdrawal reaching under a
// residue; rare), to be packed again when the record is applied (settle).
type rows struct {
	chunks []rowChunk
	mine   []bool // mine[i]: chunks[i].full is this table's alone and may be written in place
	n      int
	// dirty lists the chunks written or filled since the last settle, which may pack now. A copy
	// starts with none: it packs what it writes.
	dirty []int
}

// rowsPerChunk is how many rows a chunk holds: chunkLen, and fewer in tests, which then pack and
// unpack chunks in every short session they play.
var rowsPerChunk = chunkLen

// rowChunk is rowsPerChunk rows (fewer in the last chunk), as Turns or packed.
type rowChunk struct {
	full []Turn      // nil when packed
	pk   *packedRows // the rows when packed: immutable, shared by every copy
}

func (r *rows) len() int { return r.n }

func (r *rows) at(i int) Turn {
	c := &r.chunks[i/rowsPerChunk]
	if c.pk != nil {
		return c.pk.row(i % rowsPerChunk)
	}
	return c.full[i%rowsPerChunk]
}

// ptr returns row i to edit in place, unpacking its chunk, or copying it if a copy may see it.
func (r *rows) ptr(i int) *Turn {
	c := i / rowsPerChunk
	ch := &r.chunks[c]
	switch {
	case ch.pk != nil:
		ch.full, ch.pk = ch.pk.decode(make([]Turn, 0, rowsPerChunk)), nil
		r.mine[c] = true
	case !r.mine[c]:
		ch.full = append(make([]Turn, 0, rowsPerChunk), ch.full...)
		r.mine[c] = true
	}
	r.mark(c)
	return &ch.full[i%rowsPerChunk]
}

// push appends t. Appending into a shared chunk's spare room is safe, as in vec.push.
func (r *rows) push(t Turn) {
	c := r.n / rowsPerChunk
	switch {
	case c == len(r.chunks):
		r.chunks = append(r.chunks, rowChunk{full: make([]Turn, 0, rowsPerChunk)})
		r.mine = append(r.mine, true)
	case len(r.chunks[c].full) == cap(r.chunks[c].full):
		r.chunks[c].full = append(make([]Turn, 0, rowsPerChunk), r.chunks[c].full...)
		r.mine[c] = true
	}
	r.chunks[c].full = append(r.chunks[c].full, t)
	r.n++
	if r.n%rowsPerChunk == 0 {
		r.mark(c)
	}
}

func (r *rows) mark(c int) {
	if n := len(r.dirty); n == 0 || r.dirty[n-1] != c {
		r.dirty = append(r.dirty, c)
	}
}

// settle packs every dirty chunk that is whole and holds no messages.
func (r *rows) settle() {
	for _, c := range r.dirty {
		ch := &r.chunks[c]
		if ch.pk == nil && len(ch.full) == rowsPerChunk && !slices.ContainsFunc(ch.full, holdsMessages) {
			ch.pk, ch.full = pack(ch.full), nil
			r.mine[c] = false
		}
	}
	r.dirty = r.dirty[:0]
}

func holdsMessages(t Turn) bool { return t.Messages != nil }

// share returns a copy of r. Both now see every unpacked chunk as shared; the copy's are capped.
// A snapshot owns nothing, so sharing it writes nothing.
func (r *rows) share() rows {
	c := rows{chunks: make([]rowChunk, len(r.chunks)), mine: make([]bool, len(r.chunks)), n: r.n}
	for i, ch := range r.chunks {
		if ch.full != nil {
			ch.full = ch.full[:len(ch.full):len(ch.full)]
		}
		c.chunks[i] = ch
		if r.mine[i] {
			r.mine[i] = false
		}
	}
	return c
}

// search returns the first position whose id is >= id: within the last chunk whose first id is
// at most id.
func (r *rows) search(id int64) int {
	c := sort.Search(len(r.chunks), func(c int) bool { return r.chunks[c].first() > id }) - 1
	if c < 0 {
		return 0
	}
	ch := &r.chunks[c]
	if ch.pk != nil {
		return c*rowsPerChunk + ch.pk.search(id)
	}
	i, _ := slices.BinarySearchFunc(ch.full, id, func(t Turn, id int64) int { return cmp.Compare(t.ID, id) })
	return c*rowsPerChunk + i
}

func (ch *rowChunk) first() int64 {
	if ch.pk != nil {
		return ch.pk.first
	}
	return ch.full[0].ID
}

// each yields the rows from position from on, decoding a packed chunk once, not once a row.
func (r *rows) each(from int, yield func(int, Turn) bool) {
	var buf []Turn
	for c := from / rowsPerChunk; c < len(r.chunks); c++ {
		ch := &r.chunks[c]
		rs := ch.full
		if ch.pk != nil {
			buf = ch.pk.decode(buf[:0])
			rs = buf
		}
		for k := max(from-c*rowsPerChunk, 0); k < len(rs); k++ {
			if !yield(c*rowsPerChunk+k, rs[k]) {
				return
			}
		}
	}
}

// packedRows is a chunk's rows packed: first the ids, as deltas, then each row's fields.
//
//	ids:  uvarint id-first of row 0 (0), then uvarint id - previous id for each row after
//	row:  flags (withdrawn, pointer, role, kind), role or kind spelled out when not a known one,
//	      varint bytes, varint discount, varint under - previous row's under,
//	      uvarint len(seqs)+1 (0: nil), varint seq - previous seq for each,
//	      uvarint len(label), label; or, when a row before it in the chunk has the same label
//	      (a tool's name, the same first line), uvarint how many rows before
//
// A row's label is a string into data, which is never written.
type packedRows struct {
	n     int
	first int64
	rest  int // where the rows' fields begin in data
	data  []byte
	ptrs  []*record.Pointer // the rows' pointers, in order, for the rows that have one
}

const (
	packWithdrawn = 1 << iota
	packPointer
	packRoleShift = 2 // two bits: user, assistant, spelled out
	packKindShift = 4 // three bits: own, import, inherited, residue, spelled out
	packLabelRef  = 1 << 7
)

var (
	packRoles = []record.Role{record.User, record.Assistant}
	packKinds = []TurnKind{Own, Imported, Inherited, Residual}
)

func pack(ts []Turn) *packedRows {
	p := &packedRows{n: len(ts), first: ts[0].ID}
	size := 0
	for i := range ts {
		size += 24 + len(ts[i].Label) + 3*len(ts[i].Seqs)
	}
	b := make([]byte, 0, size)
	prev := p.first
	for i := range ts {
		b = binary.AppendUvarint(b, uint64(ts[i].ID-prev))
		prev = ts[i].ID
	}
	p.rest = len(b)
	var under, seq int64
	seen := map[string]int{} // a label's first row: a row with the same label names it
	for i := range ts {
		t := &ts[i]
		var flags byte
		first, again := seen[t.Label]
		if again {
			flags |= packLabelRef
		} else {
			seen[t.Label] = i
		}
		if t.Withdrawn {
			flags |= packWithdrawn
		}
		if t.Pointer != nil {
			flags |= packPointer
			p.ptrs = append(p.ptrs, t.Pointer)
		}
		role := slices.Index(packRoles, t.Role)
		if role < 0 {
			role = len(packRoles)
		}
		kind := slices.Index(packKinds, t.Kind)
		if kind < 0 {
			kind = len(packKinds)
		}
		flags |= byte(role)<<packRoleShift | byte(kind)<<packKindShift
		b = append(b, flags)
		if role == len(packRoles) {
			b = appendPackedString(b, string(t.Role))
		}
		if kind == len(packKinds) {
			b = appendPackedString(b, string(t.Kind))
		}
		b = binary.AppendVarint(b, t.Bytes)
		b = binary.AppendVarint(b, t.Discount)
		b = binary.AppendVarint(b, int64(t.Under)-under)
		under = int64(t.Under)
		if t.Seqs == nil {
			b = append(b, 0)
		} else {
			b = binary.AppendUvarint(b, uint64(len(t.Seqs))+1)
		}
		for _, s := range t.Seqs {
			b = binary.AppendVarint(b, s-seq)
			seq = s
		}
		if again {
			b = binary.AppendUvarint(b, uint64(i-first))
		} else {
			b = appendPackedString(b, t.Label)
		}
	}
	p.data = bytes.Clone(b) // exactly its size: a table keeps one of these per 64 rows
	return p
}

func appendPackedString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// packedReader decodes a packedRows in order.
type packedReader struct {
	p          *packedRows
	idAt, at   int // the next id's offset, and the next row's
	id         int64
	under, seq int64
	ptr        int
	seqs       []int64 // the array the rows' Seqs are cut from
	k          int     // rows decoded
	labels     [chunkLen]string
}

func (p *packedRows) reader(seqs []int64) packedReader {
	return packedReader{p: p, at: p.rest, id: p.first, seqs: seqs}
}

func (d *packedReader) uvarint(off *int) uint64 {
	v, n := binary.Uvarint(d.p.data[*off:])
	*off += n
	return v
}

func (d *packedReader) varint() int64 {
	v, n := binary.Varint(d.p.data[d.at:])
	d.at += n
	return v
}

func (d *packedReader) str() string {
	n := int(d.uvarint(&d.at))
	s := unsafe.String(unsafe.SliceData(d.p.data[d.at:]), n)
	d.at += n
	return s
}

// next decodes the next row.
func (d *packedReader) next() Turn {
	d.id += int64(d.uvarint(&d.idAt))
	t := Turn{ID: d.id}
	flags := d.p.data[d.at]
	d.at++
	t.Withdrawn = flags&packWithdrawn != 0
	if flags&packPointer != 0 {
		t.Pointer = d.p.ptrs[d.ptr]
		d.ptr++
	}
	if role := int(flags>>packRoleShift) & 3; role < len(packRoles) {
		t.Role = packRoles[role]
	} else {
		t.Role = record.Role(d.str())
	}
	if kind := int(flags>>packKindShift) & 7; kind < len(packKinds) {
		t.Kind = packKinds[kind]
	} else {
		t.Kind = TurnKind(d.str())
	}
	t.Bytes = d.varint()
	t.Discount = d.varint()
	d.under += d.varint()
	t.Under = int(d.under)
	if n := int(d.uvarint(&d.at)); n > 0 {
		n--
		start := len(d.seqs)
		for range n {
			d.seq += d.varint()
			d.seqs = append(d.seqs, d.seq)
		}
		t.Seqs = d.seqs[start:len(d.seqs):len(d.seqs)]
		if t.Seqs == nil {
			t.Seqs = []int64{}
		}
	}
	if flags&packLabelRef != 0 {
		t.Label = d.labels[d.k-int(d.uvarint(&d.at))]
	} else {
		t.Label = d.str()
	}
	d.labels[d.k] = t.Label
	d.k++
	return t
}

// search returns the first row whose id is >= id.
func (p *packedRows) search(id int64) int {
	d := p.reader(nil)
	for k := range p.n {
		if d.id += int64(d.uvarint(&d.idAt)); d.id >= id {
			return k
		}
	}
	return p.n
}

// row decodes row k.
func (p *packedRows) row(k int) Turn {
	d := p.reader(nil)
	for range k {
		d.next()
		d.seqs = d.seqs[:0]
	}
	return d.next()
}

// decode appends every row to into. Their Seqs share new arrays.
func (p *packedRows) decode(into []Turn) []Turn {
	d := p.reader(make([]int64, 0, 2*p.n))
	for range p.n {
		into = append(into, d.next())
	}
	return into
}
