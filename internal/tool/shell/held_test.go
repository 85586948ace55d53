package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/sandbox"
)

// TestSandboxHeldCommand: a command the sandbox starts from its confined thread leads a process
// group and session of its own, fresh for each call, in the working directory and with the
// environment the tool gives, in a cgroup of its own named for this process, and confined as a
// command the helper starts is (its writes outside are refused: TestSandboxWrites runs held too).
func TestSandboxHeldCommand(t *testing.T) {
	requireSandbox(t, true)
	if sandbox.Check().Cgroups == "" {
		t.Skip(sandbox.Check().CgroupsWhy)
	}
	ws := t.TempDir()
	os.Mkdir(filepath.Join(ws, "sub"), 0o755)
	sh, err := New(ws, Options{Env: []string{"PATH=" + os.Getenv("PATH"), "REIN_HELD_TEST=yes"},
		Sandbox: kindBox(t, "held", sandbox.Policy{Mode: sandbox.WorkspaceWrite}, ws)})
	if err != nil {
		t.Fatal(err)
	}
	probe := `read -r _ _ _ _ pg sid _ < /proc/$$/stat; echo "$$ $pg $sid"; pwd; echo "$REIN_HELD_TEST"; grep '^0::' /proc/self/cgroup; echo x > /etc/rein-held-test`
	if r := run(t, sh, "cd sub"); r.Outcome != record.OK {
		t.Fatalf("cd: %s %q", r.Outcome, r.Content)
	}
	var groups, cgroups []string
	for range 2 {
		r := run(t, sh, probe)
		lines := strings.Split(r.Content, "\n")
		if len(lines) < 4 {
			t.Fatalf("%s %q", r.Outcome, r.Content)
		}
		ids := strings.Fields(lines[0])
		if len(ids) != 3 || ids[0] != ids[1] || ids[0] != ids[2] {
			t.Errorf("pid, process group and session: %q, want one number thrice (a group and session of its own)", lines[0])
		}
		groups = append(groups, ids[0])
		if lines[1] != filepath.Join(ws, "sub") {
			t.Errorf("working directory %q, want %s", lines[1], filepath.Join(ws, "sub"))
		}
		if lines[2] != "yes" {
			t.Errorf("the environment's REIN_HELD_TEST is %q", lines[2])
		}
		if want := fmt.Sprintf("/rein-%d/c", os.Getpid()); !strings.Contains(lines[3], want) {
			t.Errorf("cgroup %q, want one named %s…", lines[3], want)
		}
		cgroups = append(cgroups, lines[3])
		if r.Outcome == record.OK || !strings.Contains(r.Content, "/etc/rein-held-test") {
			t.Errorf("a write outside the workspace: %s %q", r.Outcome, r.Content)
		}
		if _, err := os.Stat("/etc/rein-held-test"); err == nil {
			os.Remove("/etc/rein-held-test")
			t.Error("the held command wrote /etc/rein-held-test")
		}
	}
	if cgroups[0] == cgroups[1] {
		t.Errorf("two calls shared the cgroup %s", cgroups[0])
	}
	// Each call's group is new; its pid, in the sandbox's namespace, may come round again only
	// once the first is gone, which the cgroups' names tell apart anyway.
	t.Logf("groups %v, cgroups %v", groups, cgroups)
}

// sandboxInits lists the first processes of the sandboxes' PID namespaces that process ppid
// started (the helper, staying as its namespace's init).
func sandboxInits(ppid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if len(f) > 1 && f[1] == strconv.Itoa(ppid) && strings.Contains(string(cmd), `"init":true`) && alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}
