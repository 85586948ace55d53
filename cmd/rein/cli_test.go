package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/session"
	"github.com/spf13/cobra"
)

// TestRunJSON: `rein run --json` prints one JSON object per line, the session line first and the
// result line last, and every record it publishes in order.
func TestRunJSON(t *testing.T) {
	sb := newSandbox(t)
	script := crashScript(t, t.TempDir())
	res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "--json", crashPrompt)...)
	if res.code != 0 {
		t.Fatalf("rein run --json:\n%s", res)
	}
	out := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
	var objs []map[string]any
	for i, line := range out {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d is not a JSON object: %v\n%s", i+1, err, line)
		}
		if _, ok := m["type"].(string); !ok {
			t.Fatalf("line %d has no type: %s", i+1, line)
		}
		objs = append(objs, m)
	}
	first, last := objs[0], objs[len(objs)-1]
	var keys []string
	for k := range first {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	paths := sb.records(t)
	if len(paths) != 1 {
		t.Fatalf("want one record, found %v", paths)
	}
	id := filepath.Base(filepath.Dir(paths[0]))
	if first["type"] != "session" || !slices.Equal(keys, []string{"id", "record", "type"}) || first["id"] != id || first["record"] != paths[0] {
		t.Fatalf("the first line is %s, want {\"type\":\"session\",\"id\":%q,\"record\":%q}", out[0], id, paths[0])
	}
	// The issue writes the line {"type":"session","id":...,"record":...}; a reader matching its
	// start, as a shell script would, needs the type first.
	if !strings.HasPrefix(out[0], `{"type":"session","id":`) {
		t.Errorf("the first line is %s, want it to begin {\"type\":\"session\",\"id\":", out[0])
	}
	if last["type"] != "result" || last["reason"] != "replied" || last["session"] != id {
		t.Fatalf("the last line is %s, want a result with reason replied", out[len(out)-1])
	}
	// The records it published are the record's, in order, with no gap, up to its last line.
	b, _ := os.ReadFile(paths[0])
	var seqs []int
	for _, m := range objs {
		if m["type"] == "record" {
			seqs = append(seqs, int(m["seq"].(float64)))
		}
	}
	n := len(lines(b))
	if len(seqs) == 0 || seqs[len(seqs)-1] != n {
		t.Fatalf("the published records end at %v, the record at %d", seqs[len(seqs)-1:], n)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			t.Fatalf("the published records jump from %d to %d", seqs[i-1], seqs[i])
		}
	}
}

// TestNoProvider: with no key and no --provider, rein says which variables to set and how to try
// it offline, exits 2, and starts no session.
func TestNoProvider(t *testing.T) {
	sb := newSandbox(t)
	res := sb.rein(t, "run", "hello")
	if res.code != exitUsage {
		t.Fatalf("rein run with no provider: want exit %d\n%s", exitUsage, res)
	}
	for _, want := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "--provider sim"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("the message does not name %s:\n%s", want, res.stderr)
		}
	}
	if paths := sb.records(t); len(paths) != 0 {
		t.Errorf("a failed start left sessions behind: %v", paths)
	}
}

// TestHelp: `rein --help` and every subcommand's --help exit 0 and print a usage.
func TestHelp(t *testing.T) {
	sb := newSandbox(t)
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				walk(sub, append(slices.Clone(path), sub.Name()))
			}
		}
	}
	walk(newRoot(), nil)
	if len(paths) < 8 {
		t.Fatalf("only %d commands found: %v", len(paths), paths)
	}
	for _, p := range paths {
		res := sb.rein(t, append(slices.Clone(p), "--help")...)
		if res.code != 0 || !strings.Contains(res.stdout, "Usage:") {
			t.Errorf("rein %s --help:\n%s", strings.Join(p, " "), res)
		}
		// Help is text a person reads: printable, each flag on its own line.
		for i, line := range strings.Split(res.stdout, "\n") {
			if strings.IndexFunc(line, func(r rune) bool { return r < ' ' && r != '\t' }) >= 0 {
				t.Errorf("rein %s --help: line %d holds a control character: %q", strings.Join(p, " "), i+1, line)
			}
		}
	}
	if res := sb.rein(t, "chat", "--help"); !strings.Contains(res.stdout, `--resume id[="pick"]`) {
		t.Errorf("rein chat --help does not show --resume as taking an optional id:\n%s", res.stdout)
	}
	for _, args := range [][]string{{"help"}, {"--version"}} {
		if res := sb.rein(t, args...); res.code != 0 {
			t.Errorf("rein %s:\n%s", strings.Join(args, " "), res)
		}
	}
}

// TestResumeEmptyRecord: a kill between creating a session's record and writing its first line
// leaves an empty record.jsonl (the crash loop hits this). Resuming it must name the session.
func TestResumeEmptyRecord(t *testing.T) {
	sb := newSandbox(t)
	id := "20260101-000000-abcdef"
	dir := filepath.Join(session.ProjectDir(sb.home, sb.ws), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "record.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := sb.rein(t, append([]string{"resume", id, "--json"}, simArgs("")...)...)
	if res.code != 0 {
		t.Fatalf("resume of an empty record:\n%s", res)
	}
	var first map[string]any
	json.Unmarshal([]byte(strings.SplitN(res.stdout, "\n", 2)[0]), &first)
	if first["id"] != id {
		t.Errorf("resume of an empty record calls the session %q, want %q (its directory)\n%s", first["id"], id, res.stdout)
	}
}

// TestStartToFirstRequest measures the time from starting the rein process to the provider
// receiving its first request, against the simulator behind a local Anthropic endpoint.
func TestStartToFirstRequest(t *testing.T) {
	runs := 20
	if testing.Short() {
		runs = 5
	}
	arrived := make(chan time.Time, 64)
	simulator := sim.New(sim.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			select {
			case arrived <- time.Now():
			default:
			}
		}
		simulator.ServeHTTP(w, r)
	}))
	defer srv.Close()
	sb := newSandbox(t)
	sb.env = append(sb.env, "ANTHROPIC_API_KEY=sim-key")
	reinBin(t)
	var firsts, totals []time.Duration
	for range runs {
		start := time.Now()
		res := sb.rein(t, "run", "--provider", "anthropic", "--base-url", srv.URL, "--model", "sim-1", "hello")
		total := time.Since(start)
		if res.code != 0 {
			t.Fatalf("rein run against the local endpoint:\n%s", res)
		}
		first := <-arrived
		for len(arrived) > 0 {
			<-arrived
		}
		firsts = append(firsts, first.Sub(start))
		totals = append(totals, total)
	}
	q := func(ds []time.Duration, p float64) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[int(p*float64(len(s)-1)+0.5)].Round(100 * time.Microsecond)
	}
	t.Logf("start to first request over %d runs: p50 %s, p90 %s, min %s, max %s (whole run p50 %s)",
		runs, q(firsts, .5), q(firsts, .9), q(firsts, 0), q(firsts, 1), q(totals, .5))
}

// TestNewest: "newest" names the workspace's newest session wherever a session is named, and the
// commands that only read a session (show, doctor, checkpoints) read the newest when given none.
// A command given the wrong number of arguments says how it is used, not only how many it took.
func TestNewest(t *testing.T) {
	sb := newSandbox(t)
	if res := sb.rein(t, "show"); res.code != exitUsage || !strings.Contains(res.stderr, "no session") || !strings.Contains(res.stderr, "rein run") {
		t.Fatalf("rein show in a workspace without sessions: want exit %d, saying how to start one\n%s", exitUsage, res)
	}
	for _, p := range []string{"first session here", "second session here"} {
		if res := sb.rein(t, "run", "--provider", "sim", "--sim-delay", "0", "--no-checkpoints", p); res.code != 0 {
			t.Fatalf("rein run:\n%s", res)
		}
		time.Sleep(20 * time.Millisecond) // the ids order by time
	}
	list := sb.rein(t, "sessions", "--json")
	var newest struct{ ID string }
	if err := json.Unmarshal([]byte(strings.SplitN(list.stdout, "\n", 2)[0]), &newest); err != nil || newest.ID == "" {
		t.Fatalf("rein sessions --json: %v\n%s", err, list)
	}
	for _, args := range [][]string{{"show"}, {"show", "newest"}, {"doctor"}, {"doctor", "newest"}, {"checkpoints"}, {"checkpoints", "newest"}} {
		res := sb.rein(t, args...)
		if res.code != 0 {
			t.Fatalf("rein %s:\n%s", strings.Join(args, " "), res)
		}
		if args[0] == "show" && (!strings.Contains(res.stdout, "second session here") || strings.Contains(res.stdout, "first session here")) {
			t.Errorf("rein %s did not show the newest session:\n%s", strings.Join(args, " "), res.stdout)
		}
	}
	// resume newest, alone, resumes the newest session: it is not a prompt saying "newest".
	res := sb.rein(t, "resume", "--provider", "sim", "--sim-delay", "0", "--no-checkpoints", "newest")
	if res.code != 0 || strings.Contains(res.stdout, `"newest"`) {
		t.Fatalf("rein resume newest:\n%s", res)
	}
	// A fork of the newest names its parent.
	if res := sb.rein(t, "fork", "newest"); res.code != 0 || !strings.Contains(res.stdout+res.stderr, newest.ID) {
		t.Fatalf("rein fork newest does not fork %s:\n%s", newest.ID, res)
	}
	for _, args := range [][]string{{"evict", "newest"}, {"rewind"}, {"show", "a", "b"}} {
		res := sb.rein(t, args...)
		if res.code != exitUsage || !strings.Contains(res.stderr, "usage: rein "+args[0]) || !strings.Contains(res.stderr, "--help") {
			t.Errorf("rein %s: want exit %d and its usage\n%s", strings.Join(args, " "), exitUsage, res)
		}
	}
}

// TestDeepWorkspace: a workspace whose path is longer than a file name may be (a deep monorepo, a
// build directory) starts, lists and resumes sessions like any other; rein once named the
// directory of its sessions after the whole path and could not create it.
func TestDeepWorkspace(t *testing.T) {
	sb := newSandbox(t)
	deep := sb.ws
	for i := 0; len(deep) < len(sb.ws)+320; i++ {
		deep = filepath.Join(deep, fmt.Sprintf("component-number-%d", i))
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if res := sb.rein(t, "run", "--provider", "sim", "--sim-delay", "0", "--cwd", deep, "hello from deep down"); res.code != 0 {
		t.Fatalf("rein run in a workspace of %d bytes:\n%s", len(deep), res)
	}
	if res := sb.rein(t, "sessions", "--cwd", deep); res.code != 0 || !strings.Contains(res.stdout, "hello from deep down") {
		t.Fatalf("rein sessions --cwd <deep>:\n%s", res)
	}
	if res := sb.rein(t, "resume", "--provider", "sim", "--sim-delay", "0", "--cwd", deep, "and again"); res.code != 0 {
		t.Fatalf("rein resume in the deep workspace:\n%s", res)
	}
}

// TestHostileWorkspaceFiles: the files rein reads in a workspace of its own accord cannot hang it.
// A cloned repository's AGENTS.md as a named pipe and CLAUDE.md as a link to /dev/zero are left
// out and the session runs; a .mcp.json or a .rein/config.toml that is a named pipe is refused at
// once, saying what it is, rather than waited on for ever.
func TestHostileWorkspaceFiles(t *testing.T) {
	sb := newSandbox(t)
	if err := syscall.Mkfifo(filepath.Join(sb.ws, "AGENTS.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(sb.ws, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	if res := sb.rein(t, "run", "--provider", "sim", "--sim-delay", "0", "hi"); res.code != 0 {
		t.Fatalf("rein run beside a hostile AGENTS.md and CLAUDE.md:\n%s", res)
	}
	for _, name := range []string{".mcp.json", filepath.Join(".rein", "config.toml")} {
		p := filepath.Join(sb.ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
		res := sb.rein(t, "run", "--provider", "sim", "--sim-delay", "0", "hi")
		if res.code == 0 || !strings.Contains(res.stderr, "named pipe") || !strings.Contains(res.stderr, name) {
			t.Errorf("rein run beside a %s that is a named pipe:\n%s", name, res)
		}
		os.Remove(p)
	}
}

// TestTerminalSafeOutput: a command's output that would write the clipboard (OSC 52), retitle
// the window and clear the screen reaches rein run's and rein show's readers drawn, not obeyed;
// rein run --json carries it exactly, as JSON escapes.
func TestTerminalSafeOutput(t *testing.T) {
	sb := newSandbox(t)
	prompt := "run `printf '\\033]52;c;aGVsbG8=\\007\\033]0;pwned\\007\\033[2J'`"
	for _, args := range [][]string{
		{"run", "--provider", "sim", "--sim-delay", "0", "--no-checkpoints", prompt},
		{"show"},
		{"sessions"},
	} {
		res := sb.rein(t, args...)
		if res.code != 0 {
			t.Fatalf("rein %s:\n%s", args[0], res)
		}
		if strings.ContainsAny(res.stdout+res.stderr, "\x1b\x07") {
			t.Errorf("rein %s let an escape sequence through:\n%q", args[0], res.stdout+res.stderr)
		}
		if args[0] != "sessions" && !strings.Contains(res.stdout, `\x1b]52;c;aGVsbG8=\x07`) {
			t.Errorf("rein %s does not show the escape sequence:\n%s", args[0], res.stdout)
		}
	}
	res := sb.rein(t, "run", "--json", "--provider", "sim", "--sim-delay", "0", "--no-checkpoints", prompt)
	if res.code != 0 || !strings.Contains(res.stdout, `\u001b]52;c;aGVsbG8=\u0007\u001b]0;pwned\u0007\u001b[2J`) {
		t.Fatalf("rein run --json does not carry the output exactly:\n%s", res)
	}
}

// TestStalledProvider: a provider that opens its answer and then sends nothing is given up on
// once it has been silent for REIN_STALL_TIMEOUT, said on the error stream, and the request is
// retried: the exchange replies rather than waiting for ever. A setting that is not a duration
// is refused, saying what to give.
func TestStalledProvider(t *testing.T) {
	sb := newSandbox(t)
	script := writeScript(t, t.TempDir(),
		map[string]any{"text": "this stream stalls before its first word", "chunks": 3, "delay_ms": 5000},
		map[string]any{"text": "recovered after the stall"})
	stalled := *sb
	stalled.env = append(slices.Clone(sb.env), "REIN_STALL_TIMEOUT=soon")
	if res := stalled.rein(t, "run", "--provider", "sim", "hi"); res.code != exitUsage || !strings.Contains(res.stderr, "REIN_STALL_TIMEOUT") {
		t.Fatalf("a REIN_STALL_TIMEOUT that is not a duration:\n%s", res)
	}
	stalled.env = append(slices.Clone(sb.env), "REIN_STALL_TIMEOUT=300ms")
	start := time.Now()
	res := stalled.rein(t, append(append([]string{"run"}, simArgs(script)...), "--no-checkpoints", "hi")...)
	if res.code != 0 || !strings.Contains(res.stdout, "recovered after the stall") || !strings.Contains(res.stderr, "sent nothing for 300ms") {
		t.Fatalf("rein run against a stalling provider:\n%s", res)
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("the stalled stream was given up on only after %v", took)
	}
}
