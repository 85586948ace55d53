package fsys

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadRegular: a file is read up to the limit, its whole size told; a missing one is
// fs.ErrNotExist; a named pipe and a link to /dev/zero are refused at once, saying what they are.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte(strings.Repeat("x", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, size, err := ReadRegular(file, 10); err != nil || len(data) != 10 || size != 100 {
		t.Fatalf("ReadRegular(file, 10) = %d bytes, size %d, %v", len(data), size, err)
	}
	if _, _, err := ReadRegular(filepath.Join(dir, "missing"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v, want fs.ErrNotExist", err)
	}
	pipe, zero := filepath.Join(dir, "pipe"), filepath.Join(dir, "zero")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{pipe: "a named pipe", zero: "a character device", dir: "a directory"} {
		done := make(chan error, 1)
		go func() { _, _, err := ReadRegular(name, 1<<20); done <- err }()
		select {
		case err := <-done:
			var ie *IrregularError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) {
				t.Errorf("ReadRegular(%s) = %v, want it refused as %s", name, err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("ReadRegular(%s) did not return", name)
		}
	}
}
