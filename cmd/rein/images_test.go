package main

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunReadsAnImage: a real rein run (against the simulator, which speaks Anthropic's wire and
// takes images) reads a PNG with read_file; the session replays admissibly, doctor counts the
// image it read back from its blob, and a missing blob is refused by name.
func TestRunReadsAnImage(t *testing.T) {
	sb := newSandbox(t)
	var pic bytes.Buffer
	if err := png.Encode(&pic, image.NewGray(image.Rect(0, 0, 4, 3))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sb.ws, "shot.png"), pic.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, t.TempDir(),
		map[string]any{"text": "Looking.", "tool_calls": []any{map[string]any{"name": "read_file", "arguments": map[string]any{"path": "shot.png"}}}},
		map[string]any{"text": "A grey square."},
	)
	res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "what is in shot.png")...)
	if res.code != 0 || !strings.Contains(res.stdout, "[image: shot.png, a PNG image, 4×3") {
		t.Fatalf("rein run: %s", res)
	}
	paths := sb.records(t)
	if len(paths) != 1 {
		t.Fatalf("records: %v", paths)
	}
	out, err := exec.Command(reinBin(t), "doctor", paths[0]).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "admissible") || !strings.Contains(string(out), "images in tool results: 1") {
		t.Fatalf("rein doctor: %v\n%s", err, out)
	}
	blobs, _ := filepath.Glob(filepath.Join(filepath.Dir(paths[0]), "blobs", "*"))
	if len(blobs) != 1 {
		t.Fatalf("blobs: %v", blobs)
	}
	if err := os.Remove(blobs[0]); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(reinBin(t), "doctor", paths[0]).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "refused") || !strings.Contains(string(out), filepath.Base(blobs[0])[:16]) {
		t.Fatalf("rein doctor with the blob gone: %v\n%s", err, out)
	}
}
