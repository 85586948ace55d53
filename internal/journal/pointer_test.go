package journal

import (
	"bytes"
	"errors"
	iofs "io/fs"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

// written creates a record with lines 1..n and returns it with their loci.
func written(t *testing.T, m *fsys.Mem, n int) (*Writer, [][]byte, []record.Locus) {
	t.Helper()
	w, err := Create(m, "/s")
	if err != nil {
		t.Fatal(err)
	}
	lines := encodeN(t, n)
	var loci []record.Locus
	for _, l := range lines {
		loc, err := w.AppendSync(l)
		if err != nil {
			t.Fatal(err)
		}
		loci = append(loci, loc)
	}
	return w, lines, loci
}

func TestReadPointer(t *testing.T) {
	m := fsys.NewMem()
	w, lines, loci := written(t, m, 8)
	for name, pick := range map[string][]int{
		"one":                 {3},
		"a run of adjacent":   {2, 3, 4, 5},
		"scattered":           {0, 4, 7},
		"out of order":        {6, 1},
		"the last line":       {7},
		"two runs":            {0, 1, 5, 6},
		"the same line twice": {2, 2},
	} {
		p := record.Pointer{File: w.Path()}
		for _, i := range pick {
			p.Loci = append(p.Loci, loci[i])
		}
		got, err := ReadPointer(m, p)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for k, i := range pick {
			if want := lines[i][:len(lines[i])-1]; !bytes.Equal(got[k], want) {
				t.Errorf("%s: line %d = %q; want %q", name, k, got[k], want)
			}
			if _, err := record.Decode(got[k], loci[i].Seq); err != nil {
				t.Errorf("%s: the line read back does not decode: %v", name, err)
			}
		}
	}
}

func TestReadPointerRefusesAnotherFile(t *testing.T) {
	m := fsys.NewMem()
	w, lines, loci := written(t, m, 4)
	p := record.Pointer{File: w.Path(), Loci: loci[1:3]}

	// Rewrite the file with different records of exactly the same lengths, so every byte range
	// still lands on a whole line.
	if err := m.Remove(w.Path()); err != nil {
		t.Fatal(err)
	}
	var other [][]byte
	for i, l := range lines {
		rec, err := record.Decode(l, int64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		rec.Time += 1e12 // as many digits, other bytes
		o, err := record.Encode(rec)
		if err != nil || len(o) != len(l) {
			t.Fatalf("re-encoding: %v (%d bytes, was %d)", err, len(o), len(l))
		}
		other = append(other, o)
	}
	writeFile(t, m, w.Path(), join(other...))

	_, err := ReadPointer(m, p)
	var stale *StaleError
	if !errors.As(err, &stale) || stale.Seq != 2 {
		t.Fatalf("ReadPointer into a rewritten file = %v; want a *StaleError for record 2", err)
	}
	want := "the record at " + w.Path() + " is no longer the file these byte ranges were measured in"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message %q does not start %q", err, want)
	}
}

func TestReadPointerStaleCases(t *testing.T) {
	m := fsys.NewMem()
	w, lines, loci := written(t, m, 4)
	shifted := loci[1]
	shifted.Off++
	wrongSeq := loci[1]
	wrongSeq.Seq = 3
	wrongSum := loci[1]
	wrongSum.Sum ^= 1
	longer := loci[1]
	longer.Len += int64(len(lines[2]))
	past := loci[3]
	past.Off += 1000
	for name, loc := range map[string]record.Locus{
		"shifted offset":        shifted,
		"wrong sequence number": wrongSeq,
		"wrong checksum":        wrongSum,
		"two lines as one":      longer,
		"past the end":          past,
		"negative offset":       {Seq: 1, Off: -1, Len: 10},
		"empty range":           {Seq: 1, Off: 0, Len: 0},
		"huge range":            {Seq: 1, Off: 0, Len: 1 << 40},
	} {
		_, err := ReadPointer(m, record.Pointer{File: w.Path(), Loci: []record.Locus{loci[0], loc}})
		var stale *StaleError
		if !errors.As(err, &stale) {
			t.Errorf("%s: ReadPointer = %v; want a *StaleError", name, err)
		}
	}

	// A missing file is an I/O error, not a stale pointer: the caller may look elsewhere.
	_, err := ReadPointer(m, record.Pointer{File: "/elsewhere/" + FileName, Loci: loci[:1]})
	var stale *StaleError
	if !errors.Is(err, iofs.ErrNotExist) || errors.As(err, &stale) {
		t.Errorf("ReadPointer of a missing file = %v; want fs.ErrNotExist", err)
	}
}

// countingFS counts the bytes read through ReadAt, to show ReadPointer reads only what it needs.
type countingFS struct {
	fsys.FS
	read *int64
}

type countingFile struct {
	fsys.File
	read *int64
}

func (c countingFS) Open(name string) (fsys.File, error) {
	f, err := c.FS.Open(name)
	if err != nil {
		return nil, err
	}
	return countingFile{f, c.read}, nil
}

func (c countingFS) ReadFile(string) ([]byte, error) {
	panic("ReadPointer must not read the whole file")
}

func (c countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.File.ReadAt(p, off)
	*c.read += int64(n)
	return n, err
}

func TestReadPointerReadsOnlyTheLoci(t *testing.T) {
	m := fsys.NewMem()
	w, _, loci := written(t, m, 50)
	var read int64
	p := record.Pointer{File: w.Path(), Loci: []record.Locus{loci[10], loci[11], loci[40]}}
	if _, err := ReadPointer(countingFS{m, &read}, p); err != nil {
		t.Fatal(err)
	}
	if want := loci[10].Len + loci[11].Len + loci[40].Len; read != want {
		t.Errorf("read %d bytes; want %d, the loci's", read, want)
	}
}
