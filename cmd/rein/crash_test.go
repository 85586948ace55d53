package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
)

// crashSeed is the crash loop's fixed base seed; REIN_CRASH_SEED replaces it and REIN_CRASH_KILL
// runs only the kill with that number.
const crashSeed = 20261129

// tornKills counts the kills whose record had a torn tail to quarantine.
var tornKills atomic.Int64

const crashPrompt = "work through the steps in this workspace"

// crashScript is a long, varied session: streamed text, a batch of two calls, a write, a 429 and
// a 529 with short retry-afters, a stream cut after output began (retried from scratch), and
// commands that take a little time.
func crashScript(t testing.TB, dir string) string {
	return writeScript(t, dir,
		map[string]any{"text": "I will look around the workspace first, one step at a time.", "delay_ms": 4,
			"tool_calls": []any{bash("sleep 0.02; echo step 1")}},
		map[string]any{"status": 429, "retry_after_ms": 60},
		map[string]any{"thinking": map[string]any{"text": "Two independent steps; run both.", "signature": "c2lt"},
			"text": "Now two steps in one batch.", "delay_ms": 4,
			"tool_calls": []any{bash("sleep 0.03; echo step 2a"), bash("printf 'step 2b\\n'; sleep 0.02")}},
		map[string]any{"text": "Writing the notes down before the next step, slowly.", "delay_ms": 5,
			"cut": map[string]any{"after_deltas": 3}},
		map[string]any{"text": "Writing the notes down.", "delay_ms": 3,
			"tool_calls": []any{
				map[string]any{"name": "write_file", "arguments": map[string]any{"path": "notes.txt", "content": "step 3\n"}},
				bash("sleep 0.04; cat notes.txt"),
			}},
		map[string]any{"status": 529, "retry_after_ms": 40},
		map[string]any{"text": "Checking the result once more, with a longer look at everything that happened so far.", "delay_ms": 5,
			"tool_calls": []any{bash("sleep 0.02; ls; echo step 4")}},
		map[string]any{"text": "All steps ran: step 1, step 2a, step 2b, the notes, step 4. Done.", "delay_ms": 4},
	)
}

func simArgs(script string) []string {
	args := []string{"--provider", "sim", "--sim-delay", "0"}
	if script != "" {
		args = append(args, "--sim-script", script)
	}
	return args
}

// TestCrashLoop kills a real `rein run` with SIGKILL at seeded moments and checks each time that
// `rein resume` settles the session without losing, repeating or rewriting a line, that doctor
// calls it admissible, and that the session then goes on.
func TestCrashLoop(t *testing.T) {
	reinBin(t)
	began := time.Now()
	seed, only := crashEnv(t)
	kills := 100
	if testing.Short() {
		kills = 10
	}
	t.Logf("crash loop: seed %d, %d kills (rerun one with REIN_CRASH_SEED=%d REIN_CRASH_KILL=<n>)", seed, kills, seed)

	scriptDir := t.TempDir()
	script := crashScript(t, scriptDir)

	// One uninterrupted run: it must complete, and its length bounds where kills are aimed.
	sb := newSandbox(t)
	t0 := time.Now()
	res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "--json", crashPrompt)...)
	if res.code != 0 {
		t.Fatalf("the uninterrupted run failed:\n%s", res)
	}
	paths := sb.records(t)
	if len(paths) != 1 {
		t.Fatalf("want one record, found %v", paths)
	}
	full, _ := os.ReadFile(paths[0])
	recs, st, err := replay(full)
	if err != nil || st.InFlight() || !st.IsReady() {
		t.Fatalf("the uninterrupted run's record: %v (in flight %v)", err, st.InFlight())
	}
	if err := checkCalls(recs, true); err != nil {
		t.Fatal(err)
	}
	n, length := len(recs), time.Since(t0)
	t.Logf("an uninterrupted run: %d records, %d protocol, %s", n, st.Protocol(), length.Round(time.Millisecond))

	var mu sync.Mutex
	hist := map[string]int{}
	var attempts, killed int
	t.Run("kills", func(t *testing.T) {
		for i := range kills {
			if only >= 0 && i != only {
				continue
			}
			t.Run(fmt.Sprintf("kill%03d", i), func(t *testing.T) {
				t.Parallel()
				// An aim late in the run can miss it (the run ends first; the faster the run, the
				// likelier): another is drawn, up to eight in all.
				for attempt := range 8 {
					phase, ok := crashOnce(t, seed, i, attempt, script, n, length)
					mu.Lock()
					attempts++
					if ok {
						killed++
						hist[phase]++
					}
					mu.Unlock()
					if ok || t.Failed() {
						return
					}
				}
				t.Errorf("kill %d (seed %d): the run finished before every kill aimed at it", i, seed)
			})
		}
	})
	var keys []string
	for k := range hist {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		return hist[keys[a]] > hist[keys[b]] || hist[keys[a]] == hist[keys[b]] && keys[a] < keys[b]
	})
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %3d  %s", hist[k], k)
	}
	t.Logf("crash loop: %d kills in %d attempts (%d with a torn tail), %s (build %s); the phase each kill left the record in:%s",
		killed, attempts, tornKills.Load(), time.Since(began).Round(time.Millisecond), buildDur.Round(time.Millisecond), b.String())
	if only < 0 && killed < kills {
		t.Errorf("only %d of %d kills landed", killed, kills)
	}
}

// crashEnv returns the crash loops' seed (REIN_CRASH_SEED, else crashSeed) and the one kill to
// run (REIN_CRASH_KILL), or -1 for all.
func crashEnv(t *testing.T) (seed uint64, only int) {
	seed, only = crashSeed, -1
	if s := os.Getenv("REIN_CRASH_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("REIN_CRASH_SEED: %v", err)
		}
		seed = v
	}
	if s := os.Getenv("REIN_CRASH_KILL"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("REIN_CRASH_KILL: %v", err)
		}
		only = v
	}
	return seed, only
}

// crashOnce runs one kill and its checks. It returns the phase the record was in at the kill, and
// false when the run ended before the kill landed.
func crashOnce(t *testing.T, seed uint64, i, attempt int, script string, n int, length time.Duration) (string, bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, uint64(i*8+attempt)))
	// Where the kill is aimed: at startup, at a moment of the run's length (so long waits draw
	// more kills), or a little after the run publishes record k (so every step draws some).
	var k int
	var d time.Duration
	switch aim := rng.IntN(8); {
	case aim == 0:
		d = time.Duration(rng.IntN(30_000)) * time.Microsecond
	case aim == 1:
		d = time.Duration(rng.Int64N(int64(length) * 9 / 10))
	default:
		k = 1 + rng.IntN(max(n-4, 1))
		if rng.IntN(3) > 0 { // else at once: the short steps between records draw kills too
			d = time.Duration(rng.IntN(40_000)) * time.Microsecond
		}
	}
	tear := rng.IntN(8)          // 0: append a partial line, 1: zeros, else nothing
	tearLen := 1 + rng.IntN(300) // how many bytes to tear
	where := fmt.Sprintf("kill %d attempt %d (seed %d: after record %d + %s)", i, attempt, seed, k, d.Round(time.Microsecond))

	sb := newSandbox(t)
	c := sb.startRun(t, append(append([]string{"run"}, simArgs(script)...), "--json", crashPrompt)...)
	if k > 0 {
	wait:
		for m := range c.lines {
			if seq, ok := m["seq"].(float64); ok && m["type"] == "record" && int(seq) >= k {
				break wait
			}
		}
	}
	select {
	case <-c.done:
	case <-time.After(d):
	}
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
	if !(c.status.Signaled() && c.status.Signal() == syscall.SIGKILL) {
		if c.status.ExitStatus() != 0 {
			t.Fatalf("%s: rein exited %d before the kill\n%s", where, c.status.ExitStatus(), c.stderr)
		}
		return "", false
	}

	paths := sb.records(t)
	if len(paths) == 0 {
		// Killed before the session's directory held a record: there is nothing to resume, and
		// resume must say so rather than start an empty session.
		res := sb.rein(t, append([]string{"resume"}, simArgs("")...)...)
		if res.code != exitUsage || !strings.Contains(res.stderr, "no session to resume") {
			t.Fatalf("%s: resume with no session:\n%s", where, res)
		}
		return "no record yet", true
	}
	if len(paths) != 1 {
		t.Fatalf("%s: want one record, found %v", where, paths)
	}
	path := paths[0]
	id := filepath.Base(filepath.Dir(path))
	if tear < 2 {
		simulateTear(t, path, tear, tearLen)
	}
	atKill, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	complete, torn := splitComplete(atKill)
	recs, st, err := replay(complete)
	if err != nil {
		t.Fatalf("%s: the complete lines present at the kill do not replay: %v", where, err)
	}
	phase := crashPhase(recs, st)
	if len(torn) > 0 {
		tornKills.Add(1)
	}
	where += " in phase " + phase

	// Settle only, with the provider the record names. A record killed before its first line names
	// none (TestResumeEmptyRecord covers that case), so it is given --provider sim.
	var provider []string
	if len(recs) == 0 {
		provider = simArgs("")
	}
	res := sb.rein(t, append([]string{"resume", id}, provider...)...)
	if res.code != 0 {
		t.Fatalf("%s: rein resume %s:\n%s", where, id, res)
	}
	settled, _ := os.ReadFile(path)
	if !bytes.HasPrefix(settled, complete) {
		t.Fatalf("%s: the record after resume does not begin with the %d complete lines present at the kill", where, len(recs))
	}
	tornFile, err := os.ReadFile(path + ".torn")
	switch {
	case len(torn) > 0 && !bytes.Equal(tornFile, torn):
		t.Fatalf("%s: record.jsonl.torn holds %q (%v), want the %d-byte torn tail %q", where, tornFile, err, len(torn), torn)
	case len(torn) == 0 && !errors.Is(err, fs.ErrNotExist):
		t.Fatalf("%s: record.jsonl.torn exists with no torn tail (%v)", where, err)
	}
	all, st2, err := replay(settled)
	if err != nil {
		t.Fatalf("%s: the settled record does not replay: %v", where, err)
	}
	if err := checkSettle(all[len(recs):], st); err != nil {
		t.Fatalf("%s: what resume appended: %v", where, err)
	}
	if st2.InFlight() || !st2.IsReady() || len(st2.Owed()) > 0 {
		t.Fatalf("%s: after resume the session is still in flight (phase %s, owed %v)", where, st2.Phase(), st2.Owed())
	}
	if err := checkCalls(all, true); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if res := sb.rein(t, "doctor", path); res.code != 0 || !strings.HasPrefix(res.stdout, "admissible") {
		t.Fatalf("%s: doctor after resume:\n%s", where, res)
	}

	// Go on, with the simulator's default policy (no script is recorded).
	res = sb.rein(t, append([]string{"resume", id, "continue", "--sim-delay", "0"}, provider...)...)
	if res.code != 0 {
		t.Fatalf("%s: rein resume %s continue:\n%s", where, id, res)
	}
	final, _ := os.ReadFile(path)
	if !bytes.HasPrefix(final, settled) {
		t.Fatalf("%s: continuing rewrote the settled record", where)
	}
	all, st3, err := replay(final)
	if err != nil {
		t.Fatalf("%s: the continued record does not replay: %v", where, err)
	}
	if st3.Phase() != fold.ReadyForUser || st3.InFlight() {
		t.Fatalf("%s: after continue the phase is %s (in flight %v)", where, st3.Phase(), st3.InFlight())
	}
	prompts := 0
	for _, r := range all[len(recs):] {
		if p, ok := r.Body.(*record.UserPrompt); ok {
			prompts++
			if p.Text != "continue" {
				t.Fatalf("%s: resume added the prompt %q", where, p.Text)
			}
		}
	}
	if prompts != 1 {
		t.Fatalf("%s: want the one prompt \"continue\" after the kill, found %d", where, prompts)
	}
	if q, ok := all[len(all)-1].Body.(*record.Quiesced); !ok || q.Reason != fold.Replied {
		t.Fatalf("%s: the continued exchange does not end quiesced{replied}: %s", where, all[len(all)-1].Kind())
	}
	if err := checkCalls(all, true); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if res := sb.rein(t, "doctor", path); res.code != 0 || !strings.HasPrefix(res.stdout, "admissible") {
		t.Fatalf("%s: doctor after continue:\n%s", where, res)
	}
	return phase, true
}

// simulateTear appends what a crash can leave of an unsynced append: the start of a line, or
// zeros. The complete lines before it are untouched.
func simulateTear(t *testing.T, path string, kind, n int) {
	t.Helper()
	tail := bytes.Repeat([]byte{0}, n)
	if kind == 0 {
		line := []byte(`{"v":1,"seq":999,"t":1764400000000,"class":"event","kind":"tool_finished","payload":{"call_id":"sim_call_9","duration_ms":20,"exit_code":0,"outcome":"ok"},"crc":"00000000"}`)
		tail = line[:min(n, len(line)-1)]
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(tail); err != nil {
		t.Fatal(err)
	}
}

// checkSettle checks what a settle-only resume appended to a record whose state at the kill was
// st: an answer to each owed call (the result its tool_finished kept, byte for byte, if it
// finished; else interrupted if it had started; else not_executed), a quiesced{crashed} naming
// them if the exchange was in flight, then session_resumed; nothing else.
func checkSettle(added []record.Record, st *fold.State) error {
	owed := st.Owed()
	i := 0
	next := func() (record.Record, error) {
		if i >= len(added) {
			return record.Record{}, fmt.Errorf("it ends after %d records", i)
		}
		i++
		return added[i-1], nil
	}
	if len(owed) > 0 {
		r, err := next()
		if err != nil {
			return err
		}
		tr, ok := r.Body.(*record.ToolResults)
		if !ok {
			return fmt.Errorf("record %d is %s, want tool_results answering %v", r.Seq, r.Kind(), owed)
		}
		var ids []string
		for _, res := range tr.Results {
			ids = append(ids, res.CallID)
			if kept, ok := st.Finished(res.CallID); ok {
				if !reflect.DeepEqual(res, kept) {
					return fmt.Errorf("call %s finished before the kill with %+v; the resume answers %+v", res.CallID, kept, res)
				}
				continue
			}
			want := record.NotExecuted
			if st.Started(res.CallID) {
				want = record.Interrupted
			}
			if res.Outcome != want {
				return fmt.Errorf("call %s is answered %s, want %s", res.CallID, res.Outcome, want)
			}
		}
		if !slices.Equal(ids, owed) {
			return fmt.Errorf("tool_results answers %v, want %v", ids, owed)
		}
	}
	if st.InFlight() || !st.IsReady() {
		r, err := next()
		if err != nil {
			return err
		}
		q, ok := r.Body.(*record.Quiesced)
		if !ok || q.Reason != fold.Crashed {
			return fmt.Errorf("record %d is %s, want quiesced{crashed}", r.Seq, r.Kind())
		}
		if !slices.Equal(q.Answered, owed) && !(len(q.Answered) == 0 && len(owed) == 0) {
			return fmt.Errorf("quiesced names %v, want %v", q.Answered, owed)
		}
	}
	r, err := next()
	if err != nil {
		return err
	}
	_, resumed := r.Body.(*record.SessionResumed)
	// A record the kill left empty is started by the resume instead (it names no session yet).
	_, started := r.Body.(*record.SessionStarted)
	if !resumed && !(started && r.Seq == 1) {
		return fmt.Errorf("record %d is %s, want session_resumed (or session_started in an empty record)", r.Seq, r.Kind())
	}
	if i != len(added) {
		return fmt.Errorf("it appended %d records, %d more than it owed", len(added), len(added)-i)
	}
	return nil
}

// crashPhase names where a record stood when its process was killed, from its replay: the last
// record and whether calls were owed.
func crashPhase(recs []record.Record, st *fold.State) string {
	if len(recs) == 0 {
		return "record created, still empty"
	}
	prompted := false
	for _, r := range recs {
		if _, ok := r.Body.(*record.UserPrompt); ok {
			prompted = true
		}
	}
	last := recs[len(recs)-1].Kind()
	switch {
	case !prompted:
		return "starting, before the prompt"
	case !st.InFlight() && st.IsReady():
		return "settled, after the reply"
	case len(st.Owed()) > 0 && last == record.KindToolStarted:
		return "calls owed: a tool running"
	case len(st.Owed()) > 0:
		return "calls owed: between tools (after " + string(last) + ")"
	case last == record.KindRetryScheduled:
		return "retry sleep"
	case last == record.KindTurnStarted:
		return "request sent or streaming"
	case last == record.KindToolResults:
		return "results committed, before the next request"
	case last == record.KindUserPrompt || last == record.KindSystem:
		return "prompt committed, before the request"
	}
	return "after " + string(last) + " (" + st.Phase().String() + ")"
}
