package session

import (
	"encoding/binary"
	"slices"

	"github.com/reinhq/rein/internal/record"
)

// loci is where each of a session's records sits in its file, by seq (a record's seq is its
// place plus one). A record's line follows the one before it, so a locus is kept as the gap
// between them and the line's length, two varints (two to four bytes for lines of a few
// kilobytes), beside its 4-byte checksum: about 7 bytes a record, where a record.Locus is 32. A
// mark every lociMarkEvery records says where its record's entry begins and the record's offset,
// so finding a record decodes at most that many entries. The loci are kept in chunks that a
// published view shares, taking the last one as far as it goes (appends go past what any view
// holds, as in the fold's persistent vectors). The zero value is empty.
type loci struct {
	chunks []lociRun // every chunk but the last holds lociChunk records
	n      int
	end    int64 // where the last record's line ends: the next one's gap is from here
}

// lociRun is the loci of lociChunk records (fewer in the last chunk).
type lociRun struct {
	entries []byte     // per record: varint gap from the line before, varint length
	sums    []uint32   // per record: its line's checksum
	marks   []lociMark // per lociMarkEvery records, from the first
}

// lociMark is where the entry of a record that starts a run of lociMarkEvery begins in entries,
// and the record's offset in the file.
type lociMark struct {
	at  int
	off int64
}

const (
	lociChunk     = 4096
	lociMarkEvery = 32
)

func (l *loci) len() int { return l.n }

// add appends the locus of the next record; its seq is l.len()+1.
func (l *loci) add(loc record.Locus) {
	c := l.n / lociChunk
	if c == len(l.chunks) {
		l.chunks = append(l.chunks, lociRun{sums: make([]uint32, 0, lociChunk), marks: make([]lociMark, 0, lociChunk/lociMarkEvery)})
	}
	ch := &l.chunks[c]
	if l.n%lociMarkEvery == 0 {
		ch.marks = append(ch.marks, lociMark{at: len(ch.entries), off: loc.Off})
	}
	ch.entries = binary.AppendVarint(ch.entries, loc.Off-l.end)
	ch.entries = binary.AppendVarint(ch.entries, loc.Len)
	ch.sums = append(ch.sums, loc.Sum)
	l.end = loc.Off + loc.Len
	l.n++
	if l.n%lociChunk == 0 { // a full chunk keeps no room to grow
		ch.entries = slices.Clone(ch.entries)
	}
}

// at returns the locus of record seq, which is in l.
func (l *loci) at(seq int64) record.Locus {
	i := int(seq - 1)
	var loc record.Locus
	l.chunks[i/lociChunk].walk(i/lociChunk*lociChunk, i%lociChunk, func(x record.Locus) bool {
		loc = x
		return false
	})
	return loc
}

// after returns the loci of the records after seq after, decoding each chunk once.
func (l *loci) after(after int64) []record.Locus {
	out := make([]record.Locus, 0, max(l.n-int(after), 0))
	for i := int(after); i < l.n; i = (i/lociChunk + 1) * lociChunk {
		l.chunks[i/lociChunk].walk(i/lociChunk*lociChunk, i%lociChunk, func(x record.Locus) bool {
			out = append(out, x)
			return true
		})
	}
	return out
}

// walk yields the loci of the chunk's records from its k-th on, in order, until yield says stop;
// base is how many records come before the chunk. It decodes from the mark at or before k.
func (ch *lociRun) walk(base, k int, yield func(record.Locus) bool) {
	first := k - k%lociMarkEvery
	m := ch.marks[first/lociMarkEvery]
	at, off := m.at, m.off
	var n int64
	for j := first; j < len(ch.sums); j++ {
		gap, w := binary.Varint(ch.entries[at:])
		at += w
		if j > first {
			off += n + gap
		}
		n, w = binary.Varint(ch.entries[at:])
		at += w
		if j >= k && !yield(record.Locus{Seq: int64(base + j + 1), Off: off, Len: n, Sum: ch.sums[j]}) {
			return
		}
	}
}

// view returns l as it is now, for readers: later adds to l do not change it.
func (l *loci) view() loci {
	v := loci{chunks: make([]lociRun, len(l.chunks)), n: l.n, end: l.end}
	for i, c := range l.chunks {
		v.chunks[i] = lociRun{
			entries: c.entries[:len(c.entries):len(c.entries)],
			sums:    c.sums[:len(c.sums):len(c.sums)],
			marks:   c.marks[:len(c.marks):len(c.marks)],
		}
	}
	return v
}
