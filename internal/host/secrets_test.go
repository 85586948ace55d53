package host_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/redact"
	"github.com/reinhq/rein/internal/session"
)

// A title holding a key is recorded redacted, and so is the index's copy of the operation that
// gave it; the same operation sent again, before or after a restart, is still the same one.
func TestTitleWithAKey(t *testing.T) {
	const key = "zq9-host-title-key-abc"
	var secrets redact.Secrets
	secrets.Add("KEY", key)
	root := t.TempDir()
	cfg := host.Config{Root: root, Cwd: t.TempDir(), Provider: "sim", Model: "sim-1", Version: "test", Log: io.Discard,
		Session: session.Options{Redact: &secrets},
		NewAgentFor: func(sess *session.Session, _ host.Setup) (*agent.Agent, error) {
			return agent.New(agent.Config{Session: sess}), nil
		}}
	title := "deploy with " + key
	for round := range 2 {
		h, err := host.Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c, replayed, err := h.Create("op-1", title)
		if err != nil || replayed != (round == 1) {
			t.Fatalf("round %d: create: replayed %v, %v", round, replayed, err)
		}
		if _, _, err := h.Create("op-1", "another title"); err == nil {
			t.Errorf("round %d: the same operation with another title was not refused", round)
		}
		if v, _ := c.View(); v.Title != "deploy with [REDACTED:KEY]" {
			t.Errorf("round %d: title %q", round, v.Title)
		}
		h.Close()
	}
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), key) {
			t.Errorf("%s holds the key", path)
		}
		return nil
	})
}
