package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestDiskFull runs a session whose state directory is on a real filesystem of 320 KiB (a tmpfs)
// until a record no longer fits. rein stops saying the disk is full and what to do; nothing
// already written is lost; once there is room, doctor calls the record admissible (the partly
// written line set aside) and `rein resume` goes on to the end. Mounting needs root (as CI runs);
// elsewhere the test says why it cannot run.
func TestDiskFull(t *testing.T) {
	reinBin(t)
	sb := newSandbox(t)
	small := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(small, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", small, "tmpfs", 0, "size=320k"); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (%v): this test needs root", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(small, unix.MNT_DETACH) })
	sb.home = filepath.Join(small, "home")
	if err := os.Mkdir(sb.home, 0o755); err != nil {
		t.Fatal(err)
	}
	sb.env = append(sb.env, "REIN_HOME="+sb.home)

	// Each step's command prints 6 KB; sixty of them cannot fit in 320 KiB.
	var steps []map[string]any
	for i := range 60 {
		steps = append(steps, map[string]any{"text": fmt.Sprintf("step %d", i), "tool_calls": []map[string]any{
			{"name": "bash", "arguments": map[string]any{"command": fmt.Sprintf("yes 'line %d of a long output' | head -c 6000", i)}}}})
	}
	steps = append(steps, map[string]any{"text": "All steps done."})
	script := writeScript(t, t.TempDir(), steps...)
	args := append(append([]string{"run"}, simArgs(script)...), "--no-checkpoints", "fill the disk")
	res := sb.rein(t, args...)
	if res.code != exitFailed || !strings.Contains(res.stderr, "no space left on device") ||
		!strings.Contains(res.stderr, "the disk holding the session is full") || !strings.Contains(res.stderr, "rein resume ") {
		t.Fatalf("rein run on a full disk: want exit %d saying the disk is full and how to go on\n%s", exitFailed, res)
	}

	// Room again: the record up to its last whole line is intact and the session goes on.
	if err := unix.Mount("tmpfs", small, "tmpfs", unix.MS_REMOUNT, "size=8m"); err != nil {
		t.Fatalf("remount the tmpfs larger: %v", err)
	}
	doc := sb.rein(t, "doctor", "newest")
	if doc.code != 0 || !strings.Contains(doc.stdout, "admissible") {
		t.Fatalf("rein doctor after the disk filled:\n%s", doc)
	}
	more := sb.rein(t, append(append([]string{"resume", "newest"}, simArgs(script)...), "--no-checkpoints", "go on")...)
	if more.code != 0 || !strings.Contains(more.stdout, "All steps done.") {
		t.Fatalf("rein resume once there is room:\n%s", more)
	}
	if doc := sb.rein(t, "doctor", "newest"); doc.code != 0 || strings.Contains(doc.stdout, "torn") {
		t.Fatalf("rein doctor after the resume:\n%s", doc)
	}
}
