package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHeldNamespaceEndsWithRein: the PID namespace a sandbox that holds its commands starts them
// in ends with the rein process that made it, whether that process exits without closing the
// sandbox or is killed with SIGKILL: its first process and every command in it are gone.
// (Nothing here relies on the lifeline's keeper, which package shell adds on top.)
func TestHeldNamespaceEndsWithRein(t *testing.T) {
	if os.Getenv("REIN_HELD_HELPER") != "" {
		heldHelper(t)
		return
	}
	s := Check()
	if s.Enforce(Policy{Mode: WorkspaceWrite}) != nil || s.Cgroups == "" || s.Contain == "" || s.userNS {
		t.Skip("this machine does not hold commands (root, a PID namespace and cgroups needed)")
	}
	for _, end := range []string{"exit", "SIGKILL"} {
		t.Run(end, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHeldNamespaceEndsWithRein$")
			cmd.Env = append(os.Environ(), "REIN_HELD_HELPER="+end, "REIN_HELD_WS="+t.TempDir())
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			// The helper ends when told: the namespace is seen running first.
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			// Nothing here plays the lifeline's keeper: the helper's cgroups are removed here.
			defer func() {
				root := filepath.Join(s.Cgroups, fmt.Sprintf("rein-%d", cmd.Process.Pid))
				dirs, _ := filepath.Glob(filepath.Join(root, "c[0-9]*"))
				for _, d := range append(dirs, root) {
					syscall.Rmdir(d)
				}
			}()
			var init, command int
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if n, _ := fmt.Sscanf(sc.Text(), "held %d %d", &init, &command); n == 2 {
					break
				}
			}
			if init == 0 || !running(init) || !running(command) {
				t.Fatalf("the helper said no namespace: init %d, command %d", init, command)
			}
			if end == "SIGKILL" {
				cmd.Process.Signal(syscall.SIGKILL)
			}
			in.Close()
			cmd.Wait()
			deadline := time.Now().Add(3 * time.Second)
			for (running(init) || running(command)) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if running(init) || running(command) {
				syscall.Kill(init, syscall.SIGKILL)
				syscall.Kill(command, syscall.SIGKILL)
				t.Errorf("after its rein's %s: the namespace's first process runs %v, its command %v", end, running(init), running(command))
			}
		})
	}
}

// heldHelper is the rein process of TestHeldNamespaceEndsWithRein: it starts a command through a
// sandbox that holds it, says the pids, then ends as told (exiting once its stdin closes, or
// killed), without closing the sandbox.
func heldHelper(t *testing.T) {
	box, err := New(Policy{Mode: WorkspaceWrite}, Config{Workspace: os.Getenv("REIN_HELD_WS"), TempRoot: os.Getenv("REIN_HELD_WS")})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sleep", "1000")
	cg, err := box.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	_ = cg // left for the test to remove: nothing here plays the keeper
	fmt.Printf("held %d %d\n", box.launch.init.Process.Pid, cmd.Process.Pid)
	os.Stdout.Sync()
	if os.Getenv("REIN_HELD_HELPER") == "exit" {
		io.Copy(io.Discard, os.Stdin) // until the test has seen the namespace running
		os.Exit(0)
	}
	select {}
}

// running reports whether process pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// TestSweepRoots: a rein process killed leaves its cgroup root behind; the next to make its own
// removes the roots of processes that are gone, with their empty cgroups, and no other.
func TestSweepRoots(t *testing.T) {
	s := Check()
	if s.Cgroups == "" {
		t.Skip("this machine gives rein no cgroups")
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	alive := exec.Command("sleep", "1000")
	if err := alive.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { alive.Process.Kill(); alive.Wait() }()
	dead, live := CgroupRoot(s.Cgroups), CgroupRoot(s.Cgroups)
	dead = filepath.Join(filepath.Dir(dead), fmt.Sprintf("rein-%d", gone.Process.Pid))
	live = filepath.Join(filepath.Dir(live), fmt.Sprintf("rein-%d", alive.Process.Pid))
	deadProbe := filepath.Join(s.Cgroups, fmt.Sprintf("rein-probe-%d", gone.Process.Pid))
	liveProbe := filepath.Join(s.Cgroups, fmt.Sprintf("rein-probe-%d", alive.Process.Pid))
	for _, d := range []string{dead, filepath.Join(dead, "c1"), live, filepath.Join(live, "c1"), deadProbe, liveProbe} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Skipf("cannot make cgroups here: %v", err)
		}
	}
	defer func() {
		for _, d := range []string{filepath.Join(live, "c1"), live, filepath.Join(dead, "c1"), dead, deadProbe, liveProbe} {
			syscall.Rmdir(d)
		}
	}()
	sweep(s.Cgroups)
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the root of a process that is gone is still there (%v)", err)
	}
	if _, err := os.Stat(deadProbe); !os.IsNotExist(err) {
		t.Errorf("the probe of a process that is gone is still there (%v)", err)
	}
	for _, d := range []string{filepath.Join(live, "c1"), liveProbe} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("a live process's cgroup was touched: %v", err)
		}
	}
}

// TestStaleProbe: a process killed while it probed the cgroups leaves its probe behind; the next
// process of the same pid must not take it for cgroups it may not make (it fell back from holding
// commands in cgroups, every time, until the probe was removed by hand).
func TestStaleProbe(t *testing.T) {
	s := Check()
	if s.Cgroups == "" {
		t.Skip("this machine gives rein no cgroups")
	}
	stale := filepath.Join(s.Cgroups, fmt.Sprintf("rein-probe-%d", os.Getpid()))
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Skipf("cannot make cgroups here: %v", err)
	}
	defer syscall.Rmdir(stale)
	if why := tryCgroup(s.Cgroups); why != "" {
		t.Errorf("a stale probe of this pid refused the cgroups: %s", why)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the probe is still there (%v)", err)
	}
}
