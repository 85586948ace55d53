package shell

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
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
	"github.com/reinhq/rein/internal/sandbox"
	"github.com/reinhq/rein/internal/tool"
)

// testSandbox is the sandbox the tests' tools run under: "" for none, or a kind of kindBox's.
// TestSandboxedSuites sets it.
var testSandbox string

// boxFor makes the sandbox testSandbox names for a tool in workspace dir, or nil.
func boxFor(t testing.TB, dir string) *sandbox.Sandbox {
	if testSandbox == "" {
		return nil
	}
	return kindBox(t, testSandbox, sandbox.Policy{Mode: sandbox.WorkspaceWrite}, dir)
}

// newBox makes a sandbox for workspace dir, with its temporary directory under a directory of the
// test's, closed when the test ends. A nil sup means what the machine supports.
func newBox(t testing.TB, p sandbox.Policy, dir string, sup *sandbox.Support) *sandbox.Sandbox {
	t.Helper()
	box, err := sandbox.New(p, sandbox.Config{Workspace: dir, TempRoot: t.TempDir(), Support: sup})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { box.Close() })
	return box
}

// requireSandbox skips a test this machine cannot run for want of Landlock or seccomp (or of
// containment, if contain), saying why, unless REIN_REQUIRE_SANDBOX is set: then it fails.
func requireSandbox(t testing.TB, contain bool) {
	t.Helper()
	sup := sandbox.Check()
	why := ""
	if err := sup.Enforce(sandbox.Policy{Mode: sandbox.WorkspaceWrite}); err != nil {
		why = err.Error()
	} else if contain && sup.Contain == "" && sup.Cgroups == "" {
		why = "processes cannot be contained here: " + sup.ContainWhy + "; " + sup.CgroupsWhy
	}
	if why == "" {
		return
	}
	if os.Getenv("REIN_REQUIRE_SANDBOX") != "" {
		t.Fatalf("REIN_REQUIRE_SANDBOX is set, and %s", why)
	}
	t.Skipf("%s (set REIN_REQUIRE_SANDBOX=1 to make this a failure)", why)
}

// TestSandboxedSuites runs the suites again with every command confined: Landlock and seccomp
// alone, then with the PID namespace too (where a command's $$ is counted by its namespace, and
// readPID finds the same process as the test counts it). Exit statuses, working directories,
// output, Stop, timeouts and rein killed with SIGKILL hold as without a sandbox.
func TestSandboxedSuites(t *testing.T) {
	requireSandbox(t, false)
	defer func() { testSandbox = "" }()
	testSandbox = "confined"
	for _, tt := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"OutputAndExitCodes", TestOutputAndExitCodes},
		{"OutputKeepsHeadAndTail", TestOutputKeepsHeadAndTail},
		{"WorkingDirectoryPersists", TestWorkingDirectoryPersists},
		{"EnvironmentDropsSecrets", TestEnvironmentDropsSecrets},
		{"BackgroundJobsEndWithTheCall", TestBackgroundJobsEndWithTheCall},
		{"TimeoutKillsTheGroup", TestTimeoutKillsTheGroup},
		{"StopInterruptsAndEndsTheGroup", TestStopInterruptsAndEndsTheGroup},
		{"StopEscalatesToSIGKILL", TestStopEscalatesToSIGKILL},
		{"CancelledBeforeStart", TestCancelledBeforeStart},
		{"NoProcessOutlivesRein", TestNoProcessOutlivesRein},
		{"StopThenReinKilled", TestStopThenReinKilled},
		{"StopKeepsTheGoodbye", TestStopKeepsTheGoodbye},
		{"StopGivesBackgroundProcessesTheirGrace", TestStopGivesBackgroundProcessesTheirGrace},
		{"OwnSessionWithoutTerminal", TestOwnSessionWithoutTerminal},
		{"Conformance", TestConformance},
		{"ControlLeavesNoFile", TestControlLeavesNoFile},
	} {
		t.Run("confined/"+tt.name, tt.f)
	}
	for _, kind := range containKinds(t) {
		testSandbox = kind
		suite := []struct {
			name string
			f    func(*testing.T)
		}{
			{"OutputAndExitCodes", TestOutputAndExitCodes},
			{"OutputKeepsHeadAndTail", TestOutputKeepsHeadAndTail},
			{"WorkingDirectoryPersists", TestWorkingDirectoryPersists},
			{"EnvironmentDropsSecrets", TestEnvironmentDropsSecrets},
			{"BackgroundJobsEndWithTheCall", TestBackgroundJobsEndWithTheCall},
			{"TimeoutKillsTheGroup", TestTimeoutKillsTheGroup},
			{"StopInterruptsAndEndsTheGroup", TestStopInterruptsAndEndsTheGroup},
			{"StopEscalatesToSIGKILL", TestStopEscalatesToSIGKILL},
			{"CancelledBeforeStart", TestCancelledBeforeStart},
			{"NoProcessOutlivesRein", TestNoProcessOutlivesRein},
			{"StopThenReinKilled", TestStopThenReinKilled},
			{"StopGivesBackgroundProcessesTheirGrace", TestStopGivesBackgroundProcessesTheirGrace},
			{"StopDuringTimeoutGrace", TestStopDuringTimeoutGrace},
			{"OwnSessionWithoutTerminal", TestOwnSessionWithoutTerminal},
			{"Conformance", TestConformance},
			{"ControlLeavesNoFile", TestControlLeavesNoFile},
			{"SpareKilledWhileWaiting", TestSpareKilledWhileWaiting},
			{"SpareEnds", TestSpareEnds},
			{"SpareDiesWithRein", TestSpareDiesWithRein},
		}
		for _, tt := range suite {
			t.Run(kind+"/"+tt.name, tt.f)
		}
	}
}

// snapshot lists what dir holds, names and contents, to tell whether anything changed there.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %v %d", rel, fi.Mode(), fi.Size())
		if fi.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", data)
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}

// escapes are commands that write outside the workspace ($OUT) by every road: bash itself, a
// child process, a grandchild, a symbolic link, a hard link, a relative path after cd /, a
// truncation, a move, a removal.
var escapes = []struct{ name, command string }{
	{"redirect", `echo x > "$OUT/new"`},
	{"append", `echo x >> "$OUT/keep"`},
	{"child process", `touch "$OUT/touched"`},
	{"grandchild", `bash -c 'sh -c "echo x > \"\$OUT/grand\""'`},
	{"dd", `dd if=/dev/zero of="$OUT/dd" bs=1 count=4 2>&1`},
	{"symlink", `ln -s "$OUT" link && echo x > link/via-link`},
	{"hard link", `ln "$OUT/keep" hard && echo x >> hard`},
	{"after cd /", `cd / && echo x > "${OUT#/}/from-root"`},
	{"truncate", `truncate -s 0 "$OUT/keep"`},
	{"mkdir", `mkdir "$OUT/dir"`},
	{"rm", `rm -f "$OUT/keep"`},
	{"mv out", `echo x > moved && mv moved "$OUT/moved"`},
	{"cp", `echo x > copied && cp copied "$OUT/"`},
}

// TestSandboxWrites: no road out of the workspace writes. Each command is run unconfined first,
// in a workspace of its own, to show that it does write there without the sandbox.
func TestSandboxWrites(t *testing.T) {
	requireSandbox(t, false)
	for _, kind := range sandboxKinds(t) {
		for _, e := range escapes {
			t.Run(kind+"/"+e.name, func(t *testing.T) {
				out := t.TempDir()
				if err := os.WriteFile(filepath.Join(out, "keep"), []byte("kept\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				before := snapshot(t, out)
				env := append(os.Environ(), "OUT="+out)

				open, _ := newTool(t, Options{Env: env, Sandbox: nil})
				run(t, open, e.command)
				if snapshot(t, out) == before {
					t.Fatalf("without a sandbox the command changed nothing outside: the test cannot fail")
				}
				os.RemoveAll(out)
				os.MkdirAll(out, 0o755)
				os.WriteFile(filepath.Join(out, "keep"), []byte("kept\n"), 0o644)

				ws := t.TempDir()
				sh, err := New(ws, Options{Env: env, Sandbox: kindBox(t, kind, sandbox.Policy{Mode: sandbox.WorkspaceWrite}, ws)})
				if err != nil {
					t.Fatal(err)
				}
				r := run(t, sh, e.command)
				if after := snapshot(t, out); after != before {
					t.Errorf("confined, %q wrote outside the workspace:\nbefore %s\nafter %s\n(it said %q)", e.command, before, after, r.Content)
				}
				if r.Outcome == record.OK {
					t.Errorf("confined, %q succeeded: %q", e.command, r.Content)
				}
			})
		}
	}
}

// sandboxKinds are the sandboxes a test runs under: Landlock and seccomp alone, and with each way
// of holding a command's processes the machine grants (containKinds).
func sandboxKinds(t *testing.T) []string {
	return append([]string{"confined"}, containKinds(t)...)
}

// containKinds are the ways of holding every process of a command this machine grants:
// "contained", the helper starting each command in a PID namespace of its own, and "held", the
// sandbox's confined thread starting each command in the sandbox's PID namespace and a cgroup of
// its own. In both, $$ is not the shell's pid as rein sees it.
func containKinds(t testing.TB) []string {
	var kinds []string
	sup := sandbox.Check()
	if sup.Contain != "" {
		kinds = append(kinds, "contained")
	} else {
		t.Logf("not run contained: %s", sup.ContainWhy)
	}
	if sup.Cgroups != "" {
		kinds = append(kinds, "held")
	} else {
		t.Logf("not run held: %s", sup.CgroupsWhy)
	}
	return kinds
}

// kindBox makes a sandbox of a kind for workspace ws under policy p: "confined" for Landlock and
// seccomp alone, in a helper per command (so $$ is the shell's pid as rein sees it, which many
// tests read), or one of containKinds.
func kindBox(t testing.TB, kind string, p sandbox.Policy, ws string) *sandbox.Sandbox {
	sup := sandbox.Check()
	switch kind {
	case "confined":
		sup.Contain, sup.ContainWhy, sup.Namespaces = "", "left out by the test", false
		sup.Cgroups, sup.CgroupsWhy = "", "left out by the test"
	case "contained":
		sup.Cgroups, sup.CgroupsWhy = "", "left out by the test"
	case "held":
		if sup.Cgroups == "" {
			t.Fatalf("no cgroup for commands here: %s", sup.CgroupsWhy)
		}
	default:
		t.Fatalf("no sandbox kind %q", kind)
	}
	box := newBox(t, p, ws, &sup)
	if box.Holds() != (kind == "held") {
		t.Fatalf("kind %s: the sandbox holds its commands: %v", kind, box.Holds())
	}
	return box
}

// TestSandboxStaysWritable: the workspace, the temporary directory and /dev/null take every kind
// of write; in read-only mode, the temporary directory still does and the workspace does not.
func TestSandboxStaysWritable(t *testing.T) {
	requireSandbox(t, false)
	const inside = `echo a > f && echo b >> f && mkdir -p d/e && mv f d/ && ln -s d/f l && ln d/f h && cat l && ` +
		`truncate -s 1 h && rm l h && rm -r d && mkfifo p && rm p && echo c > /dev/null && ` +
		`echo t > "$TMPDIR/t" && mv "$TMPDIR/t" "$TMPDIR/u" && cat "$TMPDIR/u" && ` +
		`cat <<EOF
heredoc
EOF`
	for _, kind := range sandboxKinds(t) {
		t.Run(kind, func(t *testing.T) {
			ws := t.TempDir()
			box := kindBox(t, kind, sandbox.Policy{Mode: sandbox.WorkspaceWrite}, ws)
			sh, err := New(ws, Options{Sandbox: box})
			if err != nil {
				t.Fatal(err)
			}
			if r := run(t, sh, inside); r.Outcome != record.OK || r.Content != "a\nb\nt\nheredoc\n" {
				t.Errorf("workspace-write: %s %q", r.Outcome, r.Content)
			}
			if r := run(t, sh, `echo "$TMPDIR"`); r.Content != box.TempDir()+"\n" {
				t.Errorf("TMPDIR is %q, want the sandbox's %s", r.Content, box.TempDir())
			}

			ro := t.TempDir()
			sh, err = New(ro, Options{Sandbox: kindBox(t, kind, sandbox.Policy{Mode: sandbox.ReadOnly}, ro)})
			if err != nil {
				t.Fatal(err)
			}
			if r := run(t, sh, `echo t > "$TMPDIR/t" && cat "$TMPDIR/t" && ls`); r.Outcome != record.OK || r.Content != "t\n(no output)" && r.Content != "t\n" {
				t.Errorf("read-only, the temporary directory: %s %q", r.Outcome, r.Content)
			}
			if r := run(t, sh, `echo a > f`); r.Outcome != record.Failed || !strings.Contains(r.Content, "Permission denied") {
				t.Errorf("read-only, a write to the workspace: %s %q", r.Outcome, r.Content)
			}
			if _, err := os.Stat(filepath.Join(ro, "f")); err == nil {
				t.Error("read-only mode let a command write in the workspace")
			}
		})
	}
}

// TestSandboxExtraWritable: --sandbox-write adds a directory a command may write.
func TestSandboxExtraWritable(t *testing.T) {
	requireSandbox(t, false)
	ws, extra := t.TempDir(), t.TempDir()
	sh, err := New(ws, Options{Sandbox: newBox(t, sandbox.Policy{Mode: sandbox.WorkspaceWrite, Write: []string{extra}}, ws, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if r := run(t, sh, `echo x > "`+extra+`/f" && cat "`+extra+`/f"`); r.Outcome != record.OK || r.Content != "x\n" {
		t.Errorf("%s %q", r.Outcome, r.Content)
	}
}

// listeners opens a TCP listener and a UDP socket on 127.0.0.1 and counts what reaches them.
type listeners struct {
	tcp   net.Listener
	udp   net.PacketConn
	conns chan struct{}
	grams chan struct{}
}

func listen(t *testing.T) *listeners {
	t.Helper()
	l := &listeners{conns: make(chan struct{}, 100), grams: make(chan struct{}, 100)}
	var err error
	if l.tcp, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if l.udp, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.tcp.Close(); l.udp.Close() })
	go func() {
		for {
			c, err := l.tcp.Accept()
			if err != nil {
				return
			}
			l.conns <- struct{}{}
			c.Close()
		}
	}()
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := l.udp.ReadFrom(buf); err != nil {
				return
			}
			l.grams <- struct{}{}
		}
	}()
	return l
}

// reached counts what reached the listeners: a datagram may arrive a moment after the command
// ended, so a count short of want waits a little for the rest.
func (l *listeners) reached(want int) (conns, grams int) {
	deadline := time.After(time.Second)
	for conns+grams < want {
		select {
		case <-l.conns:
			conns++
		case <-l.grams:
			grams++
		case <-deadline:
			return
		}
	}
	for {
		select {
		case <-l.conns:
			conns++
		case <-l.grams:
			grams++
		default:
			return
		}
	}
}

// TestSandboxNetwork: TCP and UDP to 127.0.0.1, from bash and from a Go program, and a TCP
// listener, all fail unless the network is allowed; with it allowed, all reach.
func TestSandboxNetwork(t *testing.T) {
	requireSandbox(t, false)
	l := listen(t)
	tcp, udp := l.tcp.Addr().String(), l.udp.LocalAddr().String()
	tport, uport := tcp[strings.LastIndexByte(tcp, ':')+1:], udp[strings.LastIndexByte(udp, ':')+1:]
	probe := func(op string) string {
		return fmt.Sprintf(`REIN_SHELL_NETPROBE=%q %q`, op, os.Args[0])
	}
	attempts := []string{
		`echo hi > /dev/tcp/127.0.0.1/` + tport,
		`echo hi > /dev/udp/127.0.0.1/` + uport,
		probe("dial tcp " + tcp),
		probe("send udp " + udp),
		probe("listen tcp 127.0.0.1:0"),
	}
	for _, kind := range sandboxKinds(t) {
		for _, allowed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/network allowed %v", kind, allowed), func(t *testing.T) {
				ws := t.TempDir()
				sh, err := New(ws, Options{Sandbox: kindBox(t, kind, sandbox.Policy{Mode: sandbox.WorkspaceWrite, Network: allowed}, ws)})
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range attempts {
					r := run(t, sh, a)
					if allowed != (r.Outcome == record.OK) {
						t.Errorf("network allowed %v: %s: %s %q", allowed, a, r.Outcome, r.Content)
					}
				}
				conns, grams := l.reached(map[bool]int{true: 4}[allowed])
				want := map[bool]int{true: 2}[allowed]
				if conns != want || grams != want {
					t.Errorf("network allowed %v: %d connections and %d datagrams reached the listeners, want %d of each", allowed, conns, grams, want)
				}
			})
		}
	}
}

// marker is an argument no other process has: sleep takes fractions, so "sleep 1000.N" sleeps as
// long as "sleep 1000" and names its process.
func marker() string { return fmt.Sprintf("1000.%d", rand.Uint32()) }

// marked lists the pids of live processes whose arguments hold m, read from /proc as rein sees it
// (a command in a PID namespace has pids of its own).
func marked(m string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && slices.Contains(strings.Split(string(b), "\x00"), m) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func killAll(pids []int) {
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

// daemons start processes that leave the command's process group.
var daemons = []struct{ name, command string }{
	{"setsid", `setsid sleep %s >/dev/null 2>&1 & sleep 0.2`},
	{"set -m", `set -m; sleep %s >/dev/null 2>&1 & sleep 0.2`},
	{"setsid, double fork, nohup", `(setsid nohup sh -c 'sleep %s & exit' >/dev/null 2>&1 &); sleep 0.2`},
}

// TestSandboxContainsDaemons: a process that left the command's group ends with the call under
// the contained sandbox. Without it (and under Landlock alone), the same process escapes, which is
// what makes the test able to fail.
func TestSandboxContainsDaemons(t *testing.T) {
	requireSandbox(t, true)
	for _, d := range daemons {
		t.Run(d.name, func(t *testing.T) {
			m := marker()
			open, _ := newTool(t, Options{Sandbox: nil})
			if r := run(t, open, fmt.Sprintf(d.command, m)); r.Outcome != record.OK {
				t.Fatalf("%s %q", r.Outcome, r.Content)
			}
			escaped := marked(m)
			killAll(escaped)
			if len(escaped) == 0 {
				t.Fatalf("without the sandbox nothing escaped: the test cannot fail")
			}

			for _, kind := range containKinds(t) {
				m = marker()
				ws := t.TempDir()
				sh, err := New(ws, Options{Sandbox: kindBox(t, kind, sandbox.Policy{Mode: sandbox.WorkspaceWrite}, ws)})
				if err != nil {
					t.Fatal(err)
				}
				if r := run(t, sh, fmt.Sprintf(d.command, m)); r.Outcome != record.OK {
					t.Fatalf("%s: %s %q", kind, r.Outcome, r.Content)
				}
				if !eventually(2*time.Second, func() bool { return len(marked(m)) == 0 }) {
					left := marked(m)
					killAll(left)
					t.Errorf("%s: processes %v outlived their call", kind, left)
				}
			}
		})
	}
}

// bomb is a fork bomb with a bound: 2^(depth+1)-1 shells, each sleeping, and a daemon beside
// them.
func bomb(m string, depth int) string {
	return fmt.Sprintf(`setsid sleep %[1]s >/dev/null 2>&1 & b() { if [ $1 -gt 0 ]; then b $(($1-1)) & b $(($1-1)) & fi; sleep %[1]s; }; b %[2]d; wait`, m, depth)
}

// TestSandboxStopEndsBombAndDaemon: Stop ends a fork bomb and a daemon that left the group, under
// the contained sandbox, within the grace period.
func TestSandboxStopEndsBombAndDaemon(t *testing.T) {
	requireSandbox(t, true)
	for _, kind := range containKinds(t) {
		t.Run(kind, func(t *testing.T) {
			const depth = 6
			want := 1<<(depth+1) - 1 + 1
			m := marker()
			ws := t.TempDir()
			sh, err := New(ws, Options{Grace: 500 * time.Millisecond, Sandbox: kindBox(t, kind, sandbox.Policy{Mode: sandbox.WorkspaceWrite}, ws)})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan tool.Result, 1)
			go func() { done <- sh.Run(ctx, bashCall(bomb(m, depth), 0)) }()
			if !eventually(10*time.Second, func() bool { return len(marked(m)) >= want }) {
				cancel()
				t.Fatalf("the bomb never grew: %d of %d sleeps", len(marked(m)), want)
			}
			stopped := time.Now()
			cancel()
			if r := <-done; r.Outcome != record.Interrupted {
				t.Errorf("outcome %s: %q", r.Outcome, r.Content)
			}
			if !eventually(3*time.Second, func() bool { return len(marked(m)) == 0 }) {
				left := marked(m)
				killAll(left)
				t.Fatalf("%d processes outlived the Stop", len(left))
			}
			t.Logf("%d processes gone %v after Stop", want, time.Since(stopped))
		})
	}
}

// TestSandboxDaemonDiesWithRein: rein killed with SIGKILL takes a daemon that left the group
// with it, under each way of containing a command; a command held in a cgroup leaves no cgroup
// behind either, nor the sandbox's PID namespace (its first process dies with rein).
func TestSandboxDaemonDiesWithRein(t *testing.T) {
	if os.Getenv("REIN_SHELL_HELPER") != "" {
		t.Skip("in the helper")
	}
	requireSandbox(t, true)
	for _, kind := range containKinds(t) {
		t.Run(kind, func(t *testing.T) {
			m := marker()
			dir := t.TempDir()
			helper := exec.Command(os.Args[0], "-test.run=^TestHelperRunsBash$", "-test.v")
			helper.Env = append(os.Environ(), "REIN_SHELL_HELPER="+dir, "REIN_SHELL_CONTROL="+testControl.name, "REIN_SHELL_SANDBOX="+kind,
				"REIN_SHELL_HELPER_CMD="+bomb(m, 3))
			out := &output{}
			helper.Stdout, helper.Stderr = out, out
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			defer helper.Process.Kill()
			want := 1<<4 - 1 + 1
			if !eventually(10*time.Second, func() bool { return len(marked(m)) >= want }) {
				t.Fatalf("the command never started: %d of %d sleeps; the helper said %s", len(marked(m)), want, out)
			}
			// The helper's cgroups: its root, and a cgroup under it per shell: the command's, and the
			// spare's once it has started (spare.go).
			cgroups := func() []string {
				root := filepath.Join(sandbox.Check().Cgroups, fmt.Sprintf("rein-%d", helper.Process.Pid))
				l, _ := filepath.Glob(filepath.Join(root, "c[0-9]*"))
				if _, err := os.Stat(root); err == nil {
					l = append(l, root)
				}
				return l
			}
			var inits []int
			if kind == "held" {
				if n := len(cgroups()); n != 2 && n != 3 {
					t.Errorf("the held command's cgroups: %v, want rein's, the command's and perhaps a spare's", cgroups())
				}
				if inits = sandboxInits(helper.Process.Pid); len(inits) != 1 {
					t.Errorf("the sandbox's PID namespaces: %v, want one", inits)
				}
			}
			helper.Process.Signal(syscall.SIGKILL)
			helper.Wait()
			if !eventually(2*time.Second, func() bool { return len(marked(m)) == 0 }) {
				left := marked(m)
				killAll(left)
				t.Fatalf("%d processes outlived their rein", len(left))
			}
			if kind == "held" && !eventually(2*time.Second, func() bool { return len(cgroups()) == 0 }) {
				t.Errorf("cgroups %v outlived their rein", cgroups())
			}
			for _, p := range inits {
				if !eventually(2*time.Second, func() bool { return !alive(p) }) {
					syscall.Kill(p, syscall.SIGKILL)
					t.Errorf("the sandbox's namespace (its first process %d) outlived its rein", p)
				}
			}
		})
	}
}

// TestSandboxUnsupportedRefuses: where the machine cannot enforce the sandbox (forced here), a
// command is answered denied, with the reason and the way out, and is not run.
func TestSandboxUnsupportedRefuses(t *testing.T) {
	for _, sup := range []sandbox.Support{
		{LandlockWhy: "this kernel was built without Landlock (forced by the test)", Seccomp: true},
		{Landlock: 2, Seccomp: true},
		{Landlock: 7, Seccomp: true, Forced: "forced by the test"},
	} {
		ws := t.TempDir()
		sh, err := New(ws, Options{Sandbox: newBox(t, sandbox.Policy{Mode: sandbox.WorkspaceWrite}, ws, &sup)})
		if err != nil {
			t.Fatal(err)
		}
		r := run(t, sh, "touch ran")
		if r.Outcome != record.Denied || !r.IsError || !strings.Contains(r.Content, "--sandbox off") || !strings.Contains(r.Content, "not run") {
			t.Errorf("%+v: %s %q", sup, r.Outcome, r.Content)
		}
		t.Log(r.Content)
		if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
			t.Errorf("%+v: the command ran", sup)
		}
	}
}

// TestSandboxFailedLaunchRefuses: a sandbox the helper cannot apply (a writable directory gone)
// refuses the command, saying why, and runs nothing.
func TestSandboxFailedLaunchRefuses(t *testing.T) {
	requireSandbox(t, false)
	ws, extra := t.TempDir(), t.TempDir()
	sh, err := New(ws, Options{Sandbox: newBox(t, sandbox.Policy{Mode: sandbox.WorkspaceWrite, Write: []string{extra}}, ws, nil)})
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(extra)
	r := run(t, sh, "touch ran")
	if r.Outcome != record.Denied || !strings.Contains(r.Content, "could not be applied") || !strings.Contains(r.Content, extra) {
		t.Errorf("%s %q", r.Outcome, r.Content)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Error("the command ran")
	}
	os.Mkdir(extra, 0o755)
	if r := run(t, sh, "touch ran"); r.Outcome != record.OK {
		t.Errorf("once the directory is back: %s %q", r.Outcome, r.Content)
	}
}

// TestSandboxProtectGit: --protect-git keeps .git read-only (a directory, or the file of a
// worktree), the rest of the workspace writable, and the bind mount cannot be undone from inside.
func TestSandboxProtectGit(t *testing.T) {
	requireSandbox(t, true)
	for _, asFile := range []bool{false, true} {
		ws := t.TempDir()
		if asFile {
			os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: /elsewhere\n"), 0o644)
		} else {
			os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755)
		}
		plant := `echo 'echo pwned' > .git/hooks/pre-commit`
		if asFile {
			plant = `echo 'gitdir: /tmp/evil' > .git`
		}
		for _, protect := range []bool{false, true} {
			sh, err := New(ws, Options{Sandbox: newBox(t, sandbox.Policy{Mode: sandbox.WorkspaceWrite, ProtectGit: protect}, ws, nil)})
			if err != nil {
				t.Fatal(err)
			}
			r := run(t, sh, plant)
			if protect == (r.Outcome == record.OK) {
				t.Errorf(".git a file %v, protected %v: %s %q", asFile, protect, r.Outcome, r.Content)
			}
			if !protect {
				continue
			}
			if r := run(t, sh, `umount .git || umount -l .git || mount -o remount,rw .git`); r.Outcome == record.OK {
				t.Errorf("the read-only .git could be unmounted: %q", r.Content)
			}
			if r := run(t, sh, plant); r.Outcome == record.OK {
				t.Errorf("after trying to unmount it, .git is writable: %q", r.Content)
			}
			if r := run(t, sh, `echo x > file && cat file`); r.Outcome != record.OK {
				t.Errorf("with .git read-only, the workspace: %s %q", r.Outcome, r.Content)
			}
		}
	}

	// A .git that a command makes is read-only for the next command, though the next command's
	// shell would have started beside this one were it not for --protect-git (Sandbox.Anew).
	ws := t.TempDir()
	sh, err := New(ws, Options{Sandbox: newBox(t, sandbox.Policy{Mode: sandbox.WorkspaceWrite, ProtectGit: true}, ws, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if r := run(t, sh, `sleep 0.3; mkdir -p .git/hooks`); r.Outcome != record.OK {
		t.Fatalf("making .git: %s %q", r.Outcome, r.Content)
	}
	if r := run(t, sh, `echo 'echo pwned' > .git/hooks/pre-commit`); r.Outcome == record.OK {
		t.Errorf("the .git the last command made is writable: %q", r.Content)
	}
}

// TestSandboxNoCapabilities: a command confined in a user namespace (rein not root) holds no
// capability, though the helper held CAP_SYS_ADMIN there to mount /proc.
func TestSandboxNoCapabilities(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root keeps its capabilities; the user namespace is for unprivileged users")
	}
	requireSandbox(t, true)
	ws := t.TempDir()
	sh, err := New(ws, Options{Sandbox: newBox(t, sandbox.Policy{Mode: sandbox.WorkspaceWrite}, ws, nil)})
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, sh, `grep -E '^Cap(Inh|Prm|Eff|Amb)' /proc/self/status`)
	for _, l := range strings.Split(strings.TrimSpace(r.Content), "\n") {
		if f := strings.Fields(l); len(f) != 2 || strings.Trim(f[1], "0") != "" {
			t.Errorf("the command holds capabilities: %q", r.Content)
			break
		}
	}
}

// TestSandboxAsNobody runs the sandbox's tests as an unprivileged user (uid 65534), when the
// tests run as root: the user namespace path (a spare supervisor in it too), and writes the user
// could otherwise make.
func TestSandboxAsNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: every test here already runs unprivileged")
	}
	requireSandbox(t, false)
	dir, err := os.MkdirTemp("", "rein-sandbox-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "shell.test")
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err == nil {
		_, err = io.Copy(dst, src)
		dst.Close()
	}
	src.Close()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestSandbox(Writes|StaysWritable|ExtraWritable|Network|ContainsDaemons|StopEndsBombAndDaemon|DaemonDiesWithRein|ProtectGit|NoCapabilities|FailedLaunchRefuses|LandlockHidesRein|NonDumpable)$|^TestContainedSpare$|^TestSandboxedSuites$", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR=/tmp", "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	text := out.String()
	if err != nil {
		t.Fatalf("as uid 65534: %v\n%s", err, text)
	}
	passed, skipped := 0, 0
	for _, l := range strings.Split(text, "\n") {
		passed += bool2int(strings.HasPrefix(l, "--- PASS: TestSandbox"))
		skipped += bool2int(strings.HasPrefix(l, "--- SKIP: TestSandbox"))
	}
	t.Logf("as uid 65534: %d tests passed, %d skipped", passed, skipped)
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "--- SKIP") || strings.Contains(l, "not run contained") {
			t.Log(strings.TrimSpace(l))
		}
	}
	// The suites, contained in a user namespace as rein not run as root contains commands: output,
	// exit statuses, timeouts, Stop and rein's death, with the group found across the namespace.
	for _, name := range []string{"TestContainedSpare", "TestSandboxedSuites/contained/StopThenReinKilled", "TestSandboxedSuites"} {
		if !strings.Contains(text, "--- PASS: "+name+" ") {
			t.Errorf("as uid 65534, %s did not pass:\n%s", name, text)
		}
	}
	if passed < 11 {
		t.Errorf("as uid 65534, only %d tests passed:\n%s", passed, text)
	}
}

func bool2int(b bool) int {
	if b {
		return 1
	}
	return 0
}

// BenchmarkSandbox measures what a command costs under each sandbox: `true`, from Run's call to
// its result, unconfined, under Landlock and seccomp (the helper re-executed), and in a PID
// namespace too. It reports the median and the 99th percentile.
func BenchmarkSandbox(b *testing.B) {
	kinds := []string{"off", "confined", "contained", "held"}
	for _, kind := range kinds {
		b.Run(kind, func(b *testing.B) {
			ws := b.TempDir()
			var box *sandbox.Sandbox
			switch kind {
			case "off":
			case "contained":
				if sandbox.Check().Contain == "" {
					b.Skip(sandbox.Check().ContainWhy)
				}
				fallthrough
			case "held":
				if kind == "held" && sandbox.Check().Cgroups == "" {
					b.Skip(sandbox.Check().CgroupsWhy)
				}
				fallthrough
			default:
				if err := sandbox.Check().Enforce(sandbox.Policy{Mode: sandbox.WorkspaceWrite}); err != nil {
					b.Skip(err)
				}
				box = kindBox(b, kind, sandbox.Policy{Mode: sandbox.WorkspaceWrite}, ws)
			}
			sh, err := New(ws, Options{Sandbox: box})
			if err != nil {
				b.Fatal(err)
			}
			call := bashCall("true", 0)
			var lat []time.Duration
			for b.Loop() {
				start := time.Now()
				if r := sh.Run(context.Background(), call); r.Outcome != record.OK {
					b.Fatal(r.Content)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// TestSandboxCannotReadRein: a contained command cannot read rein's environment or memory
// through /proc, even where the user could (root): the PID namespace's /proc does not show rein.
// (Landlock alone refuses only what needs ptrace's attach right, such as mem, not environ.)
func TestSandboxCannotReadRein(t *testing.T) {
	requireSandbox(t, true)
	probe := fmt.Sprintf(`for f in environ mem maps; do if (exec 3<"/proc/%d/$f") 2>/dev/null; then echo "READ $f"; else echo "DENIED $f"; fi; done`, os.Getpid())
	open, _ := newTool(t, Options{Sandbox: nil})
	if r := run(t, open, probe); !strings.Contains(r.Content, "READ environ") {
		t.Skipf("without the sandbox this process's environment is not readable either (%q): nothing to test", r.Content)
	}
	for _, kind := range containKinds(t) {
		ws := t.TempDir()
		sh, err := New(ws, Options{Sandbox: kindBox(t, kind, sandbox.Policy{Mode: sandbox.WorkspaceWrite}, ws)})
		if err != nil {
			t.Fatal(err)
		}
		if r := run(t, sh, probe); r.Content != "DENIED environ\nDENIED mem\nDENIED maps\n" {
			t.Errorf("%s: %q", kind, r.Content)
		}
	}
}

// TestSandboxLandlockHidesRein: a command confined by Landlock alone (no PID namespace to hide
// rein's /proc) cannot read the environment, memory or maps of a process of its own user even when
// that process is dumpable (rein is not; this is the line behind that one): Landlock refuses a
// process in a domain access to one outside it. Unprivileged users only (run
// by TestSandboxAsNobody when the tests run as root): root reads environ and maps anyway.
func TestSandboxLandlockHidesRein(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root: TestSandboxAsNobody runs this as uid 65534")
	}
	requireSandbox(t, false)
	probe := fmt.Sprintf(`for f in environ mem maps; do if (exec 3<"/proc/%d/$f") 2>/dev/null; then echo "READ $f"; else echo "DENIED $f"; fi; done`, os.Getpid())
	open, _ := newTool(t, Options{Sandbox: nil})
	if r := run(t, open, probe); r.Content != "READ environ\nREAD mem\nREAD maps\n" {
		t.Skipf("without the sandbox this process is not readable either (%q): nothing to test", r.Content)
	}
	ws := t.TempDir()
	sh, err := New(ws, Options{Sandbox: kindBox(t, "confined", sandbox.Policy{Mode: sandbox.WorkspaceWrite}, ws)})
	if err != nil {
		t.Fatal(err)
	}
	if r := run(t, sh, probe); r.Content != "DENIED environ\nDENIED mem\nDENIED maps\n" {
		t.Errorf("confined: %q", r.Content)
	}
}
