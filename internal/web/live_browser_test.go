package web_test

// Browser tests of what a person watches while the agent works: a running command's output as it
// comes, the Stop's marks, diffs, and the approval's choices.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// startBrowser starts headless chromium for one test, or skips the test when there is none.
func startBrowser(t testing.TB) context.Context {
	t.Helper()
	chromium := findChromium()
	if chromium == "" {
		t.Skipf("the web chat's browser tests need chromium at one of %q, or its path in REIN_CHROMIUM", browsers)
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return browser
}

func TestWebLive(t *testing.T) {
	browser := startBrowser(t)
	t.Run("CommandOutputAsItComes", func(t *testing.T) { testLiveOutput(t, browser) })
	t.Run("StopMarkBelowThePartialReply", func(t *testing.T) { testStopMark(t, browser) })
	t.Run("ApprovalDiffAndScope", func(t *testing.T) { testApprovalDiffAndScope(t, browser) })
}

// tickWatch is put in the page: it notes when each "tick N MS" line of a call's live output is
// first on the page (the wall clock the command's date read, in ms).
const tickWatch = `window.ticksSeen = {}; new MutationObserver(() => {
	for (const p of document.querySelectorAll(".tool-live")) for (const m of p.textContent.matchAll(/tick (\d+) (\d+)/g)) {
		if (!(m[1] in window.ticksSeen)) window.ticksSeen[m[1]] = [Number(m[2]), Date.now()];
	}
}).observe(document.getElementById("timeline"), { subtree: true, childList: true, characterData: true }); return true;`

// testLiveOutput: a command printing a line every 100 ms for 3 s shows each line in its card while
// it runs, and its recorded result replaces the live output when it ends.
func testLiveOutput(t *testing.T, browser context.Context) {
	r := newRig(t, browser, `[{"tool_calls":[{"name":"bash","arguments":{"command":"for i in $(seq 1 30); do echo \"tick $i $(date +%s%3N)\"; sleep 0.1; done"}}]},{"text":"Counted."}]`)
	r.open()
	r.evalBool(tickWatch)
	r.do(chromedp.SendKeys(chromedp.ID("input"), "count"+kb.Enter))
	r.wait("the first line live, the call running", `return vis(".tool[data-outcome=running] .tool-live") && "1" in window.ticksSeen`)
	r.wait("more lines", `return "8" in window.ticksSeen`)
	r.screenshot("output")
	r.wait("the result in place of the live output", `const c = document.querySelector('.tool[data-outcome="ok"]');
		return !!c && !c.querySelector(".tool-live") && c.querySelector(".tool-output").textContent.includes("tick 30 ")`)
	var seen map[string][2]int64
	if err := json.Unmarshal([]byte(r.evalString(`return JSON.stringify(window.ticksSeen)`)), &seen); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 30 {
		t.Fatalf("%d of the 30 lines were shown live", len(seen))
	}
	if seen["1"][1] >= seen["30"][0] {
		t.Fatalf("the first line reached the page at %d, after the last was written (%d): nothing was live", seen["1"][1], seen["30"][0])
	}
	var lat []int64
	for _, s := range seen {
		lat = append(lat, s[1]-s[0])
	}
	slices.Sort(lat)
	t.Logf("write to page, 30 lines over 3 s: p50 %d ms, max %d ms (the issue's bound: 250 ms)", lat[len(lat)/2], lat[len(lat)-1])
	if n := r.count(record.KindToolResults, nil); n != 1 {
		t.Fatalf("%d tool_results records, want 1", n)
	}
}

// testStopMark: a Stop while a reply streams leaves the partial reply marked cut short, and the
// Stop's notice below it, worded as the terminal words it.
func testStopMark(t *testing.T, browser context.Context) {
	r := newRig(t, browser, `[{"text":"`+words(60)+`","delay_ms":120}]`)
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "stream something"+kb.Enter))
	r.wait("streamed text", `const l = document.querySelector(".live-text"); return !!l && l.textContent.length > 0`)
	r.do(chromedp.Click(chromedp.ID("stop")))
	r.wait("the partial reply cut short, the notice below it", `const m = [...document.querySelectorAll(".timeline .msg.assistant")].pop(); const n = document.querySelector(".timeline .notice.stopped");
		return !!m && !!n && vis("#send") && m.querySelector(".cut-short").textContent === "(cut short by Stop: what was said so far is kept)" &&
			n.textContent.startsWith("■ Stopped: the session is settled") && (m.compareDocumentPosition(n) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0 &&
			document.querySelectorAll(".timeline .notice.stopped").length === 1`)
	r.screenshot("stop")
	// A reload replays the records: the same marks, in the same order.
	r.do(chromedp.Reload())
	r.ready()
	r.waitReplayed()
	r.wait("the marks after a reload", `const m = [...document.querySelectorAll(".timeline .msg.assistant")].pop(); const n = document.querySelector(".timeline .notice.stopped");
		return !!m && !!n && !!m.querySelector(".cut-short") && (m.compareDocumentPosition(n) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0`)
}

// screenshot saves the page as docs/screens/live-<name>.png when REIN_SCREENSHOTS names the
// directory to write to (the repository's docs/screens when refreshing them).
func (r *rig) screenshot(name string) {
	r.t.Helper()
	dir := os.Getenv("REIN_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := r.ctx(20 * time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		r.t.Fatalf("size the page for a screenshot: %v", err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		r.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "live-"+name+".png"), png, 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// testApprovalDiffAndScope: an edit waiting for approval shows the diff it would make to the
// file as it is, in the panel and inline; Allow once runs it, and the timeline's card shows the
// edit as a diff; a command offers "Allow for this conversation", which lets the same command run
// again unasked, the grant recorded with its rule.
func testApprovalDiffAndScope(t *testing.T, browser context.Context) {
	r := newRigMode(t, browser, `[{"tool_calls":[{"name":"edit_file","arguments":{"path":"notes.txt","old":"beta\n","new":"BETA\nbeta two\n"}}]},
		{"tool_calls":[{"name":"bash","arguments":{"command":"echo same-cmd"}}]},
		{"tool_calls":[{"name":"bash","arguments":{"command":"echo same-cmd"}}]},
		{"text":"All done."}]`, tool.ModeAsk)
	if err := os.WriteFile(filepath.Join(r.cfg.Cwd, "notes.txt"), []byte("alpha\nbeta\ngamma\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "edit the notes"+kb.Enter))
	r.wait("the edit's diff in the panel and inline", `const ds = [...document.querySelectorAll('.approval[data-state="waiting"] .diff')];
		return ds.length === 2 && ds.every((d) => d.querySelector(".diff-path").textContent === "a/notes.txt → b/notes.txt" &&
			[...d.querySelectorAll(".dl.del")].map((l) => l.textContent).join("|") === "-beta" &&
			[...d.querySelectorAll(".dl.add")].map((l) => l.textContent).join("|") === "+BETA|+beta two" &&
			[...d.querySelectorAll(".dl.hunk")].length === 1) && vis("#approvals .allow-conversation")`)
	r.screenshot("approval-diff")
	r.do(chromedp.Click(chromedp.CSS(`#approvals .approval .allow`)))
	r.wait("the edit run, its card a diff", `const c = document.querySelector('.tool[data-outcome="ok"]');
		return !!c && c.open && [...c.querySelectorAll(".diff .dl")].map((l) => l.textContent).join("|") === "-beta|+BETA|+beta two" && !c.querySelector(".tool-args")`)
	if b, _ := os.ReadFile(filepath.Join(r.cfg.Cwd, "notes.txt")); string(b) != "alpha\nBETA\nbeta two\ngamma\n" {
		t.Fatalf("the file after the edit: %q", b)
	}
	r.wait("the command offered for the conversation", `const b = document.querySelector('#approvals .approval[data-state="waiting"] .allow-conversation');
		return !!b && !b.disabled && b.title.includes("bash(echo same-cmd)") && document.querySelector("#approvals .scope-rules").textContent === "bash(echo same-cmd)" &&
			document.querySelector('#approvals .approval[data-state="waiting"] .approval-command').textContent === "$ echo same-cmd"`)
	r.screenshot("approval-scope")
	r.do(chromedp.Click(chromedp.CSS(`#approvals .approval .allow-conversation`)))
	r.wait("the reply, the command run twice", `return [...document.querySelectorAll(".msg.assistant")].some((m) => m.textContent.includes("All done.")) &&
		document.querySelectorAll('.tool[data-outcome="ok"]').length === 3 && !vis("#approvals") &&
		[...document.querySelectorAll(".timeline .approval")].map((a) => a.dataset.state).join("|") === "allowed|allowed for this conversation"`)
	if n := r.count(record.KindApproval, func(rec record.Record) bool { return rec.Body.(*record.Approval).State == record.ApprovalAsked }); n != 2 {
		t.Fatalf("%d approvals asked, want 2: the second command was granted", n)
	}
	if n := r.count(record.KindApproval, func(rec record.Record) bool {
		a := rec.Body.(*record.Approval)
		return a.Scope == record.ScopeConversation && slices.Equal(a.Rules, []string{"bash(echo same-cmd)"})
	}); n != 1 {
		t.Fatalf("%d grants for the conversation recorded, want 1", n)
	}
}
