package fsys

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// crashMany crashes a fresh copy of a scenario under many seeds and calls check with each result.
func crashMany(t *testing.T, setup func(m *Mem), check func(t *testing.T, seed uint64, m *Mem)) {
	t.Helper()
	for seed := range uint64(500) {
		m := NewMem()
		setup(m)
		m.Crash(seeded(seed))
		check(t, seed, m)
		if t.Failed() {
			t.Fatalf("failed with seed %d", seed)
		}
	}
}

func TestCrashKeepsSyncedBytesAndAPrefixOfTheRest(t *testing.T) {
	const synced, unsynced = "durable\n", "maybe 1\nmaybe 2\n"
	var outcomes = map[string]bool{}
	crashMany(t, func(m *Mem) {
		ok(m.MkdirAll("/d"))
		f := must(m.Create("/d/f"))
		must(f.Write([]byte(synced)))
		ok(f.Sync())
		ok(m.SyncDir("/d"))
		ok(m.SyncDir("/"))
		must(f.Write([]byte("maybe 1\n")))
		must(f.Write([]byte("maybe 2\n")))
	}, func(t *testing.T, seed uint64, m *Mem) {
		got, err := m.ReadFile("/d/f")
		if err != nil {
			t.Fatalf("a synced file in synced directories is gone: %v", err)
		}
		if !bytes.HasPrefix(got, []byte(synced)) {
			t.Fatalf("synced bytes lost: %q", got)
		}
		rest := got[len(synced):]
		zeros := bytes.Count(rest, []byte{0})
		real := rest[:len(rest)-zeros]
		if !bytes.HasPrefix([]byte(unsynced), real) || !bytes.Equal(rest[len(real):], make([]byte, zeros)) {
			t.Fatalf("unsynced part %q is not a prefix of %q followed by zeros", rest, unsynced)
		}
		if zeros > 0 {
			outcomes[fmt.Sprintf("zeros after %d", len(real))] = true
		} else {
			outcomes[fmt.Sprintf("prefix %d", len(real))] = true
		}
	})
	// Over 500 seeds every kind of outcome shows up: nothing, a torn line, whole lines, zeros.
	for _, want := range []string{"prefix 0", "prefix 3", "prefix 8", "prefix 16", "zeros after 0"} {
		if !outcomes[want] {
			t.Errorf("no seed produced outcome %q (got %v)", want, outcomes)
		}
	}
}

func TestCrashMayDropUnsyncedEntries(t *testing.T) {
	var vanished, kept int
	crashMany(t, func(m *Mem) {
		ok(m.MkdirAll("/d"))
		ok(m.SyncDir("/"))
		f := must(m.Create("/d/f"))
		must(f.Write([]byte("x")))
		ok(f.Sync()) // the content is durable, the entry is not
	}, func(t *testing.T, seed uint64, m *Mem) {
		got, err := m.ReadFile("/d/f")
		switch {
		case errors.Is(err, fs.ErrNotExist):
			vanished++
		case err != nil:
			t.Fatal(err)
		case string(got) != "x":
			t.Fatalf("file holds %q; want x", got)
		default:
			kept++
		}
		if _, err := m.Stat("/d"); err != nil {
			t.Fatalf("a synced directory entry is gone: %v", err)
		}
	})
	if vanished == 0 || kept == 0 {
		t.Errorf("vanished %d, kept %d times; want both to happen", vanished, kept)
	}
}

func TestCrashMayDropAnUnsyncedDirectoryWithAllBeneathIt(t *testing.T) {
	var vanished int
	crashMany(t, func(m *Mem) {
		ok(m.MkdirAll("/a/b"))
		ok(m.SyncDir("/a"))
		f := must(m.Create("/a/b/f"))
		ok(f.Sync())
		ok(m.SyncDir("/a/b"))
		// "/" is never synced, so /a may vanish and take b and f with it.
	}, func(t *testing.T, seed uint64, m *Mem) {
		_, errA := m.Stat("/a")
		_, errF := m.Stat("/a/b/f")
		if errA == nil && errF != nil {
			t.Fatalf("/a survived but /a/b/f did not: %v", errF)
		}
		if errA != nil {
			vanished++
		}
	})
	if vanished == 0 {
		t.Error("an unsynced directory never vanished")
	}
}

func TestSyncedDirectoriesSurviveEveryCrash(t *testing.T) {
	crashMany(t, func(m *Mem) {
		ok(MkdirAllSync(m, "/a/b/c"))
		f := must(m.Create("/a/b/c/f"))
		must(f.Write([]byte("x")))
		ok(f.Sync())
		ok(m.SyncDir("/a/b/c"))
	}, func(t *testing.T, seed uint64, m *Mem) {
		wantContent(t, m, "/a/b/c/f", "x")
	})
}

func TestCrashTruncationIsAllOrNothing(t *testing.T) {
	crashMany(t, func(m *Mem) {
		f := must(m.Create("/f"))
		must(f.Write([]byte("line\ntorn")))
		ok(f.Sync())
		ok(m.SyncDir("/"))
		ok(f.Truncate(5))
		must(f.Write([]byte("next\n")))
	}, func(t *testing.T, seed uint64, m *Mem) {
		got := string(must(m.ReadFile("/f")))
		switch got {
		case "line\ntorn", "line\n", "line\nn", "line\nne", "line\nnex", "line\nnext", "line\nnext\n",
			"line\n\x00", "line\n\x00\x00", "line\n\x00\x00\x00", "line\n\x00\x00\x00\x00", "line\n\x00\x00\x00\x00\x00",
			"line\nn\x00", "line\nn\x00\x00", "line\nn\x00\x00\x00", "line\nn\x00\x00\x00\x00",
			"line\nne\x00", "line\nne\x00\x00", "line\nne\x00\x00\x00",
			"line\nnex\x00", "line\nnex\x00\x00", "line\nnext\x00":
		default:
			t.Fatalf("file holds %q after a crash", got)
		}
	})
}

func TestCrashRenameWithinADirectoryIsAtomic(t *testing.T) {
	crashMany(t, func(m *Mem) {
		f := must(m.Create("/a"))
		ok(f.Sync())
		ok(m.SyncDir("/"))
		ok(m.Rename("/a", "/b"))
	}, func(t *testing.T, seed uint64, m *Mem) {
		_, errA := m.Stat("/a")
		_, errB := m.Stat("/b")
		if (errA == nil) == (errB == nil) {
			t.Fatalf("after a crash /a: %v, /b: %v; want exactly one", errA, errB)
		}
	})
}

func TestCrashIsReproducibleAndSettles(t *testing.T) {
	setup := func() *Mem {
		m := NewMem()
		for i := range 5 {
			dir := fmt.Sprintf("/d%d", i)
			ok(m.MkdirAll(dir))
			for j := range 5 {
				f := must(m.Create(fmt.Sprintf("%s/f%d", dir, j)))
				for k := range 4 {
					must(f.Write([]byte(fmt.Sprintf("write %d\n", k))))
					if k == 1 {
						ok(f.Sync())
					}
				}
			}
			if i%2 == 0 {
				ok(m.SyncDir(dir))
			}
		}
		return m
	}
	snapshot := func(m *Mem) string {
		var b bytes.Buffer
		for i := range 5 {
			for j := range 5 {
				name := fmt.Sprintf("/d%d/f%d", i, j)
				got, err := m.ReadFile(name)
				fmt.Fprintf(&b, "%s %q %v\n", name, got, err)
			}
		}
		return b.String()
	}
	for seed := range uint64(50) {
		a, b := setup(), setup()
		a.Crash(seeded(seed))
		b.Crash(seeded(seed))
		if sa, sb := snapshot(a), snapshot(b); sa != sb {
			t.Fatalf("seed %d: two crashes with the same seed differ:\n%s\n%s", seed, sa, sb)
		}
		before := snapshot(a)
		a.Crash(seeded(seed + 1000))
		if after := snapshot(a); after != before {
			t.Fatalf("seed %d: a second crash changed what the first left:\n%s\n%s", seed, before, after)
		}
	}
}

func TestHandlesDieInACrash(t *testing.T) {
	m := NewMem()
	f := must(m.Create("/f"))
	m.Crash(seeded(1))
	if _, err := f.Write([]byte("x")); !errors.Is(err, ErrCrashed) {
		t.Errorf("Write through a handle from before the crash = %v; want ErrCrashed", err)
	}
}

// TestLocksDieInACrash: the processes that held locks are gone after a crash, and so are their
// locks; an Unlock from before it does not release a lock taken after it.
func TestLocksDieInACrash(t *testing.T) {
	m := NewMem()
	m.SetHolder(Holder{PID: 7, Command: "first"})
	old := must(m.Lock("/record.lock"))
	m.SetHolder(Holder{PID: 8, Command: "second"})
	if _, err := m.Lock("/record.lock"); err == nil || !strings.Contains(err.Error(), "pid 7 (first)") {
		t.Fatalf("Lock while pid 7 holds = %v; want a refusal naming it", err)
	}
	m.Crash(seeded(1))
	if _, held, _ := m.Probe("/record.lock"); held {
		t.Error("a lock survived the crash")
	}
	l := must(m.Lock("/record.lock"))
	ok(old.Unlock())
	if h, held, _ := m.Probe("/record.lock"); !held || h.PID != 8 {
		t.Errorf("after a stale Unlock, Probe = %+v, %v; want held by pid 8", h, held)
	}
	ok(l.Unlock())
}

func TestFailSyncFailsOnceAndMakesNothingDurable(t *testing.T) {
	boom := errors.New("EIO")
	m := NewMem()
	f := must(m.Create("/f"))
	ok(m.SyncDir("/"))
	must(f.Write([]byte("x")))
	m.FailSync("/f", boom)
	if err := f.Sync(); !errors.Is(err, boom) {
		t.Fatalf("Sync = %v; want %v", err, boom)
	}
	if err := f.Sync(); err != nil {
		t.Fatalf("the fault fired twice: %v", err)
	}

	m.FailSync("/", boom)
	if err := m.SyncDir("/"); !errors.Is(err, boom) {
		t.Fatalf("SyncDir = %v; want %v", err, boom)
	}
}

func TestFailWriteKeepsAPrefix(t *testing.T) {
	boom := errors.New("ENOSPC")
	m := NewMem()
	f := must(m.Create("/f"))
	m.FailWrite("/f", 3, boom)
	n, err := f.Write([]byte("abcdef"))
	if n != 3 || !errors.Is(err, boom) {
		t.Fatalf("Write = %d, %v; want 3, %v", n, err, boom)
	}
	wantContent(t, m, "/f", "abc")
}

// TestMemConcurrent is for the race detector: handles and the filesystem used from many
// goroutines at once, with crashes in between.
func TestMemConcurrent(t *testing.T) {
	m := NewMem()
	ok(MkdirAllSync(m, "/d"))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			name := fmt.Sprintf("/d/f%d", g)
			f, err := m.Create(name)
			if err != nil {
				t.Error(err)
				return
			}
			buf := make([]byte, 4)
			for range 200 {
				_, _ = f.Write([]byte("data"))
				_ = f.Sync()
				_, _ = f.ReadAt(buf, 0)
				_, _ = m.Stat(name)
				_ = m.SyncDir("/d")
			}
		})
	}
	wg.Go(func() {
		for i := range 20 {
			m.Crash(seeded(uint64(i)))
		}
	})
	wg.Wait()
}
