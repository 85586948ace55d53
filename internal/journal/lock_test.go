package journal

import (
	"bytes"
	"errors"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/fsys"
)

// other is the holder a test's first writer claims to be: another process.
var other = fsys.Holder{PID: 4242, Command: "rein run \"fix it\"", Since: time.Date(2026, 11, 29, 19, 45, 12, 0, time.UTC)}

// TestOneWriter: while a Writer holds a record, every other writer (Create, Open, Cut) is refused
// with a *HeldError naming the holder and touches nothing — not even a partial line at the end,
// which is the holder's append in progress, not a torn tail. Readers go on. Once the holder
// closes, the next writer opens at once.
func TestOneWriter(t *testing.T) {
	m := fsys.NewMem()
	m.SetHolder(other)
	w, err := Create(m, "/s")
	if err != nil {
		t.Fatal(err)
	}
	m.SetHolder(fsys.Holder{})
	lines := encodeN(t, 3)
	if _, err := w.AppendSync(lines[0]); err != nil {
		t.Fatal(err)
	}
	// The holder is part way through an append.
	f, err := m.OpenAppend(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(lines[1][:9]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	content := readFile(t, m, w.Path())

	check := func(what string, err error) {
		t.Helper()
		var he *HeldError
		if !errors.As(err, &he) || !errors.Is(err, fsys.ErrLocked) {
			t.Fatalf("%s while held = %v; want a *HeldError", what, err)
		}
		if he.Holder.PID != other.PID || he.Path != w.Path() {
			t.Errorf("%s: the refusal names %+v at %s", what, he.Holder, he.Path)
		}
		for _, want := range []string{"pid 4242", `rein run "fix it"`, "since 2026-11-29", "one writer at a time", "wait for that process to finish, or stop it"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the refusal %q does not say %q", what, err, want)
			}
		}
	}
	_, _, err = Open(m, w.Path(), decode)
	check("Open", err)
	_, err = Cut(m, w.Path(), int64(len(lines[0])))
	check("Cut", err)
	if err := m.Remove(w.Path()); err != nil { // a Create where a crash left no record, but the lock is live
		t.Fatal(err)
	}
	_, err = Create(m, "/s")
	check("Create", err)
	writeFile(t, m, w.Path(), content)
	if got := readFile(t, m, w.Path()); !bytes.Equal(got, content) {
		t.Fatal("the record changed")
	}
	if _, err := m.Stat(w.Path() + TornSuffix); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("a refused writer quarantined the holder's append in progress (%v)", err)
	}

	// Readers need no lock.
	if rep, err := Inspect(m, w.Path(), decode); err != nil || rep.Lines != 1 || rep.Torn != 9 {
		t.Errorf("Inspect while held = %+v, %v", rep, err)
	}
	if h, held, err := Live(m, w.Path()); !held || err != nil || h.PID != other.PID {
		t.Errorf("Live while held = %+v, %v, %v; want held by pid %d", h, held, err, other.PID)
	}

	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, held, err := Live(m, w.Path()); held || err != nil {
		t.Errorf("Live after Close = %v, %v; want not held", held, err)
	}
	w2, rep, err := Open(m, w.Path(), decode)
	if err != nil || rep.Lines != 1 || rep.Torn != 9 {
		t.Fatalf("Open after the holder closed = %+v, %v", rep, err)
	}
	if h, held, _ := Live(m, w.Path()); !held || h.PID != os.Getpid() {
		t.Errorf("Live of the new writer = %+v, %v; want this process", h, held)
	}
	w2.Close()
}

// TestRefusalsReleaseTheLock: an Open that fails for any reason other than the lock lets it go,
// so the next writer is told the real reason, not that the record is held.
func TestRefusalsReleaseTheLock(t *testing.T) {
	m := fsys.NewMem()
	lines := encodeN(t, 3)
	writeFile(t, m, path, join(lines[0], []byte("{}\n"), lines[2]))
	for range 2 {
		_, _, err := Open(m, path, decode)
		var r *RefusedError
		if !errors.As(err, &r) {
			t.Fatalf("Open of a damaged record = %v; want a *RefusedError", err)
		}
	}
	if _, held, _ := Live(m, path); held {
		t.Error("a refused Open left the record locked")
	}
	if _, err := Cut(m, path, int64(len(lines[0]))); err != nil {
		t.Fatal(err)
	}
	if _, held, _ := Live(m, path); held {
		t.Error("Cut left the record locked")
	}
	m.FailSync(path, errors.New("EIO"))
	if _, _, err := Open(m, path, decode); err == nil || errors.As(err, new(*HeldError)) {
		t.Fatalf("Open with a failing sync = %v; want the I/O error", err)
	}
	w, _, err := Open(m, path, decode)
	if err != nil {
		t.Fatalf("Open after a failed Open = %v", err)
	}
	w.Close()
}

// TestACrashReleasesTheLock: a writer's lock dies with its process; the next Open takes it at once.
func TestACrashReleasesTheLock(t *testing.T) {
	m := fsys.NewMem()
	w, err := Create(m, "/s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AppendSync(encode(t, 1, 3)); err != nil {
		t.Fatal(err)
	}
	m.Crash(rand.New(rand.NewPCG(1, 2)))
	w2, rep, err := Open(m, w.Path(), decode)
	if err != nil || rep.Lines != 1 {
		t.Fatalf("Open after a crash = %+v, %v", rep, err)
	}
	w2.Close()
	w.Close() // the dead writer's Close must not release the new writer's lock
	if _, held, _ := Live(m, w.Path()); held {
		t.Error("held after both closed")
	}
}

// TestAnUnnamedHolderIsWaitedOut: a lock held by someone who has not said who it is — a reader
// probing the record, or a writer in the instant before it writes its name — is waited out for a
// moment rather than refused; one that stays unnamed is refused as such.
func TestAnUnnamedHolderIsWaitedOut(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(fsys.OS{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	probe := func() *os.File {
		f, err := os.Open(filepath.Join(dir, LockName))
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		return f
	}
	brief := probe()
	const held = 20 * time.Millisecond
	time.AfterFunc(held, func() { brief.Close() })
	start := time.Now()
	w, _, err = Open(fsys.OS{}, w.Path(), decode)
	if err != nil {
		t.Fatalf("Open while a probe held the lock for %s = %v; want it waited out", held, err)
	}
	if took := time.Since(start); took < held/2 {
		t.Errorf("Open took %s; the probe held the lock for %s", took, held)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	stays := probe()
	defer stays.Close()
	_, _, err = Open(fsys.OS{}, w.Path(), decode)
	var he *HeldError
	if !errors.As(err, &he) || he.Holder.Known() || !strings.Contains(err.Error(), "has not said who it is") {
		t.Fatalf("Open while an unnamed holder stays = %v; want a *HeldError naming nobody", err)
	}
}
