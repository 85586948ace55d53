package main

// One writer per session across processes, tested with real processes: a small writer (this test
// binary run as a child, opening the session through internal/session exactly as rein does) raced
// a thousand times, the real rein binary raced against itself, edits and doctor against a working
// `rein run`, SIGKILL of a holder, and a closed standard output.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// writerEnv names the record a child of this test binary opens as a writer (lockWriter).
const writerEnv = "REIN_TEST_WRITER"

// lockWriter is the child side of the writer races: it opens the session at path through
// session.Open, as rein does. Refused, it prints "refused\t<the refusal>" and exits 3. Otherwise it
// prints "opened <pid>", commits a record, holds the session until its standard input closes,
// commits a second record, closes and exits 0.
func lockWriter(path string) int {
	s, _, err := session.Open(path, session.Options{})
	if err != nil {
		var he *journal.HeldError
		if errors.As(err, &he) {
			fmt.Printf("refused\t%s\n", strings.ReplaceAll(err.Error(), "\n", " "))
			return 3
		}
		fmt.Printf("error\t%v\n", err)
		return 1
	}
	pid := os.Getpid()
	if err := s.Commit(&record.Renamed{Title: fmt.Sprintf("writer %d opened", pid)}); err != nil {
		fmt.Printf("error\t%v\n", err)
		return 1
	}
	fmt.Printf("opened %d\n", pid)
	io.Copy(io.Discard, os.Stdin)
	if err := s.Commit(&record.Renamed{Title: fmt.Sprintf("writer %d done", pid)}); err != nil {
		fmt.Printf("error\t%v\n", err)
		return 1
	}
	if err := s.Close(); err != nil {
		fmt.Printf("error\t%v\n", err)
		return 1
	}
	return 0
}

// writer is a running lockWriter.
type writer struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	first chan string // its first line
}

func startWriter(t testing.TB, path string) *writer {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), writerEnv+"="+path)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &writer{cmd: cmd, in: in, first: make(chan string, 1)}
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		w.first <- strings.TrimSpace(line)
		io.Copy(io.Discard, out)
	}()
	return w
}

// line waits for the writer's first line.
func (w *writer) line(t testing.TB) string {
	t.Helper()
	select {
	case l := <-w.first:
		return l
	case <-time.After(time.Minute):
		w.cmd.Process.Kill()
		t.Fatalf("writer %d said nothing within a minute", w.cmd.Process.Pid)
		return ""
	}
}

// finish closes the writer's input and waits for it, returning its exit code.
func (w *writer) finish(t testing.TB) int {
	t.Helper()
	w.in.Close()
	err := w.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// newLockSession creates a session for the races to fight over and returns its record's path.
func newLockSession(t testing.TB, dir string) string {
	t.Helper()
	s, err := session.Create(dir, session.Options{}, &record.SessionStarted{Session: filepath.Base(dir), Provider: "sim", Model: "sim-1", ContextWindow: 1000, Cwd: dir, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// admissible replays a record read-only and returns its state, failing the test on a refusal.
func admissible(t testing.TB, path string) *fold.State {
	t.Helper()
	st, rep, err := session.Replay(nil, path)
	if err != nil {
		t.Fatalf("the record is not admissible: %v", err)
	}
	if rep.Torn != 0 {
		t.Fatalf("the record has a %d-byte torn tail", rep.Torn)
	}
	return st
}

// TestWriterRaceStress starts two writers of one session at once, a thousand times (a hundred
// under -short), four sessions at a time: each time exactly one opens it and the other is refused
// with a message naming the winner's pid, and the record holds exactly the winners' records, in
// order. No race can end with two writers: the winner holds the session until the test has seen
// the loser's answer.
func TestWriterRaceStress(t *testing.T) {
	races, lanes := 1000, 4
	if testing.Short() {
		races = 100
	}
	const bound = 5 * time.Minute
	start := time.Now()
	deadline := start.Add(bound)
	var mu sync.Mutex
	var refusals, won [2]int // by which of the pair, started first or second
	var wg sync.WaitGroup
	errc := make(chan error, lanes)
	for lane := range lanes {
		path := newLockSession(t, filepath.Join(t.TempDir(), fmt.Sprintf("lane-%d", lane)))
		n := races / lanes
		if lane < races%lanes {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- func() error {
				for i := range n {
					if time.Now().After(deadline) {
						return fmt.Errorf("lane %d: race %d not run within %s", lane, i, bound)
					}
					pair := [2]*writer{startWriter(t, path), startWriter(t, path)}
					lines := [2]string{pair[0].line(t), pair[1].line(t)}
					win := -1
					for k, l := range lines {
						if strings.HasPrefix(l, "opened ") {
							if win >= 0 {
								return fmt.Errorf("lane %d race %d: two writers opened the session at once: %q", lane, i, lines)
							}
							win = k
						}
					}
					if win < 0 {
						return fmt.Errorf("lane %d race %d: neither writer opened the session: %q", lane, i, lines)
					}
					lose := 1 - win
					holder := fmt.Sprintf("pid %d (", pair[win].cmd.Process.Pid)
					if !strings.HasPrefix(lines[lose], "refused\t") || !strings.Contains(lines[lose], holder) || !strings.Contains(lines[lose], "one writer at a time") {
						return fmt.Errorf("lane %d race %d: the loser said %q; want a refusal naming %s", lane, i, lines[lose], holder)
					}
					if code := pair[win].finish(t); code != 0 {
						return fmt.Errorf("lane %d race %d: the winner exited %d", lane, i, code)
					}
					if code := pair[lose].finish(t); code != 3 {
						return fmt.Errorf("lane %d race %d: the loser exited %d; want 3", lane, i, code)
					}
					mu.Lock()
					refusals[lose]++
					won[win]++
					mu.Unlock()
				}
				// Exactly the winners wrote: session_started, then two records per race, each
				// pair from one writer.
				st := admissible(t, path)
				if got, want := st.Seq(), int64(1+2*n); got != want {
					return fmt.Errorf("lane %d: %d records after %d races; want %d", lane, got, n, want)
				}
				return checkPairs(path)
			}()
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	t.Logf("%d races in %s (%.1f ms a race, %d lanes): %d refusals (%d of the writer started first, %d of the second), never two writers",
		races, took.Round(time.Millisecond), float64(took.Milliseconds())/float64(races), lanes, refusals[0]+refusals[1], refusals[0], refusals[1])
	if refusals[0]+refusals[1] != races {
		t.Errorf("%d refusals in %d races", refusals[0]+refusals[1], races)
	}
}

// checkPairs checks that a race session's records after the first come in pairs, each pair
// written by one writer ("writer N opened", then "writer N done"): no writer's records interleave
// with another's.
func checkPairs(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	recs, _, err := replay(b)
	if err != nil {
		return err
	}
	for i := 1; i+1 < len(recs); i += 2 {
		a, okA := recs[i].Body.(*record.Renamed)
		z, okZ := recs[i+1].Body.(*record.Renamed)
		if !okA || !okZ {
			return fmt.Errorf("records %d and %d are %s and %s", recs[i].Seq, recs[i+1].Seq, recs[i].Kind(), recs[i+1].Kind())
		}
		who, ok := strings.CutSuffix(a.Title, " opened")
		if !ok || z.Title != who+" done" {
			return fmt.Errorf("records %d and %d are %q then %q: two writers interleaved", recs[i].Seq, recs[i+1].Seq, a.Title, z.Title)
		}
	}
	return nil
}

// TestKilledHolderReleasesAtOnce: a writer killed with SIGKILL holds nothing: the next opener
// takes the session as soon as the kernel has closed the dead process's files, with no stale lock
// to clear. Measured from the kill to the first Open that succeeds, polling without a pause.
func TestKilledHolderReleasesAtOnce(t *testing.T) {
	path := newLockSession(t, filepath.Join(t.TempDir(), "s"))
	const rounds = 30
	var lat []time.Duration
	var refusedMax int
	for i := range rounds {
		w := startWriter(t, path)
		if l := w.line(t); !strings.HasPrefix(l, "opened ") {
			t.Fatalf("round %d: the writer said %q", i, l)
		}
		// Held: an Open from here is refused, naming it.
		_, _, err := session.Open(path, session.Options{})
		if he := (*journal.HeldError)(nil); !errors.As(err, &he) || he.Holder.PID != w.cmd.Process.Pid {
			t.Fatalf("round %d: Open while the writer holds = %v", i, err)
		}
		killed := time.Now()
		if err := w.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		refused := 0
		for {
			s, _, err := session.Open(path, session.Options{})
			if err == nil {
				lat = append(lat, time.Since(killed))
				if err := s.Commit(&record.Renamed{Title: fmt.Sprintf("after kill %d", i)}); err != nil {
					t.Fatal(err)
				}
				s.Close()
				break
			}
			if !errors.As(err, new(*journal.HeldError)) {
				t.Fatalf("round %d: Open after the kill = %v", i, err)
			}
			refused++
			if time.Since(killed) > 10*time.Second {
				t.Fatalf("round %d: still held 10s after SIGKILL: %v", i, err)
			}
		}
		refusedMax = max(refusedMax, refused)
		w.finish(t)
		if _, held, _ := journal.Live(fsys.OS{}, path); held {
			t.Fatalf("round %d: held after the new writer closed", i)
		}
	}
	admissible(t, path)
	slices.Sort(lat)
	t.Logf("takeover after SIGKILL, %d rounds: p50 %s, p90 %s, max %s (Opens refused while the dead process was still exiting: at most %d)",
		rounds, lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)-1], refusedMax)
	if lat[len(lat)-1] > 2*time.Second {
		t.Errorf("the slowest takeover took %s", lat[len(lat)-1])
	}
}

// TestRefusedWhileRunning: while `rein run` works on a session (its tool sleeping), `rein resume`,
// `rein clear`, `rein rewind` and `rein doctor --repair` are refused with exit 4, naming the
// run's pid and saying what to do, and change nothing; `rein doctor` calls the record live, held by
// that pid, not "left in flight", and so do `rein show` and `rein sessions`; `rein fork` reads it. Once the run is stopped the
// record is settled and the session goes on.
func TestRefusedWhileRunning(t *testing.T) {
	sb := newSandbox(t)
	c, _ := longTool(t, sb, "")
	pid := c.cmd.Process.Pid
	paths := sb.records(t)
	if len(paths) != 1 {
		t.Fatalf("records: %v", paths)
	}
	path := paths[0]
	id := filepath.Base(filepath.Dir(path))
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	holder := fmt.Sprintf("pid %d (rein run ", pid)
	for _, args := range [][]string{
		append([]string{"resume", id, "are you done?"}, simArgs("")...),
		{"clear", id},
		{"rewind", id, "1"},
		{"doctor", "--repair", path},
	} {
		res := sb.rein(t, args...)
		if res.code != exitHeld || !strings.Contains(res.stderr, holder) || !strings.Contains(res.stderr, "one writer at a time") ||
			!strings.Contains(res.stderr, fmt.Sprintf("kill -INT %d", pid)) {
			t.Errorf("rein %s while the run works:\n%s\nwant exit %d naming %s", strings.Join(args, " "), res, exitHeld, holder)
		}
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("a refused writer changed the record")
	}
	for _, args := range [][]string{{"doctor", path}, {"doctor", "--dry-run", path}} {
		res := sb.rein(t, args...)
		if res.code != 0 || !strings.HasPrefix(res.stdout, "admissible") || !strings.Contains(res.stdout, "live: held by "+holder) ||
			strings.Contains(res.stdout, "left in flight") {
			t.Errorf("rein %s while the run works:\n%s\nwant admissible, live, held by %s", strings.Join(args, " "), res, holder)
		}
	}
	if res := sb.rein(t, "show", id); res.code != 0 || !strings.Contains(res.stdout, "held by "+holder) {
		t.Errorf("show while the run works:\n%s", res)
	}
	if res := sb.rein(t, "sessions"); res.code != 0 || !strings.Contains(res.stdout, fmt.Sprintf("live (pid %d)", pid)) {
		t.Errorf("sessions while the run works:\n%s", res)
	}
	if res := sb.rein(t, "fork", id); res.code != 0 || !strings.Contains(res.stdout, "forked "+id) {
		t.Errorf("fork while the run works:\n%s", res)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("a reader changed the record")
	}

	c.cmd.Process.Signal(os.Interrupt)
	c.wait(t, 10*time.Second)
	if code := c.status.ExitStatus(); code != exitStopped {
		t.Fatalf("the run exited %d after SIGINT\n%s", code, c.stderr)
	}
	res := sb.rein(t, "doctor", path)
	if res.code != 0 || strings.Contains(res.stdout, "live") || strings.Contains(res.stdout, "in flight") {
		t.Fatalf("doctor after the run stopped:\n%s", res)
	}
	admissible(t, path)
	if res := sb.rein(t, "clear", id); res.code != 0 {
		t.Fatalf("clear after the run stopped:\n%s", res)
	}
	if res := sb.rein(t, append([]string{"resume", id, "hello again"}, simArgs("")...)...); res.code != 0 {
		t.Fatalf("resume after the run stopped:\n%s", res)
	}
	admissible(t, path)
}

// TestBinaryWritersRace races the real binary against itself: two `rein resume <id> "<prompt>"`
// started at once, a thousand times (a hundred under -short), four sessions at a time — or as
// many as fit in the budget on a slow machine, never fewer than a hundred: the machine's speed is
// not what the test asserts. Whichever opens the session first takes up its prompt and calls a
// tool that waits on a named pipe, so it holds the session until the test has seen the other's
// answer: the other is refused, every time, with exit 4 and a message naming the winner's pid.
// The test then lets the winner finish. Each session's record stays admissible, with exactly one
// exchange per race, every call answered.
func TestBinaryWritersRace(t *testing.T) {
	const least = 100
	races, lanes := 1000, 4
	if testing.Short() {
		races = least
	}
	const budget = 5 * time.Minute
	start := time.Now()
	deadline := start.Add(budget)
	var mu sync.Mutex
	var refusedBy [2]int // refusals of the process started first, second
	ran := 0
	var wg sync.WaitGroup
	errc := make(chan error, lanes)
	for lane := range lanes {
		sb := newSandbox(t)
		script := writeScript(t, t.TempDir(),
			map[string]any{"text": "Waiting for the gate.", "tool_calls": []any{bash("read line < gate.fifo; echo $line")}},
			map[string]any{"text": "Through the gate."},
		)
		if err := syscall.Mkfifo(filepath.Join(sb.ws, "gate.fifo"), 0o600); err != nil {
			t.Fatal(err)
		}
		if res := sb.rein(t, append([]string{"run"}, append(simArgs(""), "begin")...)...); res.code != 0 {
			t.Fatalf("first run:\n%s", res)
		}
		path := sb.records(t)[0]
		id := filepath.Base(filepath.Dir(path))
		n := races / lanes
		if lane < races%lanes {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- func() error {
				done := 0
				for i := range n {
					// Past the budget a lane stops, once its share of the least has run.
					if time.Now().After(deadline) && done >= (least+lanes-1)/lanes {
						break
					}
					loser, err := raceOnce(t, sb, id, script, fmt.Sprintf("race %d", i))
					if err != nil {
						return fmt.Errorf("lane %d race %d: %w", lane, i, err)
					}
					done++
					mu.Lock()
					refusedBy[loser]++
					ran++
					mu.Unlock()
				}
				n = done
				st := admissible(t, path)
				if st.InFlight() || !st.IsReady() {
					return fmt.Errorf("lane %d: the record is left in flight", lane)
				}
				b, _ := os.ReadFile(path)
				recs, _, err := replay(b)
				if err != nil {
					return err
				}
				prompts := 0
				for _, r := range recs {
					if u, ok := r.Body.(*record.UserPrompt); ok && strings.HasPrefix(u.Text, "race ") {
						prompts++
					}
				}
				if prompts != n {
					return fmt.Errorf("lane %d: %d race prompts recorded after %d races; want one a race", lane, prompts, n)
				}
				return checkCalls(recs, true)
			}()
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	if ran < races {
		t.Logf("the budget of %s ran %d races of %d: this machine is slow today", budget, ran, races)
	}
	t.Logf("%d real-binary races in %s (%.1f ms a race, %d lanes): %d refusals naming the winner (%d of the process started first, %d of the second), never two writers",
		ran, took.Round(time.Millisecond), float64(took.Milliseconds())/float64(ran), lanes, refusedBy[0]+refusedBy[1], refusedBy[0], refusedBy[1])
}

// raceOnce starts two `rein resume` of one session at once, waits for the refused one, lets the
// winner through its gate and waits for it; it returns which of the two was refused.
func raceOnce(t testing.TB, sb *sandbox, id, script, prompt string) (int, error) {
	var cs [2]*exec.Cmd
	var errs [2]*strings.Builder
	done := make(chan int, 2)
	var codes [2]int
	for k := range cs {
		cs[k] = exec.Command(reinBin(t), append([]string{"resume", id, fmt.Sprintf("%s, side %d", prompt, k)}, simArgs(script)...)...)
		cs[k].Dir, cs[k].Env = sb.ws, sb.env
		errs[k] = &strings.Builder{}
		cs[k].Stderr = errs[k]
	}
	for k, c := range cs {
		if err := c.Start(); err != nil {
			return 0, err
		}
		go func() {
			err := c.Wait()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				codes[k] = ee.ExitCode()
			} else if err != nil {
				codes[k] = -1
			}
			done <- k
		}()
	}
	ended := 0       // how many of the two have been seen to end
	kill := func() { // ends both and waits for those not yet seen to end (never one seen already)
		for _, c := range cs {
			c.Process.Kill()
		}
		for ; ended < 2; ended++ {
			<-done
		}
	}
	timeout := time.After(time.Minute)
	var first int
	select {
	case first = <-done:
		ended++
	case <-timeout:
		kill()
		return 0, errors.New("neither process ended within a minute")
	}
	if codes[first] != exitHeld {
		kill()
		return 0, fmt.Errorf("the first to end exited %d, not refused (%d): two writers?\n%s", codes[first], exitHeld, errs[first])
	}
	win := 1 - first
	if want := fmt.Sprintf("pid %d (rein resume ", cs[win].Process.Pid); !strings.Contains(errs[first].String(), want) ||
		!strings.Contains(errs[first].String(), "one writer at a time") {
		kill()
		return 0, fmt.Errorf("the refused one said\n%s\nwant a refusal naming %s", errs[first], want)
	}
	// Let the winner through its gate: opening the pipe waits for its tool to read it.
	gate := filepath.Join(sb.ws, "gate.fifo")
	opened := make(chan error, 1)
	go func() { opened <- os.WriteFile(gate, []byte("open\n"), 0o600) }()
	unblock := func() { // a reader of our own, so the write above returns
		if f, err := os.OpenFile(gate, os.O_RDWR, 0); err == nil {
			f.Close()
		}
		<-opened
	}
	select {
	case err := <-opened:
		if err != nil {
			kill()
			return 0, err
		}
	case <-done:
		ended++
		// The winner may end the moment its gate opens, before the write that opened it returns.
		select {
		case err := <-opened:
			if err != nil {
				return 0, err
			}
			if codes[win] != 0 {
				return 0, fmt.Errorf("the winner exited %d\n%s", codes[win], errs[win])
			}
			return first, nil
		case <-time.After(2 * time.Second):
		}
		unblock()
		return 0, fmt.Errorf("the winner ended before its gate opened (exit %d)\n%s", codes[win], errs[win])
	case <-timeout:
		kill()
		unblock()
		return 0, fmt.Errorf("the winner never reached its gate within a minute; it said\n%s", errs[win])
	}
	select {
	case <-done:
		ended++
	case <-timeout:
		kill()
		return 0, errors.New("the winner did not end within a minute")
	}
	if codes[win] != 0 {
		return 0, fmt.Errorf("the winner exited %d\n%s", codes[win], errs[win])
	}
	return first, nil
}

// TestClosedStdout: `rein run ... | head -1`, for real, in human and JSON output. Once head has
// gone, rein's next write to standard output finds the pipe closed: it stops the exchange as
// Ctrl-C would and exits 141; the record is settled (quiesced, cancelled), doctor admits it with
// nothing in flight, and `rein resume` goes on.
func TestClosedStdout(t *testing.T) {
	for _, mode := range []string{"human", "json"} {
		t.Run(mode, func(t *testing.T) {
			sb := newSandbox(t)
			words := strings.Repeat("word ", 200)
			script := writeScript(t, t.TempDir(),
				map[string]any{"text": "Looking first.\nThen working.", "tool_calls": []any{bash("for i in 1 2 3; do echo line $i; done; sleep 0.2")}},
				map[string]any{"text": words, "delay_ms": 5},
			)
			args := append([]string{"run"}, simArgs(script)...)
			if mode == "json" {
				args = append(args, "--json")
			}
			args = append(args, "talk at length")
			cmd := exec.Command("bash", append([]string{"-c", `"$0" "$@" | head -1; exit "${PIPESTATUS[0]}"`, reinBin(t)}, args...)...)
			cmd.Dir, cmd.Env = sb.ws, sb.env
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != exitPipeGone || !strings.Contains(errb.String(), "standard output was closed") {
				t.Fatalf("rein run | head -1: exit %d; want %d\n--- stdout\n%s--- stderr\n%s", code, exitPipeGone, out.String(), errb.String())
			}
			if n := strings.Count(out.String(), "\n"); n != 1 {
				t.Errorf("head printed %d lines", n)
			}
			path, recs, st := theRecord(t, sb)
			if st.InFlight() || !st.IsReady() {
				t.Fatalf("the record is left in flight after a closed stdout: %v", kinds(recs))
			}
			if q, _ := lastQuiesced(recs); q == nil || q.Reason != fold.Cancelled {
				t.Fatalf("the last exchange ended %+v; want quiesced cancelled", q)
			}
			if res := sb.rein(t, "doctor", path); strings.Contains(res.stdout, "in flight") || strings.Contains(res.stdout, "live") {
				t.Errorf("doctor after a closed stdout:\n%s", res)
			}
			id := filepath.Base(filepath.Dir(path))
			if res := sb.rein(t, append([]string{"resume", id, "again"}, simArgs("")...)...); res.code != 0 {
				t.Fatalf("resume after a closed stdout:\n%s", res)
			}
			admissible(t, path)
		})
	}
}

// kinds lists the kinds of recs.
func kinds(recs []record.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Kind())
	}
	return out
}

// TestKilledRunReleasesAtOnce: `rein run` killed with SIGKILL mid-tool leaves no lock behind (no
// child it started keeps the lock file open): the `rein resume` started the moment it is reaped
// opens the session at once and settles it (reason crashed).
func TestKilledRunReleasesAtOnce(t *testing.T) {
	sb := newSandbox(t)
	c, _ := longTool(t, sb, "")
	path := sb.records(t)[0]
	id := filepath.Base(filepath.Dir(path))
	killed := time.Now()
	c.cmd.Process.Signal(syscall.SIGKILL)
	c.wait(t, 10*time.Second)
	res := sb.rein(t, append([]string{"resume", id}, simArgs("")...)...)
	took := time.Since(killed)
	if res.code != 0 {
		t.Fatalf("resume right after SIGKILL:\n%s", res)
	}
	_, recs, _ := theRecord(t, sb)
	if q, _ := lastQuiesced(recs); q == nil || q.Reason != fold.Crashed {
		t.Fatalf("the killed exchange ended %+v; want quiesced crashed", q)
	}
	t.Logf("SIGKILL to a settled resume: %s (the resume process's whole run included)", took.Round(time.Millisecond))
}

// serveProc is a running `rein serve`.
type serveProc struct {
	c   *child
	api *client.Client
}

// startServe starts `rein serve` on the simulator in the sandbox and connects a client to it.
func startServe(t *testing.T, sb *sandbox) *serveProc {
	t.Helper()
	cmd := exec.Command(reinBin(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, simArgs("")...)...)
	cmd.Dir, cmd.Env = sb.ws, sb.env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, done: make(chan struct{}), stderr: newLogBuf()}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		c.status = cmd.ProcessState.Sys().(syscall.WaitStatus)
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			cmd.Process.Kill()
			<-c.done
		}
	})
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- l
		io.Copy(io.Discard, out)
	}()
	var l string
	select {
	case l = <-line:
	case <-time.After(30 * time.Second):
		t.Fatalf("rein serve printed nothing in 30s\n%s", c.stderr)
	}
	u, tok, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(l, "rein serve: ")), "/#token=")
	if !ok {
		t.Fatalf("rein serve printed %q", l)
	}
	return &serveProc{c: c, api: client.New(u, tok, nil)}
}

// TestSecondServe: a second `rein serve` on the same state lists the conversation the first one
// holds open as held by it, and refuses a send to it with 409 "held" naming the first host and
// the way to it (rein chat --connect); `rein resume` of it is refused the same way. Once the first
// host is gone, the second one takes the conversation up.
func TestSecondServe(t *testing.T) {
	sb := newSandbox(t)
	a := startServe(t, sb)
	ctx := context.Background()
	v, _, err := a.api.Create(ctx, client.NewOp(), "shared")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.api.Send(ctx, v.ID, api.Message{Op: client.NewOp(), Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	b := startServe(t, sb)
	pidA := a.c.cmd.Process.Pid
	vs, err := b.api.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].Held == nil || vs[0].Held.PID != pidA || !strings.Contains(vs[0].Held.Command, "rein serve") {
		t.Fatalf("the second host lists %+v; want the conversation held by pid %d (rein serve)", vs, pidA)
	}
	_, err = b.api.Send(ctx, v.ID, api.Message{Op: client.NewOp(), Text: "me too"})
	var ce *api.Error
	if !errors.As(err, &ce) || ce.Status != 409 || ce.Code != "held" || !strings.Contains(ce.Message, fmt.Sprintf("pid %d (rein serve", pidA)) ||
		!strings.Contains(ce.Message, "rein chat --connect") {
		t.Fatalf("a send through the second host = %v; want 409 held naming pid %d", err, pidA)
	}
	res := sb.rein(t, append([]string{"resume", v.ID, "me three"}, simArgs("")...)...)
	if res.code != exitHeld || !strings.Contains(res.stderr, fmt.Sprintf("pid %d (rein serve", pidA)) || !strings.Contains(res.stderr, "rein chat --connect") {
		t.Fatalf("rein resume of a conversation a host holds:\n%s", res)
	}

	a.c.cmd.Process.Signal(os.Interrupt)
	a.c.wait(t, 10*time.Second)
	vs, err = b.api.List(ctx)
	if err != nil || len(vs) != 1 || vs[0].Held != nil {
		t.Fatalf("after the first host stopped, the second lists %+v, %v; want it not held", vs, err)
	}
	if _, err := b.api.Send(ctx, v.ID, api.Message{Op: client.NewOp(), Text: "me too, now"}); err != nil {
		t.Fatalf("a send through the second host once the first is gone: %v", err)
	}
}
