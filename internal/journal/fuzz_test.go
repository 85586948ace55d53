package journal

import (
	"bytes"
	"errors"
	iofs "io/fs"
	"testing"

	"github.com/reinhq/rein/internal/fsys"
)

// FuzzOpen feeds Open arbitrary files. Whatever it reads, it either refuses and leaves the file
// byte for byte as it was, or keeps exactly the complete lines and quarantines exactly the rest.
func FuzzOpen(f *testing.F) {
	lines := encodeN(f, 3)
	f.Add(join(lines...))
	f.Add(join(lines[0], lines[1][:20]))
	f.Add(join(lines[0], make([]byte, 30)))
	f.Add(join(lines[0], []byte("{}\n"), lines[2]))
	f.Add([]byte("\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, content []byte) {
		m := fsys.NewMem()
		writeFile(t, m, path, content)
		inspected, ierr := Inspect(m, path, decode)
		w, rep, err := Open(m, path, decode)
		if (ierr == nil) != (err == nil) || inspected != rep {
			t.Fatalf("Inspect = %+v, %v but Open = %+v, %v", inspected, ierr, rep, err)
		}
		if err != nil {
			var r *RefusedError
			if !errors.As(err, &r) {
				t.Fatalf("Open of a file in memory failed without refusing: %v", err)
			}
			untouched(t, m, content)
			return
		}
		defer w.Close()
		last := bytes.LastIndexByte(content, '\n') + 1
		if rep.Size != int64(last) || rep.Torn != int64(len(content)-last) {
			t.Fatalf("report %+v for %d bytes whose last newline ends at %d", rep, len(content), last)
		}
		if got := readFile(t, m, path); !bytes.Equal(got, content[:last]) {
			t.Fatalf("the record holds %q; want %q", got, content[:last])
		}
		torn, err := m.ReadFile(path + TornSuffix)
		if rep.Torn == 0 {
			if !errors.Is(err, iofs.ErrNotExist) {
				t.Fatalf("a .torn file with nothing torn (%v)", err)
			}
		} else if !bytes.Equal(torn, content[last:]) {
			t.Fatalf(".torn holds %q; want %q", torn, content[last:])
		}
	})
}
