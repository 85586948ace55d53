package shell

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/record"
)

// spareOf returns the pid of sh's spare shell once it has one, or fails.
func spareOf(t testing.TB, sh *Tool) int {
	t.Helper()
	pid := 0
	if !eventually(5*time.Second, func() bool {
		sh.spareMu.Lock()
		defer sh.spareMu.Unlock()
		if sh.spare != nil {
			pid = sh.spare.pgid
		}
		return pid != 0
	}) {
		t.Fatal("no spare shell was started")
	}
	return pid
}

// TestSpareRunsTheNextCall: after a call, the next one runs in the spare started meanwhile, and
// its command cannot tell: the working directory the last call left, OLDPWD as a fresh shell has
// it, SECONDS counting from the call rather than from the spare's start, no positional
// parameters, and its own group and session.
func TestSpareRunsTheNextCall(t *testing.T) {
	for _, control := range []control{defaultControl, heldControl} {
		t.Run(control.name, func(t *testing.T) {
			testControl = control
			sh, root := newTool(t, Options{})
			testControl = defaultControl
			if r := run(t, sh, "mkdir sub && cd sub"); r.Outcome != record.OK {
				t.Fatalf("got %q", r.Content)
			}
			spare := spareOf(t, sh)
			time.Sleep(1100 * time.Millisecond) // SECONDS would say 1 in a shell that counted from its start
			r := run(t, sh, `echo "$$ $PWD $OLDPWD $SECONDS $#"; ps -o pgid= -o sid= -p $$`)
			sub := filepath.Join(root, "sub")
			lines := strings.Split(strings.TrimSpace(r.Content), "\n")
			want := strconv.Itoa(spare) + " " + sub + " " + sub + " 0 0"
			if r.Outcome != record.OK || len(lines) != 2 || lines[0] != want {
				t.Fatalf("got %q, want its first line %q", r.Content, want)
			}
			if f := strings.Fields(lines[1]); len(f) != 2 || f[0] != strconv.Itoa(spare) || f[1] != strconv.Itoa(spare) {
				t.Errorf("the spare's group and session: %q, want %d for both", lines[1], spare)
			}
		})
	}
}

// TestSpareKilledWhileWaiting: a spare that someone killed while it waited is passed over; the
// call runs in a shell started for it.
func TestSpareKilledWhileWaiting(t *testing.T) {
	sh, _ := newTool(t, Options{})
	run(t, sh, "true")
	spare := spareOf(t, sh)
	syscall.Kill(spare, syscall.SIGKILL)
	if !eventually(2*time.Second, func() bool {
		sh.spareMu.Lock()
		defer sh.spareMu.Unlock()
		select {
		case <-sh.spare.ended:
			return true
		default:
			return false
		}
	}) {
		t.Fatal("the killed spare was not seen to end")
	}
	r := run(t, sh, "echo $$")
	if r.Outcome != record.OK || strings.TrimSpace(r.Content) == strconv.Itoa(spare) {
		t.Errorf("got %q %s", r.Content, r.Outcome)
	}
}

// TestSpareEnds: Close ends a Tool's spare and starts no other; a spare left waiting past
// spareIdle ends by itself; and the process keeps at most maxSpares, the Tool that ran a command
// last taking the place of the one whose spare waited longest.
func TestSpareEnds(t *testing.T) {
	sh, _ := newTool(t, Options{})
	run(t, sh, "true")
	spare := spareOf(t, sh)
	sh.Close()
	if !eventually(2*time.Second, func() bool { return !alive(spare) }) {
		t.Errorf("the spare %d outlived Close", spare)
	}
	run(t, sh, "true")
	time.Sleep(50 * time.Millisecond)
	if sh.spare != nil {
		t.Error("a closed Tool started a spare")
	}

	old := spareIdle
	spareIdle = 100 * time.Millisecond
	defer func() { spareIdle = old }()
	sh2, _ := newTool(t, Options{})
	run(t, sh2, "true")
	spare = spareOf(t, sh2)
	if !eventually(3*time.Second, func() bool { return !alive(spare) }) {
		t.Errorf("the idle spare %d did not end", spare)
	}
	spareIdle = old

	var first, last *Tool
	for i := range maxSpares + 3 {
		s, _ := newTool(t, Options{})
		run(t, s, "true")
		spareOf(t, s)
		if n := spares.Load(); n > maxSpares {
			t.Errorf("%d spares, want at most %d", n, maxSpares)
		}
		if i == 0 {
			first = s
		}
		last = s
	}
	first.spareMu.Lock()
	if first.spare != nil {
		t.Error("the longest-waiting spare was kept at the cap")
	}
	first.spareMu.Unlock()
	spareOf(t, last)
}

// TestSpareDiesWithRein: rein killed with SIGKILL takes its spare with it, as it takes a command
// (TestSandboxedSuites runs it again with a supervisor in a PID namespace of its own as the spare).
func TestSpareDiesWithRein(t *testing.T) {
	if os.Getenv("REIN_SHELL_SPARE_HELPER") != "" {
		t.Skip("in the helper")
	}
	dir := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperKeepsASpare$", "-test.v")
	helper.Env = append(os.Environ(), "REIN_SHELL_SPARE_HELPER="+dir, "REIN_SHELL_SANDBOX="+testSandbox)
	out := &output{}
	helper.Stdout, helper.Stderr = out, out
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer helper.Process.Kill()
	if !eventually(10*time.Second, func() bool { _, err := os.Stat(filepath.Join(dir, "spare")); return err == nil }) {
		t.Fatalf("the helper never had a spare; it said %s", out)
	}
	spare := readPID(t, filepath.Join(dir, "spare"))
	if !alive(spare) {
		t.Fatalf("the spare %d is not running", spare)
	}
	helper.Process.Signal(syscall.SIGKILL)
	helper.Wait()
	if !eventually(2*time.Second, func() bool { return !alive(spare) }) {
		syscall.Kill(spare, syscall.SIGKILL)
		t.Errorf("the spare %d outlived its rein by 2 s", spare)
	}
}

// TestHelperKeepsASpare is the helper process of TestSpareDiesWithRein.
func TestHelperKeepsASpare(t *testing.T) {
	dir := os.Getenv("REIN_SHELL_SPARE_HELPER")
	if dir == "" {
		t.Skip("helper process for TestSpareDiesWithRein")
	}
	testSandbox = os.Getenv("REIN_SHELL_SANDBOX")
	sh, err := New(dir, Options{Sandbox: boxFor(t, dir)})
	if err != nil {
		t.Fatal(err)
	}
	sh.Run(context.Background(), bashCall("true", 0))
	pid := spareOf(t, sh)
	if err := os.WriteFile(filepath.Join(dir, "spare"), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {} // wait to be killed
}

// TestCommandWithNUL: a command holding a NUL byte is refused, saying why, and runs nothing.
func TestCommandWithNUL(t *testing.T) {
	sh, root := newTool(t, Options{})
	r := run(t, sh, "touch made\x00; echo hidden")
	if r.Outcome != record.Failed || !strings.Contains(r.Content, "NUL") {
		t.Errorf("got %q %s", r.Content, r.Outcome)
	}
	if _, err := os.Stat(filepath.Join(root, "made")); err == nil {
		t.Error("the command ran")
	}
}

// TestContainedSpare: under a sandbox that contains each command in a PID namespace of its own
// through rein's helper, the next call runs in the spare supervisor started meanwhile, inside the
// namespace the spare made, and its command cannot tell: the directory the last call left, OLDPWD
// as a fresh shell has it, SECONDS counting from the call, no positional parameters. Its
// namespace is its own: nothing else runs there. The spare is taken, and the next one made.
func TestContainedSpare(t *testing.T) {
	requireSandbox(t, true)
	if !slices.Contains(containKinds(t), "contained") {
		t.Skip("no PID namespace per command here")
	}
	testSandbox = "contained"
	defer func() { testSandbox = "" }()
	sh, root := newTool(t, Options{})
	if r := run(t, sh, "mkdir sub && cd sub"); r.Outcome != record.OK {
		t.Fatalf("got %q", r.Content)
	}
	spare := spareOf(t, sh)
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid_for_children", spare))
	if err != nil {
		t.Fatal(err)
	}
	if self, _ := os.Readlink("/proc/self/ns/pid"); ns == self {
		t.Fatalf("the spare %d makes its children in rein's PID namespace %s", spare, ns)
	}
	time.Sleep(1100 * time.Millisecond) // SECONDS would say 1 in a shell that counted from its start
	r := run(t, sh, `echo "$PWD $OLDPWD $SECONDS $#"; readlink /proc/self/ns/pid; ls /proc | grep -c '^[0-9]'`)
	sub := filepath.Join(root, "sub")
	lines := strings.Split(strings.TrimSpace(r.Content), "\n")
	if r.Outcome != record.OK || len(lines) != 3 || lines[0] != sub+" "+sub+" 0 0" {
		t.Fatalf("got %q, want its first line %q", r.Content, sub+" "+sub+" 0 0")
	}
	if lines[1] != ns {
		t.Errorf("the call ran in PID namespace %s, not its spare's %s", lines[1], ns)
	}
	// The supervisor, the waiter, the command's shell, ls and grep; bash may run the last two
	// in a subshell of their own each.
	if n, _ := strconv.Atoi(lines[2]); n < 4 || n > 7 {
		t.Errorf("%s processes in the call's namespace, want the call's own", lines[2])
	}
	if next := spareOf(t, sh); next == spare {
		t.Errorf("the spare %d was not taken", spare)
	}
}
