package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestBenchTurns runs rein bench turns on a few turns, with and without rein's default sandbox,
// and checks that it prints every line of the breakdown and of the floor, each with its three
// percentiles. What the figures are is the machine's business; that they are there is the test.
func TestBenchTurns(t *testing.T) {
	for _, args := range [][]string{{"--sandbox", "off"}, nil} {
		sb := newSandbox(t)
		res := sb.rein(t, append([]string{"bench", "turns", "--turns", "4"}, args...)...)
		if res.code != 0 {
			t.Fatalf("rein bench turns %v: %s", args, res)
		}
		if !strings.Contains(res.stdout, "rein bench turns: 4 tool turns") {
			t.Errorf("no header naming the 4 turns:\n%s", res.stdout)
		}
		for _, name := range []string{"turn", "turn less the simulator", "provider wait", "to the simulator", "simulator", "back to rein", "encode", "validate", "commit",
			"tool start", "tool run", "results", "other", "bash -c 'echo x'", "fsync", "loopback HTTP", "a page's first touch"} {
			row := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(name) + `\s+(\d+\.\d{3})\s+(\d+\.\d{3})\s+(\d+\.\d{3})$`)
			if !row.MatchString(res.stdout) {
				t.Errorf("no %q row with p50, p90 and p99:\n%s", name, res.stdout)
			}
		}
		if !regexp.MustCompile(`(?m)^\s*sum of the p50s\s+\d+\.\d{3}$`).MatchString(res.stdout) {
			t.Errorf("no sum of the floor's medians:\n%s", res.stdout)
		}
		// The CPU split: the run's, rein's own within it (from its trace) and its commands', and
		// the simulator's; rein's own is some of the run's, not all of it (bash ran too).
		// Each with the pages it touched first: rein's own some, the run's more.
		cpu := map[string]float64{}
		faults := map[string]int{}
		for _, name := range []string{"the rein run", "rein itself", "its commands", "the simulator"} {
			m := regexp.MustCompile(`(?m)^\s*` + name + `\s+(\d+\.\d{3})\s+\(user \d+\.\d{3}, system \d+\.\d{3}; (-?\d+) page faults\)$`).FindStringSubmatch(res.stdout)
			if m == nil {
				t.Errorf("no CPU row %q:\n%s", name, res.stdout)
				continue
			}
			cpu[name], _ = strconv.ParseFloat(m[1], 64)
			faults[name], _ = strconv.Atoi(m[2])
		}
		if own, run := faults["rein itself"], faults["the rein run"]; own <= 0 || own >= run {
			t.Errorf("rein's own page faults %d a turn, the run's %d: want some of them", own, run)
		}
		if own, run := cpu["rein itself"], cpu["the rein run"]; own <= 0 || own >= run {
			t.Errorf("rein's own CPU %.3f ms a turn, the run's %.3f: want some of it", own, run)
		}
	}
}

// TestSplitTurns: a traced run's marks become tool turns from one send to the next, and a turn
// that ran no command (the closing reply) is not one.
func TestSplitTurns(t *testing.T) {
	base := time.Unix(1000, 0)
	var marks []traceMark
	at := 0
	add := func(name string, ms int) {
		at += ms
		marks = append(marks, traceMark{name, base.Add(time.Duration(at) * time.Millisecond)})
	}
	for range 2 {
		add("encode", 0)
		add("validate", 1)
		add("validated", 2)
		add("send", 1)
		add("received", 3)
		add("commit", 1)
		add("committed", 2)
		add("tool", 1)
		add("spawned", 4)
		add("tool_done", 5)
		add("results", 1)
	}
	add("encode", 1)
	add("validate", 1)
	add("validated", 1)
	add("send", 1)
	add("received", 1)
	turns := splitTurns(marks)
	if len(turns) != 2 {
		t.Fatalf("%d turns, want 2", len(turns))
	}
	ms := time.Millisecond
	want := turnTimes{turn: 21 * ms, wait: 3 * ms, encode: 1 * ms, validate: 2 * ms, commit: 2 * ms, start: 4 * ms, run: 5 * ms, results: 1 * ms,
		sentAt: base.Add(4 * ms), receivedAt: base.Add(7 * ms)}
	if turns[0] != want {
		t.Errorf("first turn %+v, want %+v", turns[0], want)
	}
	if got := turns[0].other(); got != 3*ms {
		t.Errorf("other %v, want 3ms", got)
	}
	if got := pct([]time.Duration{5, 1, 4, 2, 3}, 50); got != 3 {
		t.Errorf("p50 of 1..5 is %v", got)
	}
	if got := pct([]time.Duration{5, 1, 4, 2, 3}, 99); got != 5 {
		t.Errorf("p99 of 1..5 is %v", got)
	}
}

// TestOneWillDo: rein's own code runs on one processor only where the runtime has two or fewer
// and the person did not set GOMAXPROCS.
func TestOneWillDo(t *testing.T) {
	for _, c := range []struct {
		env   string
		procs int
		want  bool
	}{{"", 1, true}, {"", 2, true}, {"", 3, false}, {"", 64, false}, {"2", 2, false}, {"8", 2, false}} {
		if got := oneWillDo(c.env, c.procs); got != c.want {
			t.Errorf("GOMAXPROCS=%q, %d processors: one %v, want %v", c.env, c.procs, got, c.want)
		}
	}
}
