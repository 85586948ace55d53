package agent

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"
)

var skippedMarker = regexp.MustCompile(`\[… (\d+) (?:more )?bytes not shown live[^\]]*\]\n`)

// accounted splits what a liveOutput published into the output shown and the bytes its markers
// say were skipped.
func accounted(pieces []string) (shown string, skipped int64) {
	all := strings.Join(pieces, "")
	for _, m := range skippedMarker.FindAllStringSubmatch(all, -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		skipped += n
	}
	return skippedMarker.ReplaceAllString(all, ""), skipped
}

// Every byte written is either shown or counted in a marker, pieces come at most liveRate a
// second, none is larger than a chunk and its marker, and what is shown is the output in order.
func TestLiveOutputAccountsForEveryByte(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		synctest.Test(t, func(t *testing.T) {
			var pieces []string
			var at []time.Time
			l := newLiveOutput(func(s string) { pieces = append(pieces, s); at = append(at, time.Now()) })
			var written strings.Builder
			n := rapid.IntRange(1, 200).Draw(rt, "writes")
			for i := range n {
				size := rapid.IntRange(1, 3*liveChunk).Draw(rt, "size")
				line := strings.Repeat(string(rune('a'+i%26)), size-1) + "\n"
				written.WriteString(line)
				l.Write([]byte(line))
				time.Sleep(time.Duration(rapid.IntRange(0, 120).Draw(rt, "ms")) * time.Millisecond)
			}
			l.Close()
			shown, skipped := accounted(pieces)
			if int64(len(shown))+skipped != int64(written.Len()) {
				rt.Fatalf("shown %d + skipped %d != written %d", len(shown), skipped, written.Len())
			}
			for i := 1; i < len(at); i++ {
				// Close may flush at once; every other piece keeps the pace.
				if i < len(at)-1 && at[i].Sub(at[i-1]) < liveEvery {
					rt.Fatalf("pieces %d and %d came %v apart, less than %v", i-1, i, at[i].Sub(at[i-1]), liveEvery)
				}
			}
			for i, p := range pieces {
				if len(p) > liveChunk+200 {
					rt.Fatalf("piece %d is %d bytes", i, len(p))
				}
			}
			if skipped == 0 && shown != written.String() {
				rt.Fatalf("nothing was skipped, yet what was shown is not what was written")
			}
		})
	})
}

// A write after a quiet moment is shown at once, not after a tick: the watcher sees a line as
// soon as it is written.
func TestLiveOutputShowsAQuietWriteAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The pacer's tick runs on a timer's goroutine: the pieces are read under a lock.
		var mu sync.Mutex
		var got []string
		l := newLiveOutput(func(s string) { mu.Lock(); got = append(got, s); mu.Unlock() })
		shown := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), got...) }
		l.Write([]byte("one\n"))
		if p := shown(); len(p) != 1 || p[0] != "one\n" {
			t.Fatalf("pieces after the first write: %q", shown())
		}
		l.Write([]byte("two\n")) // within liveEvery: waits for the tick
		if p := shown(); len(p) != 1 {
			t.Fatalf("a second write within %v was shown at once: %q", liveEvery, shown())
		}
		time.Sleep(liveEvery)
		synctest.Wait()
		if p := shown(); len(p) != 2 || p[1] != "two\n" {
			t.Fatalf("pieces after a tick: %q", shown())
		}
		time.Sleep(time.Second)
		l.Write([]byte("three\n"))
		if p := shown(); len(p) != 3 {
			t.Fatalf("a write after a quiet second waited: %q", shown())
		}
		l.Close()
		l.Write([]byte("after the end\n"))
		time.Sleep(time.Second)
		if p := shown(); len(p) != 3 {
			t.Fatalf("output after Close was shown: %q", shown())
		}
	})
}

// A call's live output stops after liveCallMax bytes, saying so, and Close counts the rest.
func TestLiveOutputStopsAtTheCallCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pieces []string
		l := newLiveOutput(func(s string) { pieces = append(pieces, s) })
		line := []byte(strings.Repeat("x", 1023) + "\n")
		total := 0
		for range 4 * liveCallMax / len(line) {
			l.Write(line)
			total += len(line)
			time.Sleep(liveEvery / 4)
		}
		l.Close()
		all := strings.Join(pieces, "")
		if !strings.Contains(all, "live output stops here") {
			t.Fatalf("no stop marker in %d bytes shown", len(all))
		}
		if len(all) > liveCallMax+liveChunk+400 {
			t.Fatalf("%d bytes shown, more than the cap %d and one piece", len(all), liveCallMax)
		}
		shown, skipped := accounted(pieces)
		stop := regexp.MustCompile(`\[… live output stops here[^\]]*\]\n`)
		shown = stop.ReplaceAllString(shown, "")
		if int64(len(shown))+skipped != int64(total) {
			t.Fatalf("shown %d + skipped %d != written %d", len(shown), skipped, total)
		}
	})
}

// A character split across writes is shown whole.
func TestLiveOutputKeepsCharactersWhole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pieces []string
		l := newLiveOutput(func(s string) { pieces = append(pieces, s) })
		b := []byte("é\n")
		l.Write(b[:1])
		time.Sleep(time.Second)
		l.Write(b[1:])
		l.Close()
		if strings.Join(pieces, "") != "é\n" {
			t.Fatalf("pieces %q", pieces)
		}
	})
}
