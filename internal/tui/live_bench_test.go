package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"
)

// flood is a command writing 10 MB/s for 3 s: a line "MARK <µs since the epoch>" and 2,000 bytes
// more, paced to the rate.
const flood = `perl -MTime::HiRes=time,sleep -e '$|=1; my $pad = ("x" x 1999)."\n"; my $t0 = time; my $sent = 0;
while ((my $now = time) - $t0 < 3) { my $l = sprintf("MARK %d\n", $now * 1e6); print $l, $pad; $sent += length($l) + 2000;
my $ahead = $sent / 10e6 - (time - $t0); sleep($ahead) if $ahead > 0.001 }'`

// BenchmarkLiveOutputTmux measures how stale rein chat's screen is while a command writes
// 10 MB/s: for each millisecond the command wrote, the time until the screen (as tmux renders
// it, polled) showed output written at or after it.
func BenchmarkLiveOutputTmux(b *testing.B) {
	needTmux(b)
	bin := reinBin(b)
	mark := regexp.MustCompile(`│ MARK (\d{16})\b`)
	var p50s, p99s []float64
	for i := 0; i < b.N; i++ {
		_, ws, env := e2eSandbox(b)
		script := filepath.Join(filepath.Dir(ws), "script.json")
		s, _ := json.Marshal(map[string]any{"steps": []any{
			map[string]any{"tool_calls": []any{map[string]any{"name": "bash", "arguments": map[string]string{"command": flood}}}},
			map[string]any{"text": "Flooded."},
		}})
		if err := os.WriteFile(script, s, 0o644); err != nil {
			b.Fatal(err)
		}
		p := startPane(b, ws, env, 120, 40, bin, "chat", "--provider", "sim", "--sim-delay", "1ms", "--sim-script", script)
		p.wait(10*time.Second, "Send a message", "ready")
		p.text("flood")
		p.keys("Enter")
		var frames [][2]int64 // newest mark on the screen, and when it was seen (µs)
		done := regexp.MustCompile(`Flooded\.`)
		for deadline := time.Now().Add(30 * time.Second); ; {
			if time.Now().After(deadline) {
				b.Fatalf("the flood never ended on the screen:\n%s", p.screen())
			}
			scr := p.screen()
			at := time.Now().UnixMicro()
			var newest int64
			for _, m := range mark.FindAllStringSubmatch(scr, -1) {
				v, _ := strconv.ParseInt(m[1], 10, 64)
				newest = max(newest, v)
			}
			if newest > 0 && (len(frames) == 0 || newest > frames[len(frames)-1][0]) {
				frames = append(frames, [2]int64{newest, at})
			}
			if done.MatchString(scr) {
				break
			}
		}
		var lat []float64
		j := 0
		for t := frames[0][0]; t <= frames[len(frames)-1][0]; t += 1000 {
			for j < len(frames) && frames[j][0] < t {
				j++
			}
			lat = append(lat, float64(frames[j][1]-t)/1000)
		}
		slices.Sort(lat)
		p50s = append(p50s, lat[len(lat)/2])
		p99s = append(p99s, lat[len(lat)*99/100])
		b.Logf("run %d: %d screens; write to screen p50 %.1f ms, p99 %.1f ms", i, len(frames), lat[len(lat)/2], lat[len(lat)*99/100])
		p.keys("C-c", "C-c")
		p.waitGone(10 * time.Second)
	}
	slices.Sort(p50s)
	slices.Sort(p99s)
	b.ReportMetric(p50s[len(p50s)/2], "p50-ms")
	b.ReportMetric(p99s[len(p99s)/2], "p99-ms")
}
