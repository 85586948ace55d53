package journal

import (
	"errors"
	"fmt"
	"io"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

// StaleError is ReadPointer's refusal: the bytes at a locus are not the line measured there.
type StaleError struct {
	Path   string
	Seq    int64  // the locus's sequence number
	Reason string // what did not match
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("the record at %s is no longer the file these byte ranges were measured in: record %d %s",
		e.Path, e.Seq, e.Reason)
}

// ReadPointer reads the lines a pointer names, in its order, each without its "\n". Before
// returning a line it checks that the bytes at the locus are one whole line whose checksum is the
// locus's and whose sequence number is the locus's; any mismatch is a *StaleError and nothing is
// returned. It reads only the loci's bytes, one read for each run of adjacent loci.
func ReadPointer(fs fsys.FS, p record.Pointer) ([][]byte, error) {
	for _, l := range p.Loci {
		if l.Off < 0 || l.Len < 2 || l.Len >= MaxLine {
			return nil, &StaleError{p.File, l.Seq, fmt.Sprintf("has a byte range (%d bytes at %d) no line can have", l.Len, l.Off)}
		}
	}
	f, err := fs.Open(p.File)
	if err != nil {
		return nil, fmt.Errorf("read pointer: %w", err)
	}
	lines, err := readLoci(f, p)
	return lines, errors.Join(err, f.Close())
}

func readLoci(f fsys.File, p record.Pointer) ([][]byte, error) {
	lines := make([][]byte, 0, len(p.Loci))
	for i := 0; i < len(p.Loci); {
		// Gather a run of adjacent loci, as a turn's records usually are, into one read.
		j, end := i+1, p.Loci[i].Off+p.Loci[i].Len
		for j < len(p.Loci) && p.Loci[j].Off == end && end-p.Loci[i].Off < MaxLine {
			end += p.Loci[j].Len
			j++
		}
		buf := make([]byte, end-p.Loci[i].Off)
		// A full read may still report io.EOF, when it reaches the end of the file exactly.
		if n, err := f.ReadAt(buf, p.Loci[i].Off); n < len(buf) {
			if err == io.EOF {
				return nil, &StaleError{p.File, p.Loci[i].Seq, "lies past the end of the file"}
			}
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("read pointer into %s: %w", p.File, err)
		}
		for _, l := range p.Loci[i:j] {
			line := buf[:l.Len]
			buf = buf[l.Len:]
			if err := matches(line, l); err != "" {
				return nil, &StaleError{p.File, l.Seq, err}
			}
			lines = append(lines, line[:l.Len-1:l.Len-1])
		}
		i = j
	}
	return lines, nil
}

// matches says how a line's bytes differ from the locus measured for them, or "" if they don't.
func matches(line []byte, l record.Locus) string {
	n := len(line)
	if line[n-1] != '\n' {
		return "does not end where its byte range does"
	}
	sum, err := record.Checksum(line[:n-1])
	if err != nil {
		return "is not a whole record line there: " + err.Error()
	}
	if sum != l.Sum {
		return fmt.Sprintf("has checksum %08x there, not %08x", sum, l.Sum)
	}
	if seq, ok := lineSeq(line); !ok {
		return "does not open with its sequence number there"
	} else if seq != l.Seq {
		return fmt.Sprintf("carries sequence number %d there", seq)
	}
	return ""
}
