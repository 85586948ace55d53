package fstool

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"
)

// seeded returns a random source, its seed printed (REIN_SEED replays one).
func seeded(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("REIN_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (rerun with REIN_SEED=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, 0))
}

// backtrack is the matcher match.go had before: correct, but exponential in the number of **.
// It is the reference the automaton is checked against.
func backtrack(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := range len(name) + 1 {
				if backtrack(pat, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// TestMatcherAgreesWithBacktracking: on random patterns and paths, the automaton (whole-path and
// step by step down a walk) answers as the backtracking matcher does.
func TestMatcherAgreesWithBacktracking(t *testing.T) {
	rng := seeded(t)
	segs := []string{"**", "**", "*", "a", "b", "?", "a*", "*b", "[ab]"}
	names := []string{"a", "b", "ab", "ba", "aa"}
	pick := func(from []string, most int) []string {
		out := make([]string, rng.IntN(most+1))
		for i := range out {
			out[i] = from[rng.IntN(len(from))]
		}
		return out
	}
	ctx := context.Background()
	for range 20_000 {
		pat := pick(segs, 8)
		if len(pat) == 0 {
			pat = []string{"a"}
		}
		name := pick(names, 9)
		want := backtrack(pat, name)
		if got := matchSegs(pat, name); got != want {
			t.Fatalf("matchSegs(%q, %q) = %v, the backtracking matcher says %v", pat, name, got, want)
		}
		// The pattern as glob compiles it (consecutive ** counted once), stepped along the path.
		p, err := compilePattern(strings.Join(pat, "/"))
		if err != nil {
			t.Fatal(err)
		}
		m := newWalkMatcher(p)
		for depth := 1; depth <= len(name); depth++ {
			match, dead, err := m.at(ctx, depth, name[depth-1])
			if err != nil {
				t.Fatal(err)
			}
			if want := backtrack(pat, name[:depth]); match != want {
				t.Fatalf("%q stepped to %q matches %v, the backtracking matcher says %v", pat, name[:depth], match, want)
			}
			if dead && backtrack(pat, name) {
				t.Fatalf("%q is dead at %q, yet matches %q", pat, name[:depth], name)
			}
		}
	}
}

// TestGrepPiecesAgreeWithLines: grep's search in bounded pieces (blocks of whole lines tested
// first as one, and lines longer than a piece matched as a stream) finds exactly the lines a plain
// line-by-line match finds, whatever the piece size.
func TestGrepPiecesAgreeWithLines(t *testing.T) {
	rng := seeded(t)
	patterns := []string{`a`, `^a`, `a$`, `b+a`, `^$`, `\bab\b`, `(?i)AB`, `a.b`, `\s$`, `^\s*b`, `\Aa`, `b\z`, `aaaaaaaa`, `(a|b)*c`}
	words := []string{"a", "b", "ab", "ba", " ", "c", "\n", "\n", "\r\n", strings.Repeat("ab", 70)}
	ctx := context.Background()
	for run := range 3000 {
		var b strings.Builder
		for range rng.IntN(60) {
			b.WriteString(words[rng.IntN(len(words))])
		}
		data := []byte(b.String())
		pattern := patterns[rng.IntN(len(patterns))]
		st, err := compileGrep(pattern)
		if err != nil {
			t.Fatal(err)
		}
		st.chunk = 1 + rng.IntN(200)

		var want []int
		for n, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
			if len(data) > 0 && st.re.Match(bytes.TrimSuffix(line, []byte("\r"))) {
				want = append(want, n+1)
			}
		}
		if err := st.search(ctx, "f", data); err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, hit := range strings.Split(strings.TrimSuffix(st.out.String(), "\n"), "\n") {
			var n int
			if hit != "" {
				fmt.Sscanf(strings.TrimPrefix(hit, "f:"), "%d:", &n)
				got = append(got, n)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || st.hits != len(want) {
			t.Fatalf("run %d: %q in %q with pieces of %d bytes: lines %v (%d hits), want %v", run, pattern, data, st.chunk, got, st.hits, want)
		}
	}
}
