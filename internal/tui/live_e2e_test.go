package tui

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestEndToEndLiveOutput: in rein chat, a command printing a line every 100 ms for 3 s shows its
// lines under the running call as they are written, and its result once it ends.
func TestEndToEndLiveOutput(t *testing.T) {
	needTmux(t)
	bin := reinBin(t)
	_, ws, env := e2eSandbox(t)
	script := filepath.Join(filepath.Dir(ws), "script.json")
	b, _ := json.Marshal(map[string]any{"steps": []any{
		map[string]any{"tool_calls": []any{map[string]any{"name": "bash", "arguments": map[string]string{
			"command": `for i in $(seq 1 30); do echo "tick $i $(date +%s%3N)"; sleep 0.1; done`}}}},
		map[string]any{"text": "Counted."},
	}})
	if err := os.WriteFile(script, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := startPane(t, ws, env, 100, 30, bin, "chat", "--provider", "sim", "--sim-delay", "1ms", "--sim-script", script)
	p.wait(10*time.Second, "Send a message", "ready")
	p.text("count")
	p.keys("Enter")

	// Note when each tick line is first on the screen, until the call ends.
	tick := regexp.MustCompile(`│ tick (\d+) (\d{13})\b`)
	written, seen := map[int]int64{}, map[int]int64{}
	done := regexp.MustCompile(`▸ bash .* ✓`)
	for deadline := time.Now().Add(20 * time.Second); ; {
		if time.Now().After(deadline) {
			t.Fatalf("the call never ended on the screen:\n%s", p.screen())
		}
		scr := p.screen()
		now := time.Now().UnixMilli()
		for _, m := range tick.FindAllStringSubmatch(scr, -1) {
			i, _ := strconv.Atoi(m[1])
			if _, ok := seen[i]; !ok {
				w, _ := strconv.ParseInt(m[2], 10, 64)
				written[i], seen[i] = w, now
			}
		}
		if done.MatchString(scr) {
			break
		}
		time.Sleep(5 * time.Millisecond) // a polling interval, not a wait for something
	}
	p.wait(10*time.Second, "Counted.", "ready")
	// Lines scroll out of the tail drawn while others come; most are caught on the screen.
	if len(seen) < 20 {
		t.Fatalf("only %d of the 30 lines were seen live", len(seen))
	}
	first := slices.Min(slices.Collect(maps.Keys(seen)))
	last := slices.Max(slices.Collect(maps.Keys(written)))
	if seen[first] >= written[last] {
		t.Fatalf("line %d reached the screen at %d, after line %d was written (%d): nothing was live", first, seen[first], last, written[last])
	}
	var lat []int64
	for i, s := range seen {
		lat = append(lat, s-written[i])
	}
	slices.Sort(lat)
	t.Logf("write to screen (tmux capture, polled): %d lines, p50 %d ms, max %d ms (the issue's bound: 250 ms)", len(lat), lat[len(lat)/2], lat[len(lat)-1])
	p.keys("C-c", "C-c")
	p.waitGone(10 * time.Second)
}
