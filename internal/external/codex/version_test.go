package codex

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersionRule(t *testing.T) {
	for in, want := range map[string]string{
		"codex-cli 0.169.0\n": "0.169.0",
		"rein/0.169.0 (Debian 12.0.0; x86_64) xterm (rein; 0)": "0.169.0",
		"codex-cli 0.170.0-alpha.2":                            "0.170.0-alpha.2",
	} {
		if got, err := parseVersion(in); err != nil || got != want {
			t.Errorf("parseVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := parseVersion("codex-cli"); err == nil {
		t.Error("a version-less line parsed")
	}
	for _, v := range []string{"0.169.0", "0.169.12"} {
		if err := known(v); err != nil {
			t.Errorf("known(%s): %v", v, err)
		}
	}
	for _, v := range []string{"0.168.0", "0.170.0", "1.169.0", "0.16.9"} {
		err := known(v)
		if err == nil || !strings.Contains(err.Error(), "does not know") || !strings.Contains(err.Error(), "@openai/codex@"+Pin) {
			t.Errorf("known(%s) = %v; want a refusal naming what to install", v, err)
		}
	}
}

// TestCheck runs Check on the installed Codex, and on a program that says it is a Codex of a
// release rein does not know.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "codex")
	if err := os.WriteFile(other, []byte("#!/bin/sh\necho codex-cli 0.170.0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if v, err := New(Options{Path: other}).Check(context.Background()); err == nil || v != "0.170.0" {
		t.Errorf("Check of a 0.170.0: %q, %v; want the version and a refusal", v, err)
	}
	if _, err := New(Options{Path: filepath.Join(dir, "absent")}).Check(context.Background()); err == nil {
		t.Error("Check of a missing program passed")
	}
	path := codexPath(t)
	v, err := New(Options{Path: path}).Check(context.Background())
	if err != nil || !strings.HasPrefix(v, "0.169.") {
		t.Errorf("Check of the installed Codex: %q, %v", v, err)
	}
}
