package session

import (
	"math"

	"github.com/reinhq/rein/internal/record"
)

// loci is where each of a session's records sits in its file, by seq (a record's seq is its
// place plus one), kept in 16 bytes a record rather than a record.Locus's 32, and in chunks
// rather than one slice: a session of a million records keeps 16 MB of them, not 32 MB doubled
// while it grows, and a published view shares every full chunk and takes the last one as far as
// it goes (appends go past what any view holds, as in the fold's persistent vectors). The zero
// value is empty.
type loci struct {
	chunks [][]locus // every chunk but the last holds lociChunk
	n      int
	long   map[int64]int64 // the lengths of the lines longer than 32 bits say, by seq (none in practice)
}

// locus is a record.Locus without its seq, its length in 32 bits (a longer line's is in long).
type locus struct {
	off int64
	len uint32
	sum uint32
}

const lociChunk = 4096

func (l *loci) len() int { return l.n }

// add appends the locus of the next record; its seq is l.len()+1.
func (l *loci) add(loc record.Locus) {
	c := l.n / lociChunk
	if c == len(l.chunks) {
		l.chunks = append(l.chunks, make([]locus, 0, lociChunk))
	}
	n := uint32(loc.Len)
	if loc.Len > math.MaxUint32 || loc.Len < 0 {
		if l.long == nil {
			l.long = map[int64]int64{}
		}
		l.long[int64(l.n+1)] = loc.Len
		n = 0
	}
	l.chunks[c] = append(l.chunks[c], locus{off: loc.Off, len: n, sum: loc.Sum})
	l.n++
}

// at returns the locus of record seq, which is in l.
func (l *loci) at(seq int64) record.Locus {
	i := int(seq - 1)
	x := l.chunks[i/lociChunk][i%lociChunk]
	loc := record.Locus{Seq: seq, Off: x.off, Len: int64(x.len), Sum: x.sum}
	if n, ok := l.long[seq]; ok {
		loc.Len = n
	}
	return loc
}

// after returns the loci of the records after seq after.
func (l *loci) after(after int64) []record.Locus {
	out := make([]record.Locus, 0, max(l.n-int(after), 0))
	for seq := after + 1; seq <= int64(l.n); seq++ {
		out = append(out, l.at(seq))
	}
	return out
}

// view returns l as it is now, for readers: later adds to l do not change it.
func (l *loci) view() loci {
	v := loci{chunks: make([][]locus, len(l.chunks)), n: l.n}
	for i, c := range l.chunks {
		v.chunks[i] = c[:len(c):len(c)]
	}
	if len(l.long) > 0 {
		v.long = make(map[int64]int64, len(l.long))
		for k, n := range l.long {
			v.long[k] = n
		}
	}
	return v
}
