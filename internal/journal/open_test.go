package journal

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

const path = "/s/" + FileName

func TestOpen(t *testing.T) {
	good := encodeN(t, 4)
	flipped := bytes.Clone(good[1])
	flipped[20] ^= 0x01
	huge := append(bytes.Repeat([]byte{'x'}, 2*MaxLine), '\n')

	cases := []struct {
		name    string
		content []byte
		want    Report
		refuse  int64  // the line refused, or 0 to accept
		reason  string // a part of the refusal's reason
	}{
		{name: "empty file", content: nil, want: Report{}},
		{name: "good file", content: join(good...), want: Report{Lines: 4, Size: int64(len(join(good...)))}},
		{
			name:    "torn partial line",
			content: join(good[0], good[1], good[2][:30]),
			want:    Report{Lines: 2, Size: int64(len(good[0]) + len(good[1])), Torn: 30},
		},
		{
			name:    "torn zeros",
			content: join(good[0], make([]byte, 4096)),
			want:    Report{Lines: 1, Size: int64(len(good[0])), Torn: 4096},
		},
		{
			name:    "torn line then zeros",
			content: join(good[0], good[1][:10], make([]byte, 100)),
			want:    Report{Lines: 1, Size: int64(len(good[0])), Torn: 110},
		},
		{
			name:    "whole file torn",
			content: good[0][:len(good[0])-1],
			want:    Report{Torn: int64(len(good[0]) - 1)},
		},
		{
			name:    "a torn tail longer than any line",
			content: join(good[0], bytes.Repeat([]byte{'y'}, 3*MaxLine)),
			want:    Report{Lines: 1, Size: int64(len(good[0])), Torn: 3 * MaxLine},
		},
		{
			name:    "garbage complete line in the middle",
			content: join(good[0], []byte("garbage\n"), good[2]),
			refuse:  2, reason: "not a rein record line",
		},
		{
			name:    "damage followed by valid lines",
			content: join(good[0], make([]byte, 64), good[1], good[2], good[3]),
			refuse:  2, reason: "not a rein record line",
		},
		{
			name:    "flipped byte",
			content: join(good[0], flipped, good[2]),
			refuse:  2, reason: "do not match its checksum",
		},
		{
			name:    "empty line",
			content: join(good[0], []byte("\n"), good[1]),
			refuse:  2, reason: "not a rein record line",
		},
		{
			name:    "damage and a torn tail",
			content: join(good[0], []byte("garbage\n"), good[2][:9]),
			refuse:  2, reason: "not a rein record line",
		},
		{
			name:    "checksums fine, verify refuses a repeated line",
			content: join(good[0], good[1], good[1]),
			refuse:  3, reason: "carries sequence number 2 where 3 belongs",
		},
		{
			name:    "a complete line longer than any rein writes",
			content: join(good[0], huge),
			refuse:  2, reason: "or longer",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Run("Inspect", func(t *testing.T) {
				m := fsys.NewMem()
				writeFile(t, m, path, c.content)
				rep, err := Inspect(m, path, decode)
				checkOutcome(t, rep, err, c.want, c.refuse, c.reason)
				untouched(t, m, c.content)
			})
			t.Run("Open", func(t *testing.T) {
				m := fsys.NewMem()
				writeFile(t, m, path, c.content)
				w, rep, err := Open(m, path, decode)
				checkOutcome(t, rep, err, c.want, c.refuse, c.reason)
				if c.refuse != 0 {
					untouched(t, m, c.content)
					return
				}
				if got := readFile(t, m, path); !bytes.Equal(got, c.content[:c.want.Size]) {
					t.Errorf("after Open the record holds %q; want its first %d bytes", got, c.want.Size)
				}
				torn, err := m.ReadFile(path + TornSuffix)
				switch {
				case c.want.Torn == 0 && !errors.Is(err, iofs.ErrNotExist):
					t.Errorf("a .torn file was written for a file with no torn tail (%v)", err)
				case c.want.Torn > 0 && !bytes.Equal(torn, c.content[c.want.Size:]):
					t.Errorf(".torn holds %d bytes; want the %d of the tail", len(torn), c.want.Torn)
				}
				// The writer continues the file, and what it writes opens again.
				if w.Next() != c.want.Lines+1 || w.Size() != c.want.Size {
					t.Fatalf("writer at record %d, offset %d; want %d, %d", w.Next(), w.Size(), c.want.Lines+1, c.want.Size)
				}
				if _, err := w.AppendSync(encode(t, w.Next(), 3)); err != nil {
					t.Fatal(err)
				}
				if _, _, err := Open(m, path, decode); !errors.As(err, new(*HeldError)) {
					t.Errorf("a second Open while the writer is open = %v; want a *HeldError", err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				if _, rep, err := Open(m, path, decode); err != nil || rep.Lines != c.want.Lines+1 || rep.Torn != 0 {
					t.Errorf("reopen = %+v, %v; want %d lines, nothing torn", rep, err, c.want.Lines+1)
				}
			})
		})
	}
}

var recordN = regexp.MustCompile(`record \d`)

func checkOutcome(t *testing.T, rep Report, err error, want Report, refuse int64, reason string) {
	t.Helper()
	if refuse == 0 {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		if diff := cmp.Diff(want, rep); diff != "" {
			t.Errorf("report (-want +got):\n%s", diff)
		}
		return
	}
	var r *RefusedError
	if !errors.As(err, &r) {
		t.Fatalf("error = %v; want a refusal of record %d", err, refuse)
	}
	if r.Line != refuse || !strings.Contains(r.Reason, reason) {
		t.Errorf("refused record %d because %q; want record %d because ...%q...", r.Line, r.Reason, refuse, reason)
	}
	if prefix := fmt.Sprintf("record %d of %s is refused: ", refuse, path); !strings.HasPrefix(err.Error(), prefix) {
		t.Errorf("message %q does not start %q", err, prefix)
	}
	if n := len(recordN.FindAllString(err.Error(), -1)); n != 1 {
		t.Errorf("message %q names the record more than once", err)
	}
}

// untouched checks that the record holds exactly content and that no .torn file exists.
func untouched(t *testing.T, m *fsys.Mem, content []byte) {
	t.Helper()
	if got := readFile(t, m, path); !bytes.Equal(got, content) {
		t.Errorf("the record changed: %d bytes, was %d", len(got), len(content))
	}
	if _, err := m.Stat(path + TornSuffix); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("a .torn file exists (%v)", err)
	}
}

func TestOpenRefusalWrapsTheCause(t *testing.T) {
	good := encodeN(t, 2)
	flipped := bytes.Clone(good[1])
	flipped[len(flipped)/2] ^= 0x20
	m := fsys.NewMem()
	writeFile(t, m, path, join(good[0], flipped))
	_, _, err := Open(m, path, nil)
	if !errors.Is(err, record.ErrChecksum) {
		t.Errorf("Open = %v; want it to wrap record.ErrChecksum", err)
	}

	sentinel := errors.New("the fold refuses this")
	m = fsys.NewMem()
	writeFile(t, m, path, join(good...))
	_, _, err = Open(m, path, func(seq int64, _ []byte, _ record.Locus) error {
		if seq == 2 {
			return sentinel
		}
		return nil
	})
	if !errors.Is(err, sentinel) {
		t.Errorf("Open = %v; want it to wrap the verify error", err)
	}
}

func TestOpenGivesVerifyEveryLineAndItsLocus(t *testing.T) {
	lines := encodeN(t, 5)
	m := fsys.NewMem()
	writeFile(t, m, path, join(append(lines, []byte("torn"))...))
	var got []record.Locus
	_, _, err := Open(m, path, func(seq int64, line []byte, loc record.Locus) error {
		if want := lines[seq-1]; !bytes.Equal(line, want[:len(want)-1]) {
			t.Errorf("line %d = %q; want %q without its newline", seq, line, want)
		}
		got = append(got, loc)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []record.Locus
	var off int64
	for i, l := range lines {
		sum, err := record.Checksum(l[:len(l)-1])
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, record.Locus{Seq: int64(i + 1), Off: off, Len: int64(len(l)), Sum: sum})
		off += int64(len(l))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("loci (-want +got):\n%s", diff)
	}
}

func TestSecondQuarantineAppendsToTheTornFile(t *testing.T) {
	m := fsys.NewMem()
	lines := encodeN(t, 3)
	writeFile(t, m, path, join(lines[0], lines[1][:7]))
	w, rep, err := Open(m, path, decode)
	if err != nil || rep.Torn != 7 {
		t.Fatalf("first Open = %+v, %v", rep, err)
	}
	if _, err := w.Append(lines[1]); err != nil {
		t.Fatal(err)
	}
	// A torn write of the third line, as a crash between write and sync leaves.
	if _, err := w.Append(lines[2]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := m.OpenAppend(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(len(lines[0]) + len(lines[1]) + 11)); err != nil {
		t.Fatal(err)
	}
	f.Close()

	_, rep, err = Open(m, path, decode)
	if err != nil || rep.Lines != 2 || rep.Torn != 11 {
		t.Fatalf("second Open = %+v, %v; want 2 lines and 11 torn bytes", rep, err)
	}
	want := join(lines[1][:7], lines[2][:11])
	if got := readFile(t, m, path+TornSuffix); !bytes.Equal(got, want) {
		t.Errorf(".torn holds %q; want %q", got, want)
	}
}

func TestOpenMissing(t *testing.T) {
	m := fsys.NewMem()
	_, _, err := Open(m, path, decode)
	var r *RefusedError
	if !errors.Is(err, iofs.ErrNotExist) || errors.As(err, &r) {
		t.Errorf("Open of a missing record = %v; want an I/O error wrapping fs.ErrNotExist", err)
	}
}

// TestOpenIOErrorsLeaveTheRecordWhole injects a failed sync at each step of a quarantine: Open
// fails with an I/O error, and the torn tail is still in the record or safely in .torn.
func TestOpenIOErrorsLeaveTheRecordWhole(t *testing.T) {
	boom := errors.New("EIO")
	lines := encodeN(t, 2)
	content := join(lines[0], lines[1][:5])
	for _, failing := range []string{path + TornSuffix, "/s", path} {
		t.Run(failing, func(t *testing.T) {
			m := fsys.NewMem()
			writeFile(t, m, path, content)
			m.FailSync(failing, boom)
			_, _, err := Open(m, path, decode)
			var r *RefusedError
			if !errors.Is(err, boom) || errors.As(err, &r) {
				t.Fatalf("Open = %v; want an I/O error wrapping %v", err, boom)
			}
			if _, rep, err := Open(m, path, decode); err != nil || rep.Lines != 1 {
				t.Fatalf("Open after the failure = %+v, %v", rep, err)
			}
			if got := readFile(t, m, path+TornSuffix); !bytes.HasSuffix(got, lines[1][:5]) {
				t.Errorf(".torn holds %q", got)
			}
		})
	}
}
