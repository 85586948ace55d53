package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// spareShells lists this process's children that are bash tool shells waiting for a command
// (a spare's command line is the direct script's, with no command after "rein-bash").
func spareShells(t *testing.T) []int {
	t.Helper()
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) || f[0] == "Z" {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		args := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
		if len(args) > 0 && args[len(args)-1] == "rein-bash" {
			pid, _ := strconv.Atoi(filepath.Base(d))
			out = append(out, pid)
		}
	}
	return out
}

// TestRestEndsSpareShell: a conversation that ran a command keeps a spare shell for its next one
// while it is open, and ends it when it rests (its agent put away), so a host's quiet
// conversations keep no idle processes.
func TestRestEndsSpareShell(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	r := newRig(t, rigOptions{bash: true, script: steps(`{"text":"Looking.","tool_calls":[{"name":"bash","arguments":{"command":"echo hi"}}]}`, `{"text":"Done."}`)})
	id := r.create("spare")
	ctx, cancel := context.WithCancel(context.Background())
	w := &watch{t: t, s: r.c.Events(ctx, id, 0), now: func() int64 { return r.get(id).State.Seq }}
	r.send(id, "do it")
	w.idle()
	cancel() // a watched conversation does not rest
	deadline := time.Now().Add(5 * time.Second)
	for len(spareShells(t)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if len(spareShells(t)) == 0 {
		t.Fatal("the conversation kept no spare shell after its command")
	}
	deadline = time.Now().Add(5 * time.Second)
	for len(spareShells(t)) > 0 && time.Now().Before(deadline) {
		if err := r.h.Rest(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if left := spareShells(t); len(left) > 0 {
		t.Errorf("spare shells %v outlived the conversation's rest", left)
	}
}
