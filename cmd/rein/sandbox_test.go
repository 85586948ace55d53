package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/record"
	osbox "github.com/reinhq/rein/internal/sandbox"
)

// requireOSSandbox skips a test this machine cannot run for want of Landlock or seccomp (or of a
// PID namespace, with contain), saying why, unless REIN_REQUIRE_SANDBOX is set: then it fails.
func requireOSSandbox(t *testing.T, contain bool) {
	t.Helper()
	sup := osbox.Check()
	why := ""
	if err := sup.Enforce(osbox.Policy{Mode: osbox.WorkspaceWrite}); err != nil {
		why = err.Error()
	} else if contain && sup.Contain == "" {
		why = "processes cannot be contained here: " + sup.ContainWhy
	}
	if why == "" {
		return
	}
	if os.Getenv("REIN_REQUIRE_SANDBOX") != "" {
		t.Fatalf("REIN_REQUIRE_SANDBOX is set, and %s", why)
	}
	t.Skipf("%s (set REIN_REQUIRE_SANDBOX=1 to make this a failure)", why)
}

// sessionOf reads back the one session under sb: its records and its fold.
func sessionOf(t *testing.T, sb *sandbox) (string, []record.Record, *fold.State) {
	t.Helper()
	paths := sb.records(t)
	if len(paths) != 1 {
		t.Fatalf("%d records", len(paths))
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	recs, st, err := replay(b)
	if err != nil {
		t.Fatal(err)
	}
	return paths[0], recs, st
}

// toolResults lists the outcome and content of every tool result in recs, in order.
func toolResults(recs []record.Record) (outcomes []record.Outcome, contents []string) {
	for _, r := range recs {
		if tr, ok := r.Body.(*record.ToolResults); ok {
			for _, res := range tr.Results {
				outcomes = append(outcomes, res.Outcome)
				contents = append(contents, res.Content)
			}
		}
	}
	return outcomes, contents
}

// TestSandboxByDefault: with no flag, rein confines commands where the machine can: a write in
// the workspace lands, one outside and a TCP connection to 127.0.0.1 fail; the record, rein show
// and the system prompt say the sandbox. A resume with --sandbox off lifts it, says so and
// records it.
func TestSandboxByDefault(t *testing.T) {
	requireOSSandbox(t, false)
	sb := newSandbox(t)
	out := t.TempDir()
	sb.env = append(sb.env, "OUT="+out)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	conns := make(chan struct{}, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- struct{}{}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := writeScript(t, t.TempDir(),
		map[string]any{"tool_calls": []any{bash(`echo in > inside && echo wrote inside`)}},
		map[string]any{"tool_calls": []any{bash(`echo out > "$OUT/outside"`)}},
		map[string]any{"tool_calls": []any{bash(fmt.Sprintf(`echo hi > /dev/tcp/127.0.0.1/%d`, port))}},
		map[string]any{"text": "done"},
	)
	res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "write")...)
	if res.code != 0 {
		t.Fatalf("rein run:\n%s", res)
	}
	if _, err := os.Stat(filepath.Join(sb.ws, "inside")); err != nil {
		t.Errorf("the write inside the workspace did not land: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "outside")); err == nil {
		t.Errorf("a command wrote outside the workspace")
	}
	if len(conns) > 0 {
		t.Errorf("a command reached 127.0.0.1:%d", port)
	}
	path, recs, st := sessionOf(t, sb)
	outcomes, contents := toolResults(recs)
	want := []record.Outcome{record.OK, record.Failed, record.Failed}
	if !slices.Equal(outcomes, want) || !strings.Contains(contents[1], "Permission denied") || !strings.Contains(contents[2], "not permitted") {
		t.Errorf("results %v %q", outcomes, contents)
	}
	if got := st.Meta().Sandbox; got != "workspace-write, no network" {
		t.Errorf("the record says sandbox %q", got)
	}
	if !strings.Contains(st.System(), "Commands run in an OS sandbox (workspace-write, no network)") {
		t.Errorf("the system prompt does not say the sandbox:\n%s", st.System())
	}
	id := filepath.Base(filepath.Dir(path))
	if show := sb.rein(t, "show", id); !strings.Contains(show.stdout, "sandbox workspace-write, no network\n") {
		t.Errorf("rein show:\n%s", show)
	}

	script = writeScript(t, t.TempDir(),
		map[string]any{"tool_calls": []any{bash(`echo out > "$OUT/outside"`)}},
		map[string]any{"text": "done"},
	)
	res = sb.rein(t, append(append([]string{"resume", id}, simArgs(script)...), "--sandbox", "off", "again")...)
	if res.code != 0 || !strings.Contains(res.stderr, "sandbox changes from workspace-write, no network to off (recorded)") {
		t.Fatalf("rein resume --sandbox off:\n%s", res)
	}
	if _, err := os.Stat(filepath.Join(out, "outside")); err != nil {
		t.Errorf("with --sandbox off the command could not write outside: %v", err)
	}
	if _, _, st := sessionOf(t, sb); st.Meta().Sandbox != "off" {
		t.Errorf("after the resume the record says sandbox %q", st.Meta().Sandbox)
	}
	if show := sb.rein(t, "show", id); !strings.Contains(show.stdout, "sandbox off\n") {
		t.Errorf("rein show after the resume:\n%s", show)
	}
}

// TestSandboxUnsupportedRefuses: on a machine that cannot enforce the sandbox (the test switch
// REIN_SANDBOX_UNSUPPORTED), a sandbox asked for answers every command denied, with the reason and
// the way out, and runs none; with no mode named, rein runs them without one and says so.
func TestSandboxUnsupportedRefuses(t *testing.T) {
	sb := newSandbox(t)
	sb.env = append(sb.env, "REIN_SANDBOX_UNSUPPORTED=forced by the test")
	script := writeScript(t, t.TempDir(), map[string]any{"tool_calls": []any{bash(`touch ran`)}}, map[string]any{"text": "done"})
	res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "--sandbox", "workspace-write", "touch")...)
	if res.code != 0 {
		t.Fatalf("rein run:\n%s", res)
	}
	if _, err := os.Stat(filepath.Join(sb.ws, "ran")); err == nil {
		t.Error("the command ran without the sandbox it asked for")
	}
	_, recs, st := sessionOf(t, sb)
	outcomes, contents := toolResults(recs)
	if len(outcomes) != 1 || outcomes[0] != record.Denied || !strings.Contains(contents[0], "forced by the test") || !strings.Contains(contents[0], "--sandbox off") {
		t.Errorf("results %v %q", outcomes, contents)
	}
	if st.Meta().Sandbox != "workspace-write, no network" {
		t.Errorf("recorded sandbox %q", st.Meta().Sandbox)
	}

	sb = newSandbox(t)
	sb.env = append(sb.env, "REIN_SANDBOX_UNSUPPORTED=forced by the test")
	res = sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "touch")...)
	if res.code != 0 || !strings.Contains(res.stderr, "commands run without a sandbox") {
		t.Fatalf("rein run with the default:\n%s", res)
	}
	if _, err := os.Stat(filepath.Join(sb.ws, "ran")); err != nil {
		t.Errorf("with the sandbox off by default, the command did not run: %v", err)
	}
	if _, _, st := sessionOf(t, sb); st.Meta().Sandbox != "off" {
		t.Errorf("recorded sandbox %q", st.Meta().Sandbox)
	}
	rep := sb.rein(t, "sandbox")
	if rep.code != 0 || !strings.Contains(rep.stdout, "not available") || !strings.Contains(rep.stdout, "forced by the test") {
		t.Errorf("rein sandbox:\n%s", rep)
	}
}

// TestSandboxFlagsRefused: a mode rein does not know, a directory that is not one, a sandbox
// shaped and turned off at once, and a bad config value are usage errors naming what was wrong.
func TestSandboxFlagsRefused(t *testing.T) {
	sb := newSandbox(t)
	file := filepath.Join(sb.ws, "file")
	os.WriteFile(file, nil, 0o644)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--sandbox", "strict"}, `unknown sandbox mode "strict"`},
		{[]string{"--sandbox-write", "/no/such/dir"}, "--sandbox-write /no/such/dir"},
		{[]string{"--sandbox-write", "file"}, "not a directory"},
		{[]string{"--sandbox", "off", "--allow-network"}, "--sandbox off turns it off"},
	} {
		res := sb.rein(t, append(append([]string{"run"}, simArgs("")...), append(tt.args, "hello")...)...)
		if res.code != exitUsage || !strings.Contains(res.stderr, tt.want) {
			t.Errorf("%v: want exit 2 saying %q\n%s", tt.args, tt.want, res)
		}
	}
	if len(sb.records(t)) != 0 {
		t.Error("a refused flag left a session behind")
	}
	cfg := filepath.Join(filepath.Dir(sb.home), ".config", "rein")
	os.MkdirAll(cfg, 0o755)
	os.WriteFile(filepath.Join(cfg, "config.toml"), []byte("sandbox = \"bogus\"\n"), 0o644)
	if res := sb.rein(t, append(append([]string{"run"}, simArgs("")...), "hello")...); res.code != exitUsage || !strings.Contains(res.stderr, "sandbox") {
		t.Errorf("a bad config value: %s", res)
	}
}

// TestSandboxConfig: the config file's sandbox keys choose the sandbox as the flags do, and a flag
// overrides them.
func TestSandboxConfig(t *testing.T) {
	sb := newSandbox(t)
	extra := t.TempDir()
	cfg := filepath.Join(filepath.Dir(sb.home), ".config", "rein")
	os.MkdirAll(cfg, 0o755)
	os.WriteFile(filepath.Join(cfg, "config.toml"), []byte(fmt.Sprintf("sandbox = \"read-only\"\nallow_network = true\nsandbox_write = [%q]\n", extra)), 0o644)
	sb.env = append(sb.env, "REIN_SANDBOX_UNSUPPORTED=forced by the test") // the choice is recorded, whatever the machine
	script := writeScript(t, t.TempDir(), map[string]any{"text": "done"})
	if res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "hello")...); res.code != 0 {
		t.Fatalf("rein run:\n%s", res)
	}
	_, _, st := sessionOf(t, sb)
	if want := "read-only, network allowed, also writes " + extra; st.Meta().Sandbox != want {
		t.Errorf("recorded sandbox %q, want %q", st.Meta().Sandbox, want)
	}
}

// TestSandboxEndsDaemonWithRein: rein killed with SIGKILL while a command's daemon (setsid) runs
// takes the daemon with it: the PID namespace the sandbox gives each command dies with its first
// process. Without the sandbox the same daemon outlives rein, which is what the test can fail on.
func TestSandboxEndsDaemonWithRein(t *testing.T) {
	requireOSSandbox(t, true)
	for _, mode := range []string{"off", "workspace-write"} {
		t.Run(mode, func(t *testing.T) {
			sb := newSandbox(t)
			m := fmt.Sprintf("1000.%d", rand.Uint32())
			started := readFIFO(t, filepath.Join(sb.ws, "started.fifo"))
			script := writeScript(t, t.TempDir(),
				map[string]any{"tool_calls": []any{bash(`setsid sleep ` + m + ` >/dev/null 2>&1 & sleep 0.2; echo go > started.fifo; sleep 1000`)}},
				map[string]any{"text": "done"})
			c := sb.startRun(t, append(append([]string{"run"}, simArgs(script)...), "--json", "--sandbox", mode, "go")...)
			select {
			case <-started:
			case <-time.After(30 * time.Second):
				t.Fatalf("the command did not start\n%s", c.stderr)
			}
			if len(markedProcs(m)) != 1 {
				t.Fatalf("the daemon is not running: %v", markedProcs(m))
			}
			c.cmd.Process.Signal(syscall.SIGKILL)
			c.wait(t, 10*time.Second)
			gone := waitFor(2*time.Second, func() bool { return len(markedProcs(m)) == 0 })
			left := markedProcs(m)
			for _, p := range left {
				syscall.Kill(p, syscall.SIGKILL)
			}
			if mode == "off" && gone {
				t.Fatal("without the sandbox the daemon did not outlive rein: the test cannot fail")
			}
			if mode != "off" && !gone {
				t.Errorf("the daemon %v outlived rein", left)
			}
		})
	}
}

// markedProcs lists the live processes one of whose arguments is m.
func markedProcs(m string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && slices.Contains(strings.Split(string(b), "\x00"), m) {
			if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// waitFor polls cond every few milliseconds until it holds (true) or d passes (false).
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
