package host_test

import (
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/external"
	"github.com/reinhq/rein/internal/external/codex"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/procs"
	"github.com/reinhq/rein/internal/record"
)

// A conversation whose turns run in the real Codex (codex app-server), behind the real host: a
// Stop while its command runs ends the turn, the message waiting behind it comes back withdrawn,
// no process of Codex's tree is left, and the next prompt is answered in the same thread. Skipped,
// saying why, where Codex is not installed (REIN_CODEX).
func TestCodexStopThroughHost(t *testing.T) {
	path := codexFor(t)
	marker := fmt.Sprintf("37.%06d", rand.IntN(1_000_000))
	script := fmt.Sprintf(`[{"text":"Waiting.","tool_calls":[{"name":"exec_command","arguments":{"cmd":"sleep %s"}}]},{"text":"Resumed."}]`, marker)
	var env []string
	var ws string
	// One back-end for the host, as rein serve has: it keeps a completed turn's app-server for
	// the next turn, until it is closed.
	be := codex.New(codex.Options{Path: path})
	t.Cleanup(func() { be.Close() })
	r := newRig(t, rigOptions{script: script, quiet: true, backends: []string{api.BackendCodex},
		external: func(s host.Setup) *agent.External {
			return &agent.External{Backend: be, Approver: s.Approver,
				Turn: external.Turn{Cwd: ws, Mode: "full", Env: env}}
		}})
	ws = r.ws
	door := httptest.NewServer(r.sim)
	t.Cleanup(door.Close)
	env = codexEnv(t, door.URL)

	v, _, err := r.c.CreateOn(ctxT(t), client.NewOp(), "", api.BackendCodex)
	if err != nil {
		t.Fatal(err)
	}
	id := v.ID
	ev := r.events(id, 0)
	r.send(id, "wait for it")
	ev.until("the command running", func(e api.Event) bool {
		return e.Kind == string(record.KindExternalItem) && strings.Contains(string(e.Payload), `"item":"command"`) && strings.Contains(string(e.Payload), marker)
	})
	queued, err := r.c.Send(ctxT(t), id, api.Message{Op: client.NewOp(), Text: "behind it", Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	res := r.stop(id)
	if !res.Interrupted || len(res.Withdrawn) != 1 || res.Withdrawn[0].ID != queued.MessageID || res.Withdrawn[0].Text != "behind it" {
		t.Fatalf("the Stop answered %+v, want the turn interrupted and the waiting message withdrawn", res)
	}
	r.settle(id)
	if q, _ := lastOf[*record.Quiesced](r.records(id)); q == nil || q.Reason != fold.Cancelled {
		t.Fatalf("the exchange quiesced %+v, want cancelled", q)
	}
	noCodexLeft(t, marker)

	es, _ := lastOf[*record.ExternalSession](r.records(id))
	r.send(id, "go on")
	r.settle(id)
	recs := r.records(id)
	imp, _ := lastOf[*record.Import](recs)
	if es == nil || imp == nil || imp.Source != api.BackendCodex || imp.External != es.ID || !strings.Contains(imp.Message.Parts[0].Text, "Resumed.") {
		t.Fatalf("the next prompt: reply %+v, thread %+v", imp, es)
	}
	// Closed after the host, as rein serve closes it, the back-end leaves nothing running.
	if err := r.h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := be.Close(); err != nil {
		t.Fatal(err)
	}
	noCodexLeft(t, marker)
}

// codexFor finds the Codex CLI (REIN_CODEX, else codex on PATH), or skips saying why; with CI
// set, a REIN_CODEX that does not run fails the test.
func codexFor(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("REIN_CODEX"); p != "" {
		if _, err := exec.Command(p, "--version").Output(); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("REIN_CODEX=%s does not run: %v", p, err)
			}
			t.Skipf("REIN_CODEX=%s does not run: %v", p, err)
		}
		return p
	}
	p, err := exec.LookPath("codex")
	if err != nil {
		t.Skipf("Codex is not installed (no REIN_CODEX, no codex on PATH): npm install @openai/codex@%s and set REIN_CODEX", codex.Pin)
	}
	return p
}

// codexEnv is Codex's environment for a test: a throwaway home whose configuration points it at
// the simulator at url.
func codexEnv(t *testing.T, url string) []string {
	home := filepath.Join(t.TempDir(), "home")
	dir := filepath.Join(home, ".codex")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf("model = %q\nmodel_provider = \"sim\"\n[model_providers.sim]\nname = \"sim\"\nbase_url = %q\nwire_api = \"responses\"\nenv_key = \"SIM_KEY\"\n", "sim-1", url+"/v1")
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CODEX_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "OPENAI_") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+home, "CODEX_HOME="+dir, "SIM_KEY=sim-key")
}

// noCodexLeft fails the test if a process of Codex's is still running: the app-server or node
// under this process, or the command it ran (found by its marker wherever it was adopted).
func noCodexLeft(t *testing.T, marker string) {
	t.Helper()
	all, err := procs.All()
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, p := range all {
		if p.Zombie {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID))
		if strings.Contains(string(cmdline), marker) {
			left = append(left, fmt.Sprintf("%d %q", p.PID, cmdline))
		}
	}
	for _, p := range procs.Below(all, os.Getpid()) {
		if !p.Zombie && (strings.Contains(p.Comm, "codex") || p.Comm == "node") {
			left = append(left, fmt.Sprintf("%d %s", p.PID, p.Comm))
		}
	}
	if len(left) > 0 {
		t.Errorf("processes of Codex's left running after the Stop: %s", strings.Join(left, ", "))
	}
}
