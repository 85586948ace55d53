package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/record"
)

const batchPrompt = "run the three batches of steps"

// batchWorkers is how many kills of TestBatchCrashLoop run at once.
const batchWorkers = 4

// batchAttempts is how many aims a kill of TestBatchCrashLoop draws to land inside a batch. A
// quarter of aims miss (the calls are fast: a kill well after a batch's last call lands after
// it), so twelve all missing is a failure of the loop, not of chance.
const batchAttempts = 12

// batchKey is a key-shaped secret one command prints (without naming it, so the call's own
// arguments do not hold it): the redactor must take it out of the result a tool_finished keeps
// and of the batch's results alike.
const batchKey = "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

// batchScript is three replies of three or four calls each, fast and slow, succeeding and
// failing, with output that JSON must escape, then a closing reply.
func batchScript(t testing.TB, dir string) string {
	return writeScript(t, dir,
		map[string]any{"text": "First batch.", "delay_ms": 2, "tool_calls": []any{
			bash("echo fast 1"),
			bash("sleep 0.08; echo slow 1"),
			bash(`printf 'tab\t"quoted" back\\slash\n'; echo to stderr >&2; exit 2`),
		}},
		map[string]any{"text": "Second batch.", "delay_ms": 2, "tool_calls": []any{
			bash("sleep 0.05; echo slow 2"),
			bash("echo fast 2 > notes.txt; cat notes.txt"),
			bash("seq 1 300"),
			bash("sleep 0.1; echo slow 3"),
		}},
		map[string]any{"text": "Third batch.", "delay_ms": 2, "tool_calls": []any{
			bash(`printf 'key=sk-ant-api03-%s\n' "$(head -c 40 /dev/zero | tr '\0' A)"`), // prints batchKey
			bash("sleep 0.06; echo slow 4"),
			map[string]any{"name": "read_file", "arguments": map[string]any{"path": "notes.txt"}},
			bash("echo last; exit 1"),
		}},
		map[string]any{"text": "Three batches ran. Done.", "delay_ms": 2},
	)
}

// batchKill is what one kill of TestBatchCrashLoop found.
type batchKill struct {
	landed  bool   // the process died of the kill, not before it
	inBatch bool   // calls were owed at the kill
	where   string // the moment the kill left the record in
	kept    int    // owed calls whose result was kept at the kill, each answered with it
	printed int    // tool_finished events rein printed before it died, each found and answered
	cut     int    // owed calls running at the kill, answered interrupted
	unrun   int    // owed calls never started, answered not_executed
}

// TestBatchCrashLoop kills a real `rein run` with SIGKILL while it works through batches of
// three and four calls, aiming just after a call starts or finishes so that kills land inside
// calls and between them, and resumes each time. No finished result may be lost or relabelled:
// every result a tool_finished kept (and every tool_finished rein printed before it died) is
// what the settled record answers that call with, byte for byte; only calls still running are
// interrupted. Every record is admissible (doctor), and the session goes on with requests the
// simulator, which validates each one, accepts.
func TestBatchCrashLoop(t *testing.T) {
	reinBin(t)
	began := time.Now()
	seed, only := crashEnv(t)
	kills := 200
	if testing.Short() {
		kills = 20
	}
	t.Logf("batch crash loop: seed %d, %d kills inside batches (rerun one with REIN_CRASH_SEED=%d REIN_CRASH_KILL=<n>)", seed, kills, seed)
	script := batchScript(t, t.TempDir())

	// One uninterrupted run: its records are where the kills are aimed.
	sb := newSandbox(t)
	res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "--json", batchPrompt)...)
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
	if n, err := checkKeptAnswers(recs); err != nil || n != 11 {
		t.Fatalf("the uninterrupted run keeps %d results (want all 11 calls'): %v", n, err)
	}
	if bytes.Contains(full, []byte(batchKey)) {
		t.Fatal("the key reached the record")
	}
	var aims []int // the records a kill follows: each call's start and end
	for _, r := range recs {
		if k := r.Kind(); k == record.KindToolStarted || k == record.KindToolFinished {
			aims = append(aims, int(r.Seq))
		}
	}

	var mu sync.Mutex
	hist := map[string]int{}
	var total batchKill
	var attempts, landed int
	// The kills run batchWorkers at a time whatever -parallel says: each spends most of its time
	// waiting on sleeps, fsyncs and child processes, not on a core.
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range kills {
			if only < 0 || i == only {
				next <- i
			}
		}
	}()
	var wg sync.WaitGroup
	for range batchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t.Run(fmt.Sprintf("kill%03d", i), func(t *testing.T) {
					// Kills aimed late in a batch, or late in the run, can miss it (the run ends first):
					// another aim is drawn, up to batchAttempts in all.
					for attempt := range batchAttempts {
						k := batchCrashOnce(t, seed, i, attempt, script, aims)
						mu.Lock()
						attempts++
						if k.landed {
							landed++
							hist[k.where]++
						}
						if k.inBatch {
							total.inBatch = true
							total.kept += k.kept
							total.printed += k.printed
							total.cut += k.cut
							total.unrun += k.unrun
						}
						mu.Unlock()
						if k.inBatch || t.Failed() {
							return
						}
					}
					t.Errorf("kill %d (seed %d): no kill in %d attempts landed inside a batch", i, seed, batchAttempts)
				})
			}
		}()
	}
	wg.Wait()
	var keys []string
	for k := range hist {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %3d  %s", hist[k], k)
	}
	t.Logf("batch crash loop (seed %d): %d kills in %d attempts, %s (build %s); settled batches answered %d finished calls with their kept results (%d of them printed before the kill), %d running calls interrupted, %d unstarted not_executed; where the kills landed:%s",
		seed, landed, attempts, time.Since(began).Round(time.Millisecond), buildDur.Round(time.Millisecond), total.kept, total.printed, total.cut, total.unrun, b.String())
}

// batchCrashOnce runs one kill and its checks.
func batchCrashOnce(t *testing.T, seed uint64, i, attempt int, script string, aims []int) batchKill {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed^0xba7c4, uint64(i*batchAttempts+attempt)))
	k := aims[rng.IntN(len(aims))]
	var d time.Duration
	if rng.IntN(3) > 0 { // else at once: between calls
		d = time.Duration(rng.IntN(70_000)) * time.Microsecond
	}
	where := fmt.Sprintf("kill %d attempt %d (seed %d: after record %d + %s)", i, attempt, seed, k, d.Round(time.Microsecond))

	sb := newSandbox(t)
	c := sb.startRun(t, append(append([]string{"run"}, simArgs(script)...), "--json", batchPrompt)...)
	kill := func() { c.cmd.Process.Signal(syscall.SIGKILL) }
	// Every tool_finished rein printed: each was in the record file before it was printed.
	var printed []map[string]any
	// The kill comes d after rein prints record k; the lines go on being read until rein is gone.
	var timer <-chan time.Time
	aimed := false
	for lines := c.lines; lines != nil; {
		select {
		case m, ok := <-lines:
			if !ok {
				lines = nil
				continue
			}
			if m["type"] != "record" {
				continue
			}
			if m["kind"] == string(record.KindToolFinished) {
				printed = append(printed, m["payload"].(map[string]any))
			}
			if seq, _ := m["seq"].(float64); !aimed && int(seq) >= k {
				aimed = true
				if d == 0 {
					kill()
				} else {
					timer = time.After(d)
				}
			}
		case <-timer:
			kill()
			timer = nil
		}
	}
	<-c.done
	if !(c.status.Signaled() && c.status.Signal() == syscall.SIGKILL) {
		if c.status.ExitStatus() != 0 {
			t.Fatalf("%s: rein exited %d before the kill\n%s", where, c.status.ExitStatus(), c.stderr)
		}
		return batchKill{}
	}

	paths := sb.records(t)
	if len(paths) != 1 {
		t.Fatalf("%s: want one record, found %v", where, paths)
	}
	path := paths[0]
	id := filepath.Base(filepath.Dir(path))
	atKill, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	complete, _ := splitComplete(atKill)
	recs, st, err := replay(complete)
	if err != nil {
		t.Fatalf("%s: the complete lines present at the kill do not replay: %v", where, err)
	}
	out := batchKill{landed: true, inBatch: len(st.Owed()) > 0, where: batchPhase(recs, st.Owed())}
	where += " " + out.where
	for _, p := range printed {
		if !hasFinished(recs, p) {
			t.Fatalf("%s: rein printed tool_finished %v before it died, and the record does not hold it", where, p)
		}
	}
	for _, id := range st.Owed() {
		switch _, kept := st.Finished(id); {
		case kept:
			out.kept++
		case st.Started(id):
			out.cut++
		default:
			out.unrun++
		}
	}

	res := sb.rein(t, "resume", id)
	if res.code != 0 {
		t.Fatalf("%s: rein resume %s:\n%s", where, id, res)
	}
	settled, _ := os.ReadFile(path)
	if !bytes.HasPrefix(settled, complete) {
		t.Fatalf("%s: the record after resume does not begin with the %d complete lines present at the kill", where, len(recs))
	}
	all, st2, err := replay(settled)
	if err != nil {
		t.Fatalf("%s: the settled record does not replay: %v", where, err)
	}
	if err := checkSettle(all[len(recs):], st); err != nil {
		t.Fatalf("%s: what resume appended: %v", where, err)
	}
	if st2.InFlight() || !st2.IsReady() {
		t.Fatalf("%s: after resume the session is still in flight (phase %s)", where, st2.Phase())
	}
	if _, err := checkKeptAnswers(all); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, p := range printed {
		if err := answeredAsPrinted(all, p); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		if _, owed := st.Finished(p["call_id"].(string)); owed {
			out.printed++
		}
	}
	if res := sb.rein(t, "doctor", path); res.code != 0 || !strings.HasPrefix(res.stdout, "admissible") {
		t.Fatalf("%s: doctor after resume:\n%s", where, res)
	}

	// Go on: the simulator validates the request the settled record makes.
	res = sb.rein(t, "resume", id, "continue", "--sim-delay", "0")
	if res.code != 0 {
		t.Fatalf("%s: rein resume %s continue (the simulator refuses an invalid request):\n%s", where, id, res)
	}
	final, _ := os.ReadFile(path)
	if !bytes.HasPrefix(final, settled) {
		t.Fatalf("%s: continuing rewrote the settled record", where)
	}
	all, _, err = replay(final)
	if err != nil {
		t.Fatalf("%s: the continued record does not replay: %v", where, err)
	}
	for _, r := range all[len(recs):] {
		if pe, ok := r.Body.(*record.ProviderError); ok {
			t.Fatalf("%s: after the resume the provider refused a request: %s (%d) %s", where, pe.Class, pe.Status, pe.Message)
		}
	}
	if err := checkCalls(all, true); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if _, err := checkKeptAnswers(all); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if bytes.Contains(final, []byte(batchKey)) {
		t.Fatalf("%s: the key reached the record", where)
	}
	if res := sb.rein(t, "doctor", path); res.code != 0 || !strings.HasPrefix(res.stdout, "admissible") {
		t.Fatalf("%s: doctor after continue:\n%s", where, res)
	}
	return out
}

// checkKeptAnswers checks that every call whose tool_finished kept a result is answered with
// exactly that result (content, error flag, outcome), and returns how many there were.
func checkKeptAnswers(recs []record.Record) (int, error) {
	kept := map[string]*record.ToolFinished{}
	n := 0
	for _, r := range recs {
		switch b := r.Body.(type) {
		case *record.ToolFinished:
			if b.Content != "" {
				kept[b.CallID] = b
			}
		case *record.ToolResults:
			for _, res := range b.Results {
				f, ok := kept[res.CallID]
				if !ok {
					continue
				}
				n++
				if res.Content != f.Content || res.IsError != f.IsError || res.Outcome != f.Outcome {
					return n, fmt.Errorf("record %d answers call %s with %s %q; its tool_finished kept %s %q", r.Seq, res.CallID, res.Outcome, clip(res.Content, 200), f.Outcome, clip(f.Content, 200))
				}
			}
		}
	}
	return n, nil
}

// hasFinished reports whether recs hold the tool_finished rein printed as p.
func hasFinished(recs []record.Record, p map[string]any) bool {
	for _, r := range recs {
		if f, ok := r.Body.(*record.ToolFinished); ok && f.CallID == p["call_id"] {
			content, _ := p["content"].(string)
			return f.Content == content && string(f.Outcome) == p["outcome"]
		}
	}
	return false
}

// answeredAsPrinted checks that the call of a printed tool_finished is answered with the result
// it printed, when it printed one.
func answeredAsPrinted(recs []record.Record, p map[string]any) error {
	content, _ := p["content"].(string)
	if content == "" {
		return nil
	}
	isErr, _ := p["is_error"].(bool)
	for _, r := range recs {
		if b, ok := r.Body.(*record.ToolResults); ok {
			for _, res := range b.Results {
				if res.CallID != p["call_id"] {
					continue
				}
				if res.Content != content || res.IsError != isErr || string(res.Outcome) != p["outcome"] {
					return fmt.Errorf("call %s finished (printed %v %q) before the kill; the settled record answers %s %q", res.CallID, p["outcome"], clip(content, 200), res.Outcome, clip(res.Content, 200))
				}
				return nil
			}
		}
	}
	return fmt.Errorf("call %s finished before the kill and is never answered", p["call_id"])
}

// batchPhase names where a kill left the record: inside a batch (which one, how many of its
// calls finished, whether one was running), or outside any.
func batchPhase(recs []record.Record, owed []string) string {
	if len(owed) == 0 {
		return "outside a batch"
	}
	batch, started, finished := 0, 0, 0
	for _, r := range recs {
		switch r.Body.(type) {
		case *record.AssistantMessage:
			batch, started, finished = batch+1, 0, 0
		case *record.ToolStarted:
			started++
		case *record.ToolFinished:
			finished++
		}
	}
	if started > finished {
		return fmt.Sprintf("batch %d of %d calls: call %d running", batch, len(owed), started)
	}
	return fmt.Sprintf("batch %d of %d calls: between calls, %d finished", batch, len(owed), finished)
}

// clip shortens s to n bytes on one line, for a failure message.
func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
