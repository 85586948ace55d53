package journal

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/fsys"
)

var (
	seedFlag = flag.Uint64("seed", 0, "run TestCrash with this one seed only")
	runsFlag = flag.Int("runs", 3000, "how many seeds TestCrash runs")
)

// TestCrash appends random real records, syncing at random points, crashes the filesystem, and
// opens the record again, several times over. A crash only ever leaves a torn tail: Open must
// never refuse, every line synced before the crash must be there, and the lines there must be a
// prefix of those appended. Rerun a failure with -seed=N.
func TestCrash(t *testing.T) {
	var st crashStats
	if *seedFlag != 0 {
		if err := crashRun(t, *seedFlag, &st); err != nil {
			t.Fatalf("seed %d: %v", *seedFlag, err)
		}
		return
	}
	runs := *runsFlag
	if testing.Short() {
		runs /= 10
	}
	base := uint64(time.Now().UnixNano())
	t.Logf("seeds %d to %d (rerun one with -seed=N)", base, base+uint64(runs)-1)
	for i := range uint64(runs) {
		seed := base + i
		if err := crashRun(t, seed, &st); err != nil {
			t.Fatalf("seed %d: %v\nrerun: go test ./internal/journal -run 'TestCrash$' -seed=%d", seed, err, seed)
		}
	}
	t.Logf("%+v", st)
	// The runs must have met what they are for, or they prove nothing.
	if st.tornTails == 0 || st.zeroTails == 0 || st.unsyncedLost == 0 || st.unsyncedKept == 0 || st.interrupted == 0 {
		t.Errorf("the runs missed a case: %+v", st)
	}
}

// crashStats counts what the crashes did, to show the runs cover what they claim to.
type crashStats struct {
	crashes, tornTails, zeroTails, unsyncedLost, unsyncedKept, interrupted int
}

// crashRun is one seeded run: a few lives of a session, each ended by a crash.
func crashRun(t *testing.T, seed uint64, st *crashStats) error {
	rng := rand.New(rand.NewPCG(seed, 0xc4a5))
	m := fsys.NewMem()
	const dir = "/state/sessions/p/s"
	w, err := Create(m, dir)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	name := w.Path()
	var appended [][]byte  // every line the current file may hold, in order
	var quarantined []byte // what .torn held when the last Open returned: durable since
	for life := range 1 + rng.IntN(4) {
		durable := len(appended) // lines synced so far
		for range rng.IntN(40) {
			line := encode(t, w.Next(), rng.IntN(300))
			if _, err := w.Append(line); err != nil {
				return fmt.Errorf("life %d: append: %w", life, err)
			}
			appended = append(appended, line)
			if rng.IntN(4) == 0 {
				if err := w.Sync(); err != nil {
					return fmt.Errorf("life %d: sync: %w", life, err)
				}
				durable = len(appended)
			}
		}
		m.Crash(rng)
		st.crashes++

		// Sometimes the first Open after the crash fails part way (and the machine crashes
		// again), to show that recovery itself is safe to interrupt.
		if rng.IntN(4) == 0 {
			failing := []string{name, name + TornSuffix, dir}[rng.IntN(3)]
			m.FailSync(failing, errors.New("injected EIO"))
			st.interrupted++
			held := readFile(t, m, name)
			if w, _, err := Open(m, name, decode); err == nil {
				w.Close()
			}
			m.FailSync(failing, nil) // disarm it, if Open never reached it
			m.Crash(rng)
			// Whatever the interrupted Open trimmed from the record must be in .torn.
			now := readFile(t, m, name)
			torn, _ := m.ReadFile(name + TornSuffix)
			if !bytes.HasPrefix(held, now) {
				return fmt.Errorf("life %d: an interrupted Open changed the record's lines", life)
			}
			if trimmed := held[len(now):]; !bytes.HasSuffix(torn, trimmed) {
				return fmt.Errorf("life %d: an interrupted Open trimmed %d bytes that are not in .torn", life, len(trimmed))
			}
		}

		before := readFile(t, m, name)
		tornBefore, _ := m.ReadFile(name + TornSuffix)
		if !bytes.HasPrefix(tornBefore, quarantined) {
			return fmt.Errorf("life %d: the crash took bytes from .torn: %d were there, %d are", life, len(quarantined), len(tornBefore))
		}
		var rep Report
		w, rep, err = Open(m, name, decode)
		if err != nil {
			return fmt.Errorf("life %d: open after a crash: %w", life, err)
		}
		got := readFile(t, m, name)
		if int(rep.Lines) < durable {
			return fmt.Errorf("life %d: %d lines after the crash; %d were synced", life, rep.Lines, durable)
		}
		if int(rep.Lines) > len(appended) || !bytes.Equal(got, join(appended[:rep.Lines]...)) {
			return fmt.Errorf("life %d: the record's %d lines are not a prefix of the %d appended", life, rep.Lines, len(appended))
		}
		if !bytes.Equal(before, join(got, before[len(got):])) || int64(len(before)-len(got)) != rep.Torn {
			return fmt.Errorf("life %d: Open trimmed %d bytes; it reported %d torn", life, len(before)-len(got), rep.Torn)
		}
		tornNow, _ := m.ReadFile(name + TornSuffix)
		if !bytes.Equal(tornNow, join(tornBefore, before[len(got):])) {
			return fmt.Errorf("life %d: .torn is not what it held plus the torn tail", life)
		}
		quarantined = tornNow
		if rep.Torn > 0 {
			st.tornTails++
			if bytes.Count(before[len(got):], []byte{0}) == int(rep.Torn) {
				st.zeroTails++
			}
		}
		if int(rep.Lines) < len(appended) {
			st.unsyncedLost++
		}
		if int(rep.Lines) > durable {
			st.unsyncedKept++
		}
		appended = appended[:rep.Lines]
	}
	return w.Close()
}
