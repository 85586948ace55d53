package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	osbox "github.com/reinhq/rein/internal/sandbox"
)

// TestSandboxAsNobody runs the real rein as an unprivileged user (uid 65534, when the tests run as
// root), under its default sandbox: the helper re-executes the non-dumpable rein in a user
// namespace; a write to a directory nobody owns outside the workspace fails, one inside lands,
// the command holds no capability, and each command is the first of a PID namespace of its own
// (its shell's $$ is 1), the machine permitting (the probe as root says whether it does). With
// --sandbox off the same write lands and the shell's $$ is its pid: the test can fail.
func TestSandboxAsNobody(t *testing.T) {
	requireOSSandbox(t, false)
	for _, off := range []bool{true, false} {
		if written := runAsNobody(t, off); written != off {
			t.Errorf("--sandbox off %v: the write outside landed %v", off, written)
		}
	}
}

// runAsNobody runs rein as nobody (when root) on a script writing inside and outside the
// workspace, checks what it must, and reports whether the write outside landed.
func runAsNobody(t *testing.T, off bool) bool {
	dir, err := os.MkdirTemp("", "rein-sandbox-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home, ws, out := filepath.Join(dir, "home"), filepath.Join(dir, "ws"), filepath.Join(dir, "out")
	bin := filepath.Join(dir, "rein")
	src, err := os.ReadFile(reinBin(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{home, ws, out} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := writeScript(t, dir,
		map[string]any{"tool_calls": []any{bash(`echo in > inside && id -u`)}},
		map[string]any{"tool_calls": []any{bash(`echo out > "$OUT/outside"`)}},
		map[string]any{"tool_calls": []any{bash(`grep -E '^Cap(Prm|Eff|Amb)' /proc/self/status`)}},
		map[string]any{"tool_calls": []any{bash(`echo "shell pid $$"`)}},
		map[string]any{"tool_calls": []any{bash(`echo "shell pid $$ again"`)}},
		map[string]any{"text": "done"})
	args := []string{"run", "--provider", "sim", "--sim-delay", "1ms", "--sim-script", script, "write"}
	if off {
		args = append(args, "--sandbox", "off")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = ws
	cmd.Env = childEnv("REIN_HOME="+home, "HOME="+dir, "OUT="+out)
	uid := os.Getuid()
	if uid == 0 {
		uid = 65534
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		os.Chmod(dir, 0o755)
		for _, p := range []string{dir, home, ws, out, script} {
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Skipf("running as root, and cannot hand the directories to nobody: %v", err)
			}
		}
	}
	res, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rein: %v\n%s", err, res)
	}
	recs, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "record.jsonl"))
	if len(recs) != 1 {
		t.Fatalf("%d records\n%s", len(recs), res)
	}
	outputs := toolOutputs(t, recs[0])
	if _, err := os.Stat(filepath.Join(ws, "inside")); err != nil {
		t.Errorf("the write inside the workspace did not land: %v\n%s", err, outputs)
	}
	if !strings.Contains(outputs, strconv.Itoa(uid)+"\n") {
		t.Errorf("the command did not run as uid %d:\n%s", uid, outputs)
	}
	_, err = os.Stat(filepath.Join(out, "outside"))
	contained := strings.Contains(outputs, "shell pid 1\n") && strings.Contains(outputs, "shell pid 1 again\n")
	if off {
		if contained {
			t.Errorf("with --sandbox off, a command's shell is the first of a PID namespace:\n%s", outputs)
		}
		return err == nil
	}
	if sup := osbox.Check(); sup.Contain != "" && !contained {
		t.Errorf("rein as root contains commands (%s); as uid %d, not:\n%s", sup.Contain, uid, outputs)
	}
	if !strings.Contains(outputs, "Permission denied") {
		t.Errorf("no refusal in the tool outputs:\n%s", outputs)
	}
	if uid != 0 && (!strings.Contains(outputs, "CapEff:\t0000000000000000") || !strings.Contains(outputs, "CapPrm:\t0000000000000000")) {
		t.Errorf("the command holds capabilities:\n%s", outputs)
	}
	return err == nil
}
