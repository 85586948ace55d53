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

func TestCreate(t *testing.T) {
	m := fsys.NewMem()
	w, err := Create(m, "/state/rein/sessions/proj/s1")
	if err != nil {
		t.Fatal(err)
	}
	if w.Path() != "/state/rein/sessions/proj/s1/"+FileName || w.Next() != 1 || w.Size() != 0 {
		t.Errorf("new writer: path %s, next %d, size %d", w.Path(), w.Next(), w.Size())
	}
	if _, err := Create(m, "/state/rein/sessions/proj/s1"); !errors.Is(err, iofs.ErrExist) {
		t.Errorf("Create over an existing session = %v; want fs.ErrExist", err)
	}
	// Every directory and the file were synced: no crash can take them.
	for seed := range uint64(200) {
		m.Crash(seeded(seed))
		if got, err := m.ReadFile(w.Path()); err != nil || len(got) != 0 {
			t.Fatalf("seed %d: after a crash the new record is %q, %v", seed, got, err)
		}
	}
}

func TestAppendRefusesBadLines(t *testing.T) {
	m := fsys.NewMem()
	w, err := Create(m, "/s")
	if err != nil {
		t.Fatal(err)
	}
	good := encode(t, 1, 10)
	flipped := bytes.Clone(good)
	flipped[15] ^= 1
	big := encode(t, 1, MaxLine)
	for name, line := range map[string][]byte{
		"no newline":           good[:len(good)-1],
		"empty":                {},
		"a newline inside":     append(bytes.Clone(good[:len(good)-1]), good...),
		"too long":             big,
		"wrong sequence":       encode(t, 2, 10),
		"flipped byte":         flipped,
		"not a record at all":  []byte("hello\n"),
		"a second line inside": join(good, encode(t, 2, 1)),
	} {
		if _, err := w.Append(line); !errors.Is(err, ErrLine) {
			t.Errorf("%s: Append = %v; want ErrLine", name, err)
		}
	}
	// A refused line writes nothing and leaves the writer good.
	if got := readFile(t, m, w.Path()); len(got) != 0 {
		t.Fatalf("refused lines wrote %q", got)
	}
	loc, err := w.AppendSync(good)
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := record.Checksum(good[:len(good)-1])
	if want := (record.Locus{Seq: 1, Off: 0, Len: int64(len(good)), Sum: sum}); loc != want {
		t.Errorf("locus = %+v; want %+v", loc, want)
	}
}

func TestAppendTracksLoci(t *testing.T) {
	m := fsys.NewMem()
	w, err := Create(m, "/s")
	if err != nil {
		t.Fatal(err)
	}
	var off int64
	for i, line := range encodeN(t, 20) {
		loc, err := w.Append(line)
		if err != nil {
			t.Fatal(err)
		}
		if loc.Seq != int64(i+1) || loc.Off != off || loc.Len != int64(len(line)) {
			t.Fatalf("line %d: locus %+v; want seq %d off %d len %d", i+1, loc, i+1, off, len(line))
		}
		off += loc.Len
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if w.Size() != off || w.Next() != 21 {
		t.Errorf("writer at %d, next %d; want %d, 21", w.Size(), w.Next(), off)
	}
}

// TestSyncFailurePoisons: after a failed fsync the writer never writes or syncs again, and
// reports the original error every time.
func TestSyncFailurePoisons(t *testing.T) {
	boom := errors.New("EIO: the disk said no")
	m := fsys.NewMem()
	w, err := Create(m, "/s")
	if err != nil {
		t.Fatal(err)
	}
	lines := encodeN(t, 4)
	if _, err := w.AppendSync(lines[0]); err != nil {
		t.Fatal(err)
	}
	m.FailSync(w.Path(), boom)
	_, first := w.AppendSync(lines[1])
	if !errors.Is(first, boom) || !errors.Is(first, ErrPoisoned) {
		t.Fatalf("AppendSync with a failing sync = %v; want %v and ErrPoisoned", first, boom)
	}
	size := len(readFile(t, m, w.Path()))
	// The fault fired once; a retried fsync would now succeed. The writer must not try.
	for _, err := range []error{w.Sync(), second(w.Append(lines[2])), second(w.AppendSync(lines[2]))} {
		if err != first {
			t.Errorf("later call = %v; want the first error %v", err, first)
		}
	}
	if got := len(readFile(t, m, w.Path())); got != size {
		t.Errorf("a poisoned writer wrote %d more bytes", got-size)
	}
	if !strings.Contains(first.Error(), boom.Error()) {
		t.Errorf("message %q hides the cause", first)
	}
}

func TestWriteFailurePoisons(t *testing.T) {
	boom := errors.New("ENOSPC")
	m := fsys.NewMem()
	w, err := Create(m, "/s")
	if err != nil {
		t.Fatal(err)
	}
	lines := encodeN(t, 3)
	if _, err := w.AppendSync(lines[0]); err != nil {
		t.Fatal(err)
	}
	m.FailWrite(w.Path(), 10, boom)
	if _, err := w.Append(lines[1]); !errors.Is(err, boom) || !errors.Is(err, ErrPoisoned) {
		t.Fatalf("Append with a failing write = %v", err)
	}
	if _, err := w.Append(lines[1]); !errors.Is(err, boom) {
		t.Fatalf("Append after a failed write = %v; want the first error", err)
	}
	// The partial line is a torn tail, not damage: the next Open quarantines it.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, rep, err := Open(m, w.Path(), decode)
	if err != nil || rep.Lines != 1 || rep.Torn != 10 {
		t.Fatalf("Open after a failed write = %+v, %v; want 1 line and 10 torn bytes", rep, err)
	}
}

func TestClosedWriter(t *testing.T) {
	m := fsys.NewMem()
	w, err := Create(m, "/s")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(encode(t, 1, 1)); !errors.Is(err, iofs.ErrClosed) {
		t.Errorf("Append after Close = %v; want fs.ErrClosed", err)
	}
	if err := w.Close(); !errors.Is(err, iofs.ErrClosed) {
		t.Errorf("second Close = %v; want fs.ErrClosed", err)
	}
}

func TestLineSeq(t *testing.T) {
	for line, want := range map[string]int64{
		`{"v":1,"seq":1,"t":0}`:             1,
		`{"v":1,"seq":1234567,"t":0}`:       1234567,
		`{"v":12,"seq":3,`:                  3,
		`{"v":1,"seq":,"t":0}`:              -1,
		`{"v":1,"seq":7}`:                   -1,
		`{"v":1,"seq":7`:                    -1,
		`{"v":,"seq":7,`:                    -1,
		`{"seq":7,"v":1,`:                   -1,
		`{"v":1,"seq":-7,`:                  -1,
		`{"v":1,"seq":1234567890123456789,`: -1,
	} {
		got, ok := lineSeq([]byte(line))
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("lineSeq(%s) = %d; want %d", line, got, want)
		}
	}
}

func second[T any](_ T, err error) error { return err }
