package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The config file supplies what flags leave unset; flags win; an unknown key is refused by name.
func TestConfigFile(t *testing.T) {
	sb := newSandbox(t)
	cfg := filepath.Join(t.TempDir(), "cfg")
	if err := os.MkdirAll(filepath.Join(cfg, "rein"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(cfg, "rein", "config.toml"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb.env = append(sb.env, "XDG_CONFIG_HOME="+cfg)

	write("provider = \"sim\"\nmax_turns = 7\ndeny = [\"bash(rm *)\"]\n")
	if r := sb.rein(t, "run", "--json", "hello there"); r.code != 0 || !strings.Contains(r.stdout, `"type":"session"`) {
		t.Fatalf("run with the provider from the config file: %s", r)
	}
	// A flag wins over the file.
	if r := sb.rein(t, "run", "--provider", "nosuch", "hello"); r.code != exitUsage || !strings.Contains(r.stderr, `unknown provider "nosuch"`) {
		t.Fatalf("a flag should override the config file: %s", r)
	}
	write("provder = \"sim\"\n")
	if r := sb.rein(t, "run", "hello"); r.code != exitUsage || !strings.Contains(r.stderr, "keys rein does not know: provder") {
		t.Fatalf("an unknown key should be refused by name: %s", r)
	}
	write("provider = [\n")
	if r := sb.rein(t, "run", "hello"); r.code != exitUsage || !strings.Contains(r.stderr, "does not read") {
		t.Fatalf("a config file that does not parse should be refused: %s", r)
	}
}
