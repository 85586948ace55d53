package web_test

import (
	"encoding/json"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// flood is a command writing 10 MB/s for 3 s: a line "MARK <µs since the epoch>" and 2,000 bytes
// more, paced to the rate.
const flood = `perl -MTime::HiRes=time,sleep -e '$|=1; my $pad = ("x" x 1999)."\n"; my $t0 = time; my $sent = 0;
while ((my $now = time) - $t0 < 3) { my $l = sprintf("MARK %d\n", $now * 1e6); print $l, $pad; $sent += length($l) + 2000;
my $ahead = $sent / 10e6 - (time - $t0); sleep($ahead) if $ahead > 0.001 }'`

// frameWatch is put in the page: each time the live output changed, it notes the newest mark on
// the page and the time (µs since the epoch). (Headless chromium draws frames only now and then,
// so the time is the DOM's change; a visible page paints it within the next frame.)
const frameWatch = `window.frames_ = []; new MutationObserver(() => {
	const at = Math.round((performance.timeOrigin + performance.now()) * 1000);
	for (const p of document.querySelectorAll(".tool-live")) { const ms = [...p.textContent.slice(-10000).matchAll(/MARK (\d+)/g)];
		if (ms.length) window.frames_.push([Number(ms[ms.length - 1][1]), at]); }
}).observe(document.getElementById("timeline"), { subtree: true, childList: true, characterData: true }); return true;`

// BenchmarkLiveOutputBrowser measures how stale the web chat's view of a command writing 10 MB/s
// is: for each millisecond the command wrote, the time until the page drew output written at or
// after it (p50, p99, from the page's changes), and the CPU the host's process (host, agent,
// simulator and the test's driver; not the command, not the browser) spent while it streamed, in
// percent of one core.
func BenchmarkLiveOutputBrowser(b *testing.B) {
	browser := startBrowser(b)
	var p50s, p99s, cpus []float64
	for i := 0; i < b.N; i++ {
		r := newRig(b, browser, `[{"tool_calls":[{"name":"bash","arguments":{"command":`+jsString(flood)+`}}]},{"text":"Flooded."}]`)
		r.open()
		r.evalBool(frameWatch)
		before, start := cpuTime(b), time.Now()
		r.do(chromedp.SendKeys(chromedp.ID("input"), "flood"+kb.Enter))
		r.wait("the flood's end", `return [...document.querySelectorAll(".msg.assistant")].some((m) => m.textContent.includes("Flooded."))`)
		cpu := float64(cpuTime(b)-before) / float64(time.Since(start)) * 100
		var frames [][2]int64
		if err := json.Unmarshal([]byte(r.evalString(`return JSON.stringify(window.frames_)`)), &frames); err != nil {
			b.Fatal(err)
		}
		lat := staleness(frames)
		if len(lat) < 1000 {
			b.Fatalf("only %d ms of the command's output were seen drawn (%d frames)", len(lat), len(frames))
		}
		p50s = append(p50s, lat[len(lat)/2])
		p99s = append(p99s, lat[len(lat)*99/100])
		cpus = append(cpus, cpu)
		b.Logf("run %d: %d frames; write to page p50 %.1f ms, p99 %.1f ms; host process CPU %.0f%% of a core", i, len(frames), lat[len(lat)/2], lat[len(lat)*99/100], cpu)
	}
	b.ReportMetric(median(p50s), "p50-ms")
	b.ReportMetric(median(p99s), "p99-ms")
	b.ReportMetric(median(cpus), "host-cpu-%")
}

// staleness is, for each millisecond between the first and the last mark drawn, how long the page
// took to draw output written at or after it, in ms, sorted.
func staleness(frames [][2]int64) []float64 {
	if len(frames) < 2 {
		return nil
	}
	var lat []float64
	j := 0
	for t := frames[0][0]; t <= frames[len(frames)-1][0]; t += 1000 {
		for j < len(frames) && frames[j][0] < t {
			j++
		}
		if j == len(frames) {
			break
		}
		lat = append(lat, float64(frames[j][1]-t)/1000)
	}
	slices.Sort(lat)
	return lat
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// cpuTime is the CPU time, user and system, this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
