package shell

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/reinhq/rein/internal/procs"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/tooltest"
)

// testControl is the control file the tests' tools use: the platform's default, or heldControl
// while TestHeldControl runs the suites again (and in the helper processes it starts).
var testControl = defaultControl

func newTool(t testing.TB, opts Options) (*Tool, string) {
	t.Helper()
	dir := t.TempDir()
	if opts.Sandbox == nil {
		opts.Sandbox = boxFor(t, dir)
	}
	sh, err := New(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	sh.ctl = testControl
	t.Cleanup(func() { sh.Close() })
	return sh, dir
}

// helperEnv is the environment of a helper process running TestHelperRunsBash in dir.
func helperEnv(dir string, extra ...string) []string {
	return append(append(os.Environ(), "REIN_SHELL_HELPER="+dir, "REIN_SHELL_CONTROL="+testControl.name, "REIN_SHELL_SANDBOX="+testSandbox), extra...)
}

func bashCall(command string, timeoutMS int) tool.Call {
	m := map[string]any{"command": command}
	if timeoutMS > 0 {
		m["timeout_ms"] = timeoutMS
	}
	b, _ := json.Marshal(m)
	return tool.Call{ID: "c1", Name: "bash", Args: b}
}

func run(t testing.TB, sh *Tool, command string) tool.Result {
	t.Helper()
	return sh.Run(context.Background(), bashCall(command, 0))
}

// startHelper runs the test named test in a child test process, its environment naming a fresh
// directory in env, and waits until the child has made the file mark there (what it writes to say
// it is ready). It returns the child, the directory and what the child says; the child is killed
// when the test ends.
func startHelper(t *testing.T, test, env, mark string) (*exec.Cmd, string, *output) {
	t.Helper()
	dir := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	helper.Env = append(os.Environ(), env+"="+dir)
	out := &output{}
	helper.Stdout, helper.Stderr = out, out
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { helper.Process.Kill() })
	if !eventually(10*time.Second, func() bool { _, err := os.Stat(filepath.Join(dir, mark)); return err == nil }) {
		t.Fatalf("%s never made %s; it said %s", test, mark, out)
	}
	return helper, dir, out
}

// eventually polls cond every few milliseconds until it holds or the deadline passes. It is the
// only way these tests wait for something outside the process: there is no signal to wait on for
// "this process is gone".
func eventually(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		<-tick.C
	}
}

// alive reports whether pid is a live process (a zombie is dead).
func alive(pid int) bool { return procs.Alive(pid) }

// members lists the live processes of group pgid, the leader included.
func members(pgid int) []int {
	live, _ := procs.Live(pgid)
	pids := make([]int, len(live))
	for i, p := range live {
		pids[i] = p.PID
	}
	return pids
}

func comm(pid int) string {
	p, _ := procs.Read(pid)
	return p.Comm
}

// countComm counts the processes of pids named name.
func countComm(pids []int, name string) int {
	n := 0
	for _, p := range pids {
		if comm(p) == name {
			n++
		}
	}
	return n
}

// notePID is the shell line with which a command under test writes the pid that v expands to
// ($$, $!) into file, with the PID namespace it counts in (on Linux), so that readPID can find
// the same process as this process counts it when a sandbox gives commands a PID namespace.
func notePID(v, file string) string {
	return "echo " + v + " $(readlink /proc/" + v + "/ns/pid 2>/dev/null) > " + file
}

// output collects what a helper process writes to its standard output and error, for a
// failure's message while the helper may still be writing.
type output struct {
	mu sync.Mutex
	b  strings.Builder
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// readPID waits for a file holding a pid, written by a command under test (notePID, or a bare
// pid), and returns the pid as this process counts it. The process must still be running when a
// namespace of its own counts it otherwise.
func readPID(t testing.TB, path string) int {
	t.Helper()
	pid, ns, ok := pidFile(path)
	if !ok {
		t.Fatalf("no pid appeared in %s", path)
	}
	outer, ok := outerPID(pid, ns)
	if !ok {
		t.Fatalf("process %d of the PID namespace %s (%s) is not among this machine's processes", pid, ns, path)
	}
	if outer <= 1 {
		// Never a command's here; and a test's kill(-1) would end every process it may signal.
		t.Fatalf("%s names process %d", path, outer)
	}
	return outer
}

// pidFile waits up to five seconds for path to hold a whole line: a pid, and the PID namespace
// that counts it if notePID wrote it.
func pidFile(path string) (pid int, ns string, ok bool) {
	ok = eventually(5*time.Second, func() bool {
		b, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		f := strings.Fields(string(b))
		if len(f) == 0 || len(f) > 2 {
			return false
		}
		if len(f) == 2 {
			ns = f[1]
		}
		pid, err = strconv.Atoi(f[0])
		return err == nil
	})
	return pid, ns, ok
}

// outerPID finds the process that the PID namespace ns (a link as /proc/*/ns/pid reads, "" for
// this process's own) counts as pid, and returns its pid as this process counts it.
func outerPID(pid int, ns string) (int, bool) {
	own, _ := os.Readlink("/proc/self/ns/pid")
	if ns == "" || ns == own {
		return pid, true
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, _ := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "pid")); l != ns {
			continue
		}
		status, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		for line := range strings.Lines(string(status)) {
			if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
				f := strings.Fields(rest)
				if len(f) > 0 && f[len(f)-1] == strconv.Itoa(pid) {
					return n, true
				}
			}
		}
	}
	return 0, false
}

func TestOutputAndExitCodes(t *testing.T) {
	sh, _ := newTool(t, Options{})
	tests := []struct {
		command string
		want    string
		outcome record.Outcome
		code    int
	}{
		{"echo out; echo err >&2", "out\nerr\n", record.OK, 0},
		{"true", "(no output)", record.OK, 0},
		{"echo partial; exit 7", "partial\n\n[exit code 7]", record.Failed, 7},
		{"exit 1", "[exit code 1]", record.Failed, 1},
		{"cat; echo stdin-was-empty", "stdin-was-empty\n", record.OK, 0},
		{"ls /definitely/not/here 2>&1 | grep -c 'No such'", "1\n", record.OK, 0},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			r := run(t, sh, tt.command)
			if r.Content != tt.want || r.Outcome != tt.outcome || r.ExitCode == nil || *r.ExitCode != tt.code {
				t.Errorf("got %q %s %v, want %q %s %d", r.Content, r.Outcome, r.ExitCode, tt.want, tt.outcome, tt.code)
			}
			if r.IsError != (tt.outcome != record.OK) {
				t.Errorf("IsError = %v for outcome %s", r.IsError, r.Outcome)
			}
		})
	}
}

func TestOutputKeepsHeadAndTail(t *testing.T) {
	sh, _ := newTool(t, Options{HeadBytes: 1000, TailBytes: 1000})
	r := run(t, sh, `printf HEAD; head -c 100000 /dev/zero | tr '\0' x; printf TAIL`)
	if !strings.HasPrefix(r.Content, "HEADxxx") || !strings.HasSuffix(r.Content, "xxxTAIL") {
		t.Errorf("head or tail lost: %.40q … %q", r.Content, r.Content[len(r.Content)-40:])
	}
	// 100008 bytes in all, 1000 kept at each end.
	if !strings.Contains(r.Content, "\n[… 98008 bytes of output elided …]\n") {
		t.Errorf("no elision line with the right count in %d bytes of content", len(r.Content))
	}
	if len(r.Content) > 2100 {
		t.Errorf("content is %d bytes; want about 2000", len(r.Content))
	}
}

func TestWorkingDirectoryPersists(t *testing.T) {
	sh, root := newTool(t, Options{})
	if r := run(t, sh, "mkdir -p sub/deeper && cd sub"); r.Outcome != record.OK {
		t.Fatal(r.Content)
	}
	if r := run(t, sh, "cd deeper; pwd"); r.Content != filepath.Join(root, "sub", "deeper")+"\n" {
		t.Fatalf("pwd after two cds = %q", r.Content)
	}
	// A cd in a call that then fails still holds, as it would in a terminal.
	if r := run(t, sh, "cd ..; false"); r.Outcome != record.Failed {
		t.Fatal(r.Content)
	}
	if got := sh.Dir(); got != filepath.Join(root, "sub") {
		t.Fatalf("Dir = %s", got)
	}
	if err := os.RemoveAll(filepath.Join(root, "sub")); err != nil {
		t.Fatal(err)
	}
	r := run(t, sh, "pwd")
	want := fmt.Sprintf("[the working directory %s no longer exists; this command ran in the workspace root %s]\n%s\n",
		filepath.Join(root, "sub"), root, root)
	if r.Content != want || r.Outcome != record.OK {
		t.Errorf("after the directory vanished: %q, want %q", r.Content, want)
	}
}

func TestEnvironmentDropsSecrets(t *testing.T) {
	env := append(os.Environ(), "ANTHROPIC_API_KEY=sk-ant-x", "OPENAI_API_KEY=sk-x", "OPENROUTER_API_KEY=sk-or-x", "REIN_KEEP=kept")
	sh, _ := newTool(t, Options{Env: env})
	r := run(t, sh, `echo "${ANTHROPIC_API_KEY-unset} ${OPENAI_API_KEY-unset} ${OPENROUTER_API_KEY-unset} $REIN_KEEP"`)
	if r.Content != "unset unset unset kept\n" {
		t.Errorf("got %q", r.Content)
	}
}

func TestBackgroundJobsEndWithTheCall(t *testing.T) {
	sh, root := newTool(t, Options{})
	done := make(chan tool.Result, 1)
	go func() {
		done <- sh.Run(context.Background(), bashCall("sleep 1000 & "+notePID("$!", "bg.pid")+"; until [ -e ended ]; do sleep 0.01; done; echo done", 0))
	}()
	pid := readPID(t, filepath.Join(root, "bg.pid"))
	if err := os.WriteFile(filepath.Join(root, "ended"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.Content != "done\n" || r.Outcome != record.OK {
		t.Fatalf("got %q %s", r.Content, r.Outcome)
	}
	if !eventually(2*time.Second, func() bool { return !alive(pid) }) {
		t.Errorf("background sleep %d outlived its call", pid)
	}
}

func TestTimeoutKillsTheGroup(t *testing.T) {
	sh, root := newTool(t, Options{Grace: 200 * time.Millisecond})
	start := time.Now()
	done := make(chan tool.Result, 1)
	go func() {
		done <- sh.Run(context.Background(), bashCall(notePID("$$", "pgid")+"; echo begun; sleep 1000 & sleep 1000", 1000))
	}()
	pgid := readPID(t, filepath.Join(root, "pgid"))
	r := <-done
	if r.Outcome != record.TimedOut || !r.IsError {
		t.Fatalf("outcome %s, content %q", r.Outcome, r.Content)
	}
	if !strings.HasPrefix(r.Content, "begun\n\n[timed out after 1s;") {
		t.Errorf("content %q", r.Content)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("a 1 s timeout took %v", d)
	}
	// Run returns once the group is killed; the kernel may still be tearing down the last of it.
	if !eventually(time.Second, func() bool { return len(members(pgid)) == 0 }) {
		t.Errorf("group %d still has %v", pgid, members(pgid))
	}
}

// stopCase starts command, waits until the group holds want sleeps, cancels, and checks Run
// returns promptly with Interrupted and the whole group goes within the grace period.
func stopCase(t *testing.T, command string, grace time.Duration) tool.Result {
	t.Helper()
	sh, root := newTool(t, Options{Grace: grace})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan tool.Result, 1)
	go func() { done <- sh.Run(ctx, bashCall(command, 0)) }()

	pgid := readPID(t, filepath.Join(root, "pgid"))
	var pids []int
	if !eventually(5*time.Second, func() bool {
		pids = members(pgid)
		return countComm(pids, "sleep") == 2
	}) {
		t.Fatalf("the sleeps never started: group %d has %v", pgid, pids)
	}
	stopped := time.Now()
	cancel()
	var r tool.Result
	select {
	case r = <-done:
	case <-time.After(grace + time.Second):
		t.Fatal("Run did not return after the ctx was cancelled")
	}
	if d := time.Since(stopped); d > time.Second { // at once, not at the end of the grace (2 s or more); room for a loaded machine
		t.Errorf("Run took %v to return after Stop", d)
	}
	if r.Outcome != record.Interrupted || !r.IsError {
		t.Errorf("outcome %s, content %q", r.Outcome, r.Content)
	}
	if !eventually(grace+time.Second, func() bool {
		for _, p := range pids {
			if alive(p) {
				return false
			}
		}
		return true
	}) {
		for _, p := range pids {
			if alive(p) {
				t.Errorf("process %d (%s) of the group outlived the grace period", p, comm(p))
			}
		}
	}
	t.Logf("group of %d processes gone %v after Stop", len(pids), time.Since(stopped))
	return r
}

func TestStopInterruptsAndEndsTheGroup(t *testing.T) {
	r := stopCase(t, "echo begun; "+notePID("$$", "pgid")+"; sleep 1000 & sleep 1000", 2*time.Second)
	// The output so far is kept (bash may add its own "Terminated" line for the job the Stop
	// ended), followed by the interruption's note.
	if !strings.HasPrefix(r.Content, "begun\n") || !strings.Contains(r.Content, "\n\n[interrupted: cut short when the session was stopped") {
		t.Errorf("content %q", r.Content)
	}
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	// The backgrounded grandchild ignores SIGTERM and has closed its output, so only the SIGKILL
	// after the grace period ends it.
	stopCase(t, notePID("$$", "pgid")+"; (trap '' TERM; exec sleep 1000 >/dev/null 2>&1) & sleep 1000", 2*time.Second)
}

func TestCancelledBeforeStart(t *testing.T) {
	sh, root := newTool(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := sh.Run(ctx, bashCall("touch ran", 0))
	if r.Outcome != record.NotExecuted {
		t.Errorf("outcome %s", r.Outcome)
	}
	if _, err := os.Stat(filepath.Join(root, "ran")); err == nil {
		t.Error("the command ran")
	}
}

// TestNoProcessOutlivesRein kills a process running the bash tool with SIGKILL and checks that
// every process of the command's group goes too.
func TestNoProcessOutlivesRein(t *testing.T) {
	if os.Getenv("REIN_SHELL_HELPER") != "" {
		t.Skip("in the helper")
	}
	dir := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperRunsBash$", "-test.v")
	helper.Env = helperEnv(dir)
	out := &output{}
	helper.Stdout, helper.Stderr = out, out
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer helper.Process.Kill()

	pgid := readPID(t, filepath.Join(dir, "pgid"))
	var pids []int
	if !eventually(5*time.Second, func() bool {
		pids = members(pgid)
		return countComm(pids, "sleep") == 2
	}) {
		t.Fatalf("the sleeps never started: group %d has %v; helper said %s", pgid, pids, out)
	}
	if st, _ := procs.Read(pgid); st.PPID != helper.Process.Pid {
		t.Fatalf("the group leader %d is not the helper's child", pgid)
	}
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	helper.Wait()
	killed := time.Now()
	if !eventually(2*time.Second, func() bool {
		for _, p := range pids {
			if alive(p) {
				return false
			}
		}
		return true
	}) {
		for _, p := range pids {
			if alive(p) {
				t.Errorf("process %d (%s) outlived its rein by 2 s", p, comm(p))
				syscall.Kill(p, syscall.SIGKILL)
			}
		}
	}
	t.Logf("%d processes gone %v after the helper's death", len(pids), time.Since(killed))
}

// TestHelperRunsBash is the helper process of TestNoProcessOutlivesRein, not a test of its own.
func TestHelperRunsBash(t *testing.T) {
	dir := os.Getenv("REIN_SHELL_HELPER")
	if dir == "" {
		t.Skip("helper process for TestNoProcessOutlivesRein")
	}
	testSandbox = os.Getenv("REIN_SHELL_SANDBOX")
	sh, err := New(dir, Options{Sandbox: boxFor(t, dir)})
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("REIN_SHELL_CONTROL") == heldControl.name {
		sh.ctl = heldControl
	}
	command := notePID("$$", "pgid") + "; sleep 1000 & sleep 1000"
	if c := os.Getenv("REIN_SHELL_HELPER_CMD"); c != "" {
		command = c
	}
	// SIGINT is a Stop, as in rein.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	r := sh.Run(ctx, bashCall(command, 0))
	if r.Outcome == record.Interrupted {
		select {} // stopped: wait to be killed, as rein may be during the group's grace period
	}
	t.Fatalf("the helper's command ended: %+v", r)
}

func TestAccess(t *testing.T) {
	sh, _ := newTool(t, Options{})
	a := sh.Access(json.RawMessage(`{"command":"git status && git  push origin main | tee log"}`))
	want := []string{"git status", "git push origin main", "tee log"}
	if a.Effect != tool.EffectExec || a.Opaque || strings.Join(a.Subjects, "|") != strings.Join(want, "|") {
		t.Errorf("got %+v", a)
	}
}

func TestConformance(t *testing.T) {
	sh, _ := newTool(t, Options{})
	tooltest.Conformance(t, sh, `{"command":"echo hi"}`, `{"command":"exit 3","timeout_ms":1000}`,
		`{"command":"true","description":"nothing"}`, `{"command":"sleep 1000","timeout_ms":50}`)
}

func BenchmarkTrue(b *testing.B) {
	sh, _ := newTool(b, Options{})
	call := bashCall("true", 0)
	for b.Loop() {
		if r := sh.Run(context.Background(), call); r.Outcome != record.OK {
			b.Fatal(r.Content)
		}
	}
}

// TestOwnSessionWithoutTerminal: the supervisor ($$) leads the process group and the session of
// every process the command starts, and the command has no controlling terminal.
func TestOwnSessionWithoutTerminal(t *testing.T) {
	sh, root := newTool(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tool.Result, 1)
	go func() {
		done <- sh.Run(ctx, bashCall(`if : </dev/tty; then echo terminal; else echo no terminal; fi 2>/dev/null; `+
			notePID("$$", "sup")+"; sleep 1000 & "+notePID("$!", "sleep.pid")+"; wait", 0))
	}()
	sup, sleep := readPID(t, filepath.Join(root, "sup")), readPID(t, filepath.Join(root, "sleep.pid"))
	for _, pid := range []int{sup, sleep} {
		pgid, err1 := unix.Getpgid(pid)
		sid, err2 := unix.Getsid(pid)
		if pgid != sup || sid != sup {
			t.Errorf("process %d has group %d and session %d (%v, %v); want the supervisor's, %d", pid, pgid, sid, err1, err2, sup)
		}
	}
	cancel()
	if r := <-done; !strings.HasPrefix(r.Content, "no terminal\n") {
		t.Errorf("got %q", r.Content)
	}
}

// TestEscapedProcessDoesNotHangTheCall shows the documented way out of the group: a process that
// starts its own session is not killed, but a call it keeps the output of still returns.
func TestEscapedProcessDoesNotHangTheCall(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	sh, root := newTool(t, Options{})
	start := time.Now()
	// The pid file is written once setsid has done its work, so the escape is complete when the
	// command ends.
	r := run(t, sh, "setsid sh -c 'echo $$ > escaped.pid; exec sleep 1000' & "+
		"until [ -s escaped.pid ]; do sleep 0.01; done; echo done")
	pid := readPID(t, filepath.Join(root, "escaped.pid"))
	defer syscall.Kill(pid, syscall.SIGKILL)
	if !alive(pid) {
		t.Fatal("the escaped process did not escape")
	}
	if r.Content != "done\n" || r.Outcome != record.OK {
		t.Errorf("got %q %s", r.Content, r.Outcome)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the call took %v", d)
	}
}
