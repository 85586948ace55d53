package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// rein is not dumpable: a tool running as the same user cannot read its environment, memory or
// open files through /proc, and the bash tool still runs. As root (which may read any process), the
// test runs rein as nobody.
func TestToolsCannotReadReinsProcess(t *testing.T) {
	odd, _ := plantedKeys(t)
	dir, err := os.MkdirTemp("", "rein-dumpable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sb := &sandbox{home: filepath.Join(dir, "home"), ws: filepath.Join(dir, "ws")}
	bin := filepath.Join(dir, "rein")
	src, err := os.ReadFile(reinBin(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{sb.home, sb.ws} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Opening is what the kernel checks (reading /proc/<pid>/mem at offset 0 fails anyway).
	probe := `for f in environ mem maps; do if (exec 3<"/proc/$PPID/$f") 2>/dev/null; then echo "READ $f"; else echo "DENIED $f"; fi; done; ` +
		`if ls /proc/$PPID/fd >/dev/null 2>&1; then echo "READ fd"; else echo "DENIED fd"; fi; ` +
		`grep -c API_KEY /proc/$PPID/environ; echo "bash runs as $(id -u)"`
	script := writeScript(t, dir, map[string]any{"tool_calls": []map[string]any{bash(probe)}}, map[string]any{"text": "done"})
	// Without the sandbox, whose PID namespace would hide rein's /proc anyway: this test is about
	// rein being non-dumpable.
	cmd := exec.Command(bin, "run", "--provider", "sim", "--sim-delay", "1ms", "--sim-script", script, "--sandbox", "off", "probe")
	cmd.Dir = sb.ws
	cmd.Env = childEnv("REIN_HOME="+sb.home, "HOME="+dir, "ANTHROPIC_API_KEY="+odd)
	uid := os.Getuid()
	if uid == 0 {
		uid = 65534
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{dir, sb.home, sb.ws, script} {
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Skipf("running as root, and cannot hand the sandbox to nobody: %v", err)
			}
		}
	} else if hasPtraceCap() {
		t.Skip("this process holds CAP_SYS_PTRACE, which reads any process: nothing to test")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rein: %v\n%s", err, out)
	}
	recs, _ := filepath.Glob(filepath.Join(sb.home, "sessions", "*", "*", "record.jsonl"))
	if len(recs) != 1 {
		t.Fatalf("%d records\n%s", len(recs), out)
	}
	rec := toolOutputs(t, recs[0])
	for _, f := range []string{"environ", "mem", "maps", "fd"} {
		if !strings.Contains(rec, "DENIED "+f) {
			t.Errorf("a tool could read /proc/<rein>/%s:\n%s", f, rec)
		}
	}
	if want := fmt.Sprintf("bash runs as %d", uid); !strings.Contains(rec, want) {
		t.Errorf("the bash tool did not run (%q missing):\n%s", want, rec)
	}
}

// hasPtraceCap reports whether this process may read any process's /proc files.
func hasPtraceCap() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil {
		return false
	}
	return data[0].Effective&(1<<unix.CAP_SYS_PTRACE) != 0
}
