package fsys

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestConformance runs the one suite every FS implementation passes.
func TestConformance(t *testing.T) {
	impls := []struct {
		name string
		new  func(t *testing.T) (FS, string)
	}{
		{"OS", func(t *testing.T) (FS, string) { return OS{}, t.TempDir() }},
		{"Mem", func(t *testing.T) (FS, string) { return NewMem(), "/root" }},
	}
	for _, impl := range impls {
		t.Run(impl.name, func(t *testing.T) {
			for _, c := range conformance {
				t.Run(c.name, func(t *testing.T) {
					fsys, root := impl.new(t)
					if err := fsys.MkdirAll(root); err != nil {
						t.Fatal(err)
					}
					c.run(t, fsys, root)
				})
			}
		})
	}
}

var conformance = []struct {
	name string
	run  func(t *testing.T, fsys FS, root string)
}{
	{"create, append, read back", func(t *testing.T, fsys FS, root string) {
		name := filepath.Join(root, "a")
		f := must(fsys.Create(name))
		write(t, f, "hello ")
		write(t, f, "world\n")
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		wantContent(t, fsys, name, "hello world\n")
		buf := make([]byte, 5)
		if n, err := f.ReadAt(buf, 6); n != 5 || err != nil || string(buf) != "world" {
			t.Errorf("ReadAt(6) = %d, %v, %q; want 5, nil, world", n, err, buf)
		}
		if n, err := f.ReadAt(buf, 10); n != 2 || err != io.EOF {
			t.Errorf("ReadAt past the end = %d, %v; want 2, io.EOF", n, err)
		}
		if n, err := f.ReadAt(buf, 100); n != 0 || err != io.EOF {
			t.Errorf("ReadAt far past the end = %d, %v; want 0, io.EOF", n, err)
		}
		fi := must(f.Stat())
		if fi.Size() != 12 || fi.IsDir() {
			t.Errorf("Stat = size %d dir %v; want 12, false", fi.Size(), fi.IsDir())
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}},
	{"create is exclusive", func(t *testing.T, fsys FS, root string) {
		name := filepath.Join(root, "a")
		closeOK(t, must(fsys.Create(name)))
		if _, err := fsys.Create(name); !errors.Is(err, fs.ErrExist) {
			t.Errorf("second Create = %v; want fs.ErrExist", err)
		}
	}},
	{"missing files", func(t *testing.T, fsys FS, root string) {
		name := filepath.Join(root, "nope")
		for op, err := range map[string]error{
			"Open":       second(fsys.Open(name)),
			"OpenAppend": second(fsys.OpenAppend(name)),
			"ReadFile":   second(fsys.ReadFile(name)),
			"Stat":       second(fsys.Stat(name)),
			"Remove":     fsys.Remove(name),
			"Rename":     fsys.Rename(name, name+"2"),
			"Create":     second(fsys.Create(filepath.Join(name, "child"))),
		} {
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s of a missing file = %v; want fs.ErrNotExist", op, err)
			}
		}
	}},
	{"open append writes at the end", func(t *testing.T, fsys FS, root string) {
		name := filepath.Join(root, "a")
		f := must(fsys.Create(name))
		write(t, f, "one\n")
		closeOK(t, f)
		f = must(fsys.OpenAppend(name))
		write(t, f, "two\n")
		closeOK(t, f)
		wantContent(t, fsys, name, "one\ntwo\n")
	}},
	{"truncate then append", func(t *testing.T, fsys FS, root string) {
		name := filepath.Join(root, "a")
		f := must(fsys.Create(name))
		write(t, f, "keep\ndrop")
		if err := f.Truncate(5); err != nil {
			t.Fatal(err)
		}
		write(t, f, "more\n")
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		closeOK(t, f)
		wantContent(t, fsys, name, "keep\nmore\n")
	}},
	{"read-only handle refuses writes", func(t *testing.T, fsys FS, root string) {
		name := filepath.Join(root, "a")
		closeOK(t, must(fsys.Create(name)))
		f := must(fsys.Open(name))
		defer f.Close()
		if _, err := f.Write([]byte("x")); err == nil {
			t.Error("Write on a read-only handle succeeded")
		}
		if err := f.Truncate(0); err == nil {
			t.Error("Truncate on a read-only handle succeeded")
		}
	}},
	{"closed handle", func(t *testing.T, fsys FS, root string) {
		f := must(fsys.Create(filepath.Join(root, "a")))
		closeOK(t, f)
		if _, err := f.Write([]byte("x")); !errors.Is(err, fs.ErrClosed) {
			t.Errorf("Write after Close = %v; want fs.ErrClosed", err)
		}
		if err := f.Sync(); !errors.Is(err, fs.ErrClosed) {
			t.Errorf("Sync after Close = %v; want fs.ErrClosed", err)
		}
	}},
	{"directories", func(t *testing.T, fsys FS, root string) {
		dir := filepath.Join(root, "x", "y", "z")
		if err := fsys.MkdirAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := fsys.MkdirAll(dir); err != nil {
			t.Fatalf("MkdirAll of an existing directory: %v", err)
		}
		if fi := must(fsys.Stat(dir)); !fi.IsDir() {
			t.Errorf("Stat(%s).IsDir() = false", dir)
		}
		if err := fsys.SyncDir(dir); err != nil {
			t.Fatal(err)
		}
		closeOK(t, must(fsys.Create(filepath.Join(dir, "f"))))
		if err := fsys.MkdirAll(filepath.Join(dir, "f", "g")); err == nil {
			t.Error("MkdirAll through a file succeeded")
		}
		if err := fsys.Remove(dir); err == nil {
			t.Error("Remove of a non-empty directory succeeded")
		}
		if err := fsys.Remove(filepath.Join(dir, "f")); err != nil {
			t.Fatal(err)
		}
		if err := fsys.Remove(dir); err != nil {
			t.Fatalf("Remove of an empty directory: %v", err)
		}
	}},
	{"remove all", func(t *testing.T, fsys FS, root string) {
		dir := filepath.Join(root, "s")
		if err := fsys.MkdirAll(filepath.Join(dir, "blobs")); err != nil {
			t.Fatal(err)
		}
		f := must(fsys.Create(filepath.Join(dir, "record.jsonl")))
		write(t, f, "kept by the open handle\n")
		closeOK(t, must(fsys.Create(filepath.Join(dir, "blobs", "b"))))
		if err := fsys.RemoveAll(dir); err != nil {
			t.Fatalf("RemoveAll of a tree: %v", err)
		}
		if _, err := fsys.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat after RemoveAll = %v; want fs.ErrNotExist", err)
		}
		if err := fsys.RemoveAll(dir); err != nil {
			t.Errorf("RemoveAll of a missing name: %v", err)
		}
		if err := fsys.RemoveAll(filepath.Join(root, "no", "such")); err != nil {
			t.Errorf("RemoveAll under a missing directory: %v", err)
		}
		closeOK(t, f)
	}},
	{"mkdir all sync", func(t *testing.T, fsys FS, root string) {
		dir := filepath.Join(root, "p", "q")
		if err := MkdirAllSync(fsys, dir); err != nil {
			t.Fatal(err)
		}
		if err := MkdirAllSync(fsys, dir); err != nil {
			t.Fatal(err)
		}
		if fi := must(fsys.Stat(dir)); !fi.IsDir() {
			t.Errorf("%s is not a directory", dir)
		}
	}},
	{"one lock at a time, naming its holder", func(t *testing.T, fsys FS, root string) {
		name := filepath.Join(root, "record.lock")
		if h, held, err := fsys.Probe(name); held || err != nil || h.Known() {
			t.Errorf("Probe of a missing lock file = %v, %v, %v; want not held", h, held, err)
		}
		if _, err := fsys.Stat(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Probe created the lock file (%v)", err)
		}
		l := must(fsys.Lock(name))
		// A second Lock is refused, even from this process: a lock belongs to the call.
		_, err := fsys.Lock(name)
		var le *LockedError
		if !errors.Is(err, ErrLocked) || !errors.As(err, &le) {
			t.Fatalf("second Lock = %v; want a *LockedError", err)
		}
		if le.Holder.PID != os.Getpid() || !strings.Contains(le.Holder.Command, filepath.Base(os.Args[0])) || le.Holder.Since.IsZero() {
			t.Errorf("the refusal names %+v; want pid %d, this command, a time", le.Holder, os.Getpid())
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
			t.Errorf("the refusal says %q; it does not name the pid", err)
		}
		if h, held, err := fsys.Probe(name); !held || err != nil || h.PID != os.Getpid() {
			t.Errorf("Probe of a held lock = %+v, %v, %v; want held by this process", h, held, err)
		}
		// Probing does not take the lock from its holder, nor keep it once done.
		if _, err := fsys.Lock(name); !errors.Is(err, ErrLocked) {
			t.Errorf("Lock after a Probe = %v; want ErrLocked", err)
		}
		ok(l.Unlock())
		ok(l.Unlock()) // a second Unlock does nothing
		wantContent(t, fsys, name, "")
		if h, held, err := fsys.Probe(name); held || err != nil {
			t.Errorf("Probe after Unlock = %v, %v, %v; want not held", h, held, err)
		}
		l2 := must(fsys.Lock(name))
		defer l2.Unlock()
		// An Unlock of a lock already released must not release the next holder's.
		ok(l.Unlock())
		if _, err := fsys.Lock(name); !errors.Is(err, ErrLocked) {
			t.Errorf("Lock while the second holder holds = %v; want ErrLocked", err)
		}
	}},
	{"lock in a missing directory", func(t *testing.T, fsys FS, root string) {
		if _, err := fsys.Lock(filepath.Join(root, "nope", "record.lock")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Lock in a missing directory = %v; want fs.ErrNotExist", err)
		}
	}},
	{"rename replaces", func(t *testing.T, fsys FS, root string) {
		a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
		f := must(fsys.Create(a))
		write(t, f, "new")
		closeOK(t, f)
		f = must(fsys.Create(b))
		write(t, f, "old")
		closeOK(t, f)
		if err := fsys.Rename(a, b); err != nil {
			t.Fatal(err)
		}
		wantContent(t, fsys, b, "new")
		if _, err := fsys.Stat(a); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat of the old name = %v; want fs.ErrNotExist", err)
		}
	}},
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err) // only in tests, where a failed setup step is a bug in the test
	}
	return v
}

func second[T any](_ T, err error) error { return err }

func write(t *testing.T, f File, s string) {
	t.Helper()
	if n, err := f.Write([]byte(s)); n != len(s) || err != nil {
		t.Fatalf("Write(%q) = %d, %v", s, n, err)
	}
}

func closeOK(t *testing.T, f File) {
	t.Helper()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func wantContent(t *testing.T, fsys FS, name, want string) {
	t.Helper()
	got, err := fsys.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, []byte(want)) {
		t.Errorf("%s holds %q; want %q", name, got, want)
	}
}

func ok(err error) {
	if err != nil {
		panic(err) // only in tests, where a failed setup step is a bug in the test
	}
}

// TestOSDoesNotBelieveADeadHolder: a lock file naming a process that is gone (left by a holder
// that crashed) while someone holds the lock without having written (a reader probing it) names
// nobody, so a refusal never sends a person after a dead pid.
func TestOSDoesNotBelieveADeadHolder(t *testing.T) {
	dead := exec.Command("true")
	ok(dead.Run())
	name := filepath.Join(t.TempDir(), "record.lock")
	l := must(OS{}.Lock(name))
	defer l.Unlock()
	ok(os.WriteFile(name, encodeHolder(Holder{PID: dead.Process.Pid, Command: "crashed"}), 0o600))
	_, err := OS{}.Lock(name)
	var le *LockedError
	if !errors.As(err, &le) || le.Holder.Known() {
		t.Fatalf("Lock = %v; want a refusal naming nobody", err)
	}
	if !strings.Contains(err.Error(), "has not said who it is") {
		t.Errorf("the refusal says %q", err)
	}
}
