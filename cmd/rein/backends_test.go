package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rein serve refuses, before it listens, a back-end it does not know or cannot run, saying why
// and what to do.
func TestServeBackendRefusals(t *testing.T) {
	sb := newSandbox(t)
	// A claude that is not Claude Code: its version is refused with what to install.
	fake := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho '1.0.0 (Claude Code)'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"serve", "--provider", "sim", "--backend", "gemini"}, `unknown back-end "gemini"`},
		{[]string{"serve", "--provider", "sim", "--backends", "claude", "--claude-path", filepath.Join(t.TempDir(), "none")}, "is Claude Code installed?"},
		{[]string{"serve", "--provider", "sim", "--backend", "claude", "--claude-path", fake}, "npm install -g @anthropic-ai/claude-code@2.1.328"},
	} {
		r := sb.rein(t, c.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.says) {
			t.Errorf("rein %s: want exit %d saying %q\n%s", strings.Join(c.args, " "), exitUsage, c.says, r)
		}
	}
}
