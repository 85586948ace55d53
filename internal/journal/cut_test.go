package journal

import (
	"bytes"
	"testing"

	"github.com/reinhq/rein/internal/fsys"
)

func TestCut(t *testing.T) {
	fs := fsys.NewMem()
	w, err := Create(fs, "/r/s")
	if err != nil {
		t.Fatal(err)
	}
	var lines [][]byte
	for i := 0; i < 4; i++ {
		line := encode(t, int64(i+1), 10)
		if _, err := w.AppendSync(line); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	w.Close()
	path := "/r/s/" + FileName
	at := int64(len(lines[0]) + len(lines[1]))
	if _, err := Cut(fs, path, at-1); err == nil {
		t.Fatal("a cut inside a line was accepted")
	}
	moved, err := Cut(fs, path, at)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := fs.ReadFile(path)
	torn, _ := fs.ReadFile(path + TornSuffix)
	if moved != int64(len(torn)) || !bytes.Equal(rec, bytes.Join(lines[:2], nil)) || !bytes.Equal(torn, bytes.Join(lines[2:], nil)) {
		t.Fatalf("moved %d; record %q; torn %q", moved, rec, torn)
	}
	if _, _, err := Open(fs, path, nil); err != nil {
		t.Fatalf("the cut record does not open: %v", err)
	}
}
