package web_test

// The web chat tested end to end (DESIGN §12.6): a real host in-process, its agent talking to the
// provider simulator through the Anthropic client, and chromium (Debian's in CI; Chromium or
// Google Chrome on macOS) driven headless by chromedp. Nothing sleeps for a fixed time: every wait polls the page or the host with a timeout.

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/reinhq/rein/internal/agent"
	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/checkpoint"
	"github.com/reinhq/rein/internal/fold"
	"github.com/reinhq/rein/internal/hook"
	"github.com/reinhq/rein/internal/host"
	"github.com/reinhq/rein/internal/provider/anthropic"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
	"github.com/reinhq/rein/internal/tool"
	fstool "github.com/reinhq/rein/internal/tool/fs"
	"github.com/reinhq/rein/internal/tool/shell"
	"github.com/reinhq/rein/internal/tool/todo"
	"github.com/reinhq/rein/internal/web"
)

// browsers are where the tests look for a browser, after $REIN_CHROMIUM: Debian's chromium, then
// Chromium and Google Chrome as macOS installs them.
var browsers = []string{
	"/usr/bin/chromium",
	"/Applications/Chromium.app/Contents/MacOS/Chromium",
	"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
}

// findChromium returns the browser the tests drive, or "" if there is none.
func findChromium() string {
	if p := os.Getenv("REIN_CHROMIUM"); p != "" {
		return p
	}
	for _, p := range browsers {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

func TestWebChat(t *testing.T) {
	chromium := findChromium()
	if chromium == "" {
		t.Skipf("the web chat's browser tests need chromium at one of %q, or its path in REIN_CHROMIUM "+
			"(apt-get install chromium, as .ci/run does; on macOS, brew install --cask chromium)", browsers)
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
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("start chromium: %v", err)
	}

	t.Run("ModulesAgreeWithTheHost", func(t *testing.T) { testModules(t, browser) })
	t.Run("StopFromSendAndDuring429", func(t *testing.T) { testStopFromSend(t, browser) })
	t.Run("EscapeStopsStreaming", func(t *testing.T) { testEscape(t, browser) })
	t.Run("WithdrawnTextComesBackOnce", func(t *testing.T) { testWithdrawn(t, browser) })
	t.Run("StopDropsUnsentOutbox", func(t *testing.T) { testDropUnsent(t, browser) })
	t.Run("OutboxSurvivesReloadWhileHostDown", func(t *testing.T) { testOutboxReload(t, browser) })
	t.Run("ToolCallsOutcomesAndResidue", func(t *testing.T) { testToolsAndResidue(t, browser) })
	t.Run("RetryAfterHostRestart", func(t *testing.T) { testRetryAfterRestart(t, browser) })
	t.Run("ListRenameNewAndPhone", func(t *testing.T) { testListAndPhone(t, browser) })
	t.Run("ApprovalAllowRunsTheCall", func(t *testing.T) { testApprovalAllow(t, browser) })
	t.Run("ApprovalDenyRefusesTheCall", func(t *testing.T) { testApprovalDeny(t, browser) })
	t.Run("StopEndsTheApprovalWait", func(t *testing.T) { testApprovalStop(t, browser) })
	t.Run("EvictAndForkFromThePanel", func(t *testing.T) { testEvictAndFork(t, browser) })
	t.Run("RewindFilesFromThePanel", func(t *testing.T) { testRewindFiles(t, browser) })
	t.Run("HeldCallShownAndReleased", func(t *testing.T) { testHeldRelease(t, browser) })
	t.Run("ClaudeCodePickedAndStopped", func(t *testing.T) { testClaudePicker(t, browser) })
}

// testHeldRelease: a hook holds a call; the page shows the hold with its reason above the
// composer and in the list; once the hook would let it go, Release runs it, once.
func testHeldRelease(t *testing.T, browser context.Context) {
	hooks := func(ws string) *hook.Set {
		p := filepath.Join(ws, "..", filepath.Base(ws)+"-hold.sh")
		body := "#!/usr/bin/env bash\n[ -e approved ] || echo '{\"decision\":\"hold\",\"reason\":\"waiting for a review\"}'\n"
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Error(err)
		}
		return &hook.Set{Workspace: ws, Hooks: []hook.Hook{{Event: record.HookPreTool, Command: p, Timeout: time.Minute}}}
	}
	r := newRigMode(t, browser, `[{"tool_calls":[{"name":"bash","arguments":{"command":"echo released-run"}}]},{"text":"Ran it."}]`, tool.ModeWorkspace, hooks)
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "run it"+kb.Enter))
	r.wait("the hold shown with its reason, and in the list", `const h = document.querySelector("#held");
		return vis("#held") && h.querySelector(".held-reason").textContent === "waiting for a review" && document.querySelector("#status").textContent.includes("held") && !!h.querySelector(".release") && !h.querySelector(".release").disabled &&
			[...document.querySelectorAll(".conv .held-tag")].length === 1 &&
			[...document.querySelectorAll(".timeline .notice.hook")].some((n) => n.textContent.includes("hold (waiting for a review)")) &&
			[...document.querySelectorAll(".timeline .notice.held-note")].some((n) => n.textContent.includes("waiting for a review"))`)
	if err := os.WriteFile(filepath.Join(r.cfg.Cwd, "approved"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r.do(chromedp.Click(chromedp.CSS(`#held .release`)))
	r.wait("the call run and the hold gone", `const c = document.querySelector('.tool[data-outcome="ok"] .tool-output');
		return !!c && c.textContent.includes("released-run") && !vis("#held") && [...document.querySelectorAll(".msg.assistant")].some((m) => m.textContent.includes("Ran it."))`)
	if n := r.count(record.KindReleased, func(record.Record) bool { return true }); n != 1 {
		t.Errorf("%d released records, want 1", n)
	}
}

// approvalShown is a script that is true when one call waits for approval, shown both inline in
// the timeline and above the composer, with its tool name and summary, and Stop is there.
func approvalShown(name, summary string) string {
	return `const b = document.querySelector('#approvals .approval[data-state="waiting"]'); const i = document.querySelector('.timeline .approval[data-state="waiting"]');
		return vis("#approvals") && vis("#stop") && !!b && !!i && b.dataset.call === i.dataset.call && document.querySelectorAll("#approvals .approval").length === 1 &&
			[b, i].every((x) => x.querySelector(".tool-name").textContent === ` + jsString(name) + ` && x.querySelector(".approval-summary").textContent === ` + jsString(summary) + ` && !x.querySelector(".allow").disabled && !x.querySelector(".deny").disabled)`
}

// approvals counts the approval records answered state by the person.
func (r *rig) approvals(state string) int {
	return r.count(record.KindApproval, func(rec record.Record) bool {
		a := rec.Body.(*record.Approval)
		return a.State == state && a.By == string(record.ByUser)
	})
}

// testApprovalAllow: in permission mode ask a bash call waits for the person; its Allow button,
// reached with the keyboard, runs it, and the timeline keeps the answer.
func testApprovalAllow(t *testing.T, browser context.Context) {
	r := newRigMode(t, browser, `[{"text":"I will run it.","tool_calls":[{"name":"bash","arguments":{"command":"echo approved-run"}}]},{"text":"Ran it."}]`, tool.ModeAsk)
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "run it"+kb.Enter))
	r.wait("the call waiting for approval", approvalShown("bash", "echo approved-run"))
	if a := r.view().State.Approvals; len(a) != 1 || a[0].Name != "bash" {
		t.Fatalf("the host's state lists %+v waiting, want the one bash call", a)
	}
	r.do(chromedp.Focus(chromedp.CSS(`#approvals .approval .allow`)), chromedp.KeyEvent(kb.Enter))
	r.wait("the call run, the answer kept inline", `const c = document.querySelector('.tool[data-outcome="ok"] .tool-output'); const i = document.querySelector(".timeline .approval");
		return !!c && !c.hidden && c.textContent.includes("approved-run") && i.dataset.state === "allowed" && i.querySelector(".approval-status").textContent === "allowed" && !vis(".timeline .approval .allow") && !vis("#approvals")`)
	r.wait("the reply", `return [...document.querySelectorAll(".msg.assistant")].some((m) => m.textContent.includes("Ran it.")) && vis("#send") && !vis("#stop")`)
	if n := r.approvals(record.ApprovalAllowed); n != 1 {
		t.Errorf("%d allowed answers recorded, want 1", n)
	}
}

// testApprovalDeny: Deny, pressed inline in the timeline, refuses the call: its card reads denied,
// nothing ran, and the model goes on.
func testApprovalDeny(t *testing.T, browser context.Context) {
	r := newRigMode(t, browser, `[{"tool_calls":[{"name":"bash","arguments":{"command":"touch never-made"}}]},{"text":"Understood, I will not."}]`, tool.ModeAsk)
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "make a file"+kb.Enter))
	r.wait("the call waiting for approval", approvalShown("bash", "touch never-made"))
	r.do(chromedp.Click(chromedp.CSS(`.timeline .approval .deny`)))
	r.wait("the denied card and answer", `const c = document.querySelector('.tool[data-call]'); const i = document.querySelector(".timeline .approval");
		return !!c && c.dataset.outcome === "denied" && c.querySelector(".outcome").textContent === "denied" && i.dataset.state === "denied" && i.querySelector(".approval-status").textContent === "denied" && !vis("#approvals")`)
	r.wait("the reply", `return [...document.querySelectorAll(".msg.assistant")].some((m) => m.textContent.includes("Understood, I will not.")) && vis("#send")`)
	if _, err := os.Stat(filepath.Join(r.cfg.Cwd, "never-made")); err == nil {
		t.Errorf("the denied call ran")
	}
	if n := r.approvals(record.ApprovalDenied); n != 1 {
		t.Errorf("%d denied answers recorded, want 1", n)
	}
}

// testApprovalStop: Stop ends the wait: the call is not executed and its buttons go.
func testApprovalStop(t *testing.T, browser context.Context) {
	r := newRigMode(t, browser, `[{"tool_calls":[{"name":"bash","arguments":{"command":"echo never-run"}}]},{"text":"never played"}]`, tool.ModeAsk)
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "run something"+kb.Enter))
	r.wait("the call waiting for approval", approvalShown("bash", "echo never-run"))
	r.do(chromedp.Click(chromedp.ID("stop")))
	r.wait("the wait ended by the Stop", `const c = document.querySelector('.tool[data-call]'); const i = document.querySelector(".timeline .approval");
		return !!c && c.dataset.outcome === "not_executed" && i.dataset.state === "ended" && !vis(".timeline .approval .allow") && !vis("#approvals") && vis("#send") && !vis("#stop")`)
	r.waitHost("the conversation to stop working", func() bool { v := r.view(); return !v.State.Working && len(v.State.Approvals) == 0 })
	if n := r.approvals(record.ApprovalAllowed) + r.approvals(record.ApprovalDenied); n != 0 {
		t.Errorf("%d answers recorded after a Stop, want none", n)
	}
}

// testEvictAndFork: from the context panel, an eviction the host refuses shows its reason; one
// with a note leaves a residue in the timeline and the survey; Fork makes a new conversation.
func testEvictAndFork(t *testing.T, browser context.Context) {
	r := newRig(t, browser, `[{"text":"First answer."},{"text":"Second answer."}]`)
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "first question"+kb.Enter))
	r.wait("the first reply", `return [...document.querySelectorAll(".msg.assistant")].some((m) => m.textContent.includes("First answer.")) && vis("#send") && !vis("#stop")`)
	r.do(chromedp.SendKeys(chromedp.ID("input"), "second question"+kb.Enter))
	r.wait("the second reply", `return [...document.querySelectorAll(".msg.assistant")].some((m) => m.textContent.includes("Second answer.")) && vis("#send") && !vis("#stop")`)
	r.waitHost("the exchange to end", func() bool { return !r.view().State.Working })
	first := r.view().ID
	r.do(chromedp.Click(chromedp.ID("context-btn")))
	r.wait("the survey with its edit actions on", `const b = document.querySelector(".survey tbody tr .ctx-evict"); return !!b && !b.disabled && vis(".ctx-fork") && !document.querySelector(".ctx-fork").disabled && !vis(".ctx-busy")`)
	row := r.evalString(`const r = document.querySelector(".survey tbody tr"); return r.cells[0].textContent`)
	r.do(chromedp.Click(chromedp.CSS(`.survey tbody tr .ctx-evict`)))
	r.wait("the eviction form, filled from the row", `const f = document.getElementById("evict-from").value, t = document.getElementById("evict-to").value;
		return vis(".evict-form") && document.activeElement === document.getElementById("evict-note") && (f === t ? f : f + "–" + t) === `+jsString(row))

	// A span the host refuses: its reason is shown.
	r.do(chromedp.SetValue(chromedp.ID("evict-from"), "90"), chromedp.SetValue(chromedp.ID("evict-to"), "99"),
		chromedp.SendKeys(chromedp.ID("evict-note"), "nothing there"), chromedp.Click(chromedp.CSS(`.evict-form button[type="submit"]`)))
	r.wait("the host's refusal", `return vis(".ctx-error") && document.querySelector(".ctx-error").textContent.includes("not recorded")`)

	r.do(chromedp.SetValue(chromedp.ID("evict-from"), "1"), chromedp.SetValue(chromedp.ID("evict-to"), "2"),
		chromedp.SetValue(chromedp.ID("evict-note"), "asked a first question; answered"), chromedp.Click(chromedp.CSS(`.evict-form button[type="submit"]`)))
	r.wait("the residue in the timeline and the survey", `const b = document.querySelector(".timeline .residue"); return !!b && b.textContent.includes("asked a first question; answered") && b.textContent.includes("1–2") &&
		!!document.querySelector(".survey .residue-row") && !vis(".ctx-error") && !vis(".evict-form")`)
	if n := r.count(record.KindEvicted, nil); n != 1 {
		t.Errorf("%d evictions recorded, want 1", n)
	}

	r.do(chromedp.Click(chromedp.CSS(`.ctx-fork`)))
	r.wait("the fork in the list, current", `return document.querySelectorAll(".conv").length === 2 && document.querySelector(".conv[aria-current]").dataset.id !== `+jsString(first))
	list, err := r.h.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("the host has %d conversations after the fork, want 2", len(list))
	}
}

// testStopFromSend: Stop is there in the same task as the Send click, before any byte reached the
// host, stays while the provider answers 429 with a long retry-after, and ends the retry.
func testStopFromSend(t *testing.T, browser context.Context) {
	r := newRig(t, browser, `[{"status":429,"retry_after":"30"},{"text":"never played"}]`)
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "hello there"))
	if got := r.evalBool(`document.getElementById("send").click(); return vis("#stop") && !vis("#send") && !document.querySelector(".live-text");`); !got {
		t.Fatalf("Stop was not shown in the same task as Send\n%s", r.dump())
	}
	r.wait("the retry notice of the 429", `return !!document.querySelector(".notice.retry")`)
	if !r.evalBool(`return vis("#stop") && !vis("#send")`) {
		t.Fatalf("Stop is not shown while the provider's 429 is being retried\n%s", r.dump())
	}
	if v := r.view(); !v.State.Working {
		t.Fatalf("the host does not read the conversation working during the retry: %+v", v.State)
	}
	r.do(chromedp.Click(chromedp.ID("stop")))
	r.wait("Send back after Stop", `return vis("#send") && !vis("#stop") && !!document.querySelector(".notice.stopped")`)
	r.waitHost("the conversation to stop working", func() bool { return !r.view().State.Working })
	if n := r.sim.Pending(); n != 1 {
		t.Errorf("the simulator played %d steps after the Stop; the retry should have ended with nothing more sent", 1-n)
	}
}

// testEscape: Escape stops a streaming reply.
func testEscape(t *testing.T, browser context.Context) {
	r := newRig(t, browser, `[{"text":"`+words(60)+`","delay_ms":120}]`)
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "stream something"+kb.Enter))
	r.wait("streamed text", `const l = document.querySelector(".live-text"); return !!l && l.textContent.length > 0 && vis("#stop")`)
	r.do(chromedp.KeyEvent(kb.Escape))
	r.wait("Send back after Escape", `return vis("#send") && !vis("#stop") && !document.querySelector(".live")`)
	r.waitHost("the conversation to stop working", func() bool { return !r.view().State.Working })
	if n := r.count(record.KindStop, func(rec record.Record) bool { return rec.Body.(*record.Stop).Interrupted }); n != 1 {
		t.Errorf("%d interrupting Stop records after one Escape, want 1", n)
	}
}

// testWithdrawn: a message the host accepted but had not delivered is withdrawn by Stop and its
// text comes back into the composer after the draft, exactly once, and still once after a
// reload replays the whole conversation.
func testWithdrawn(t *testing.T, browser context.Context) {
	r := newRig(t, browser, `[{"text":"`+words(80)+`","delay_ms":150}]`)
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "first"+kb.Enter))
	r.wait("the first reply streaming", `const l = document.querySelector(".live-text"); return !!l && l.textContent.length > 0`)
	r.do(chromedp.SendKeys(chromedp.ID("input"), "second message"+kb.Enter))
	r.wait("the second message accepted by the host", `const p = document.querySelector('.pending-msg[data-state="accepted"]'); return !!p && p.textContent.includes("second message")`)
	r.do(chromedp.SendKeys(chromedp.ID("input"), "my draft"))
	r.do(chromedp.Click(chromedp.ID("stop")))
	const want = "my draft\nsecond message"
	r.wait("the withdrawn text after the draft", `return document.getElementById("input").value === `+jsString(want)+` && vis("#send") && !vis("#stop")`)
	r.wait("the withdrawn record in the stream", `return !!document.querySelector(".notice.withdrawn")`)
	r.expectComposer(want)
	r.waitHost("the conversation to stop working", func() bool { return !r.view().State.Working })

	r.do(chromedp.Reload())
	r.ready()
	r.waitReplayed()
	r.expectComposer(want)
	if n := r.delivered("second message"); n != 0 {
		t.Errorf("the withdrawn message was delivered %d times", n)
	}
}

// testDropUnsent: a message the host never acknowledged is dropped from the outbox by Stop, comes
// back after the draft, and is never sent once the host is back.
func testDropUnsent(t *testing.T, browser context.Context) {
	r := newRig(t, browser, ``)
	r.open()
	r.down()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "unsent words"+kb.Enter))
	r.wait("the message waiting in the outbox, and Stop", `return !!document.querySelector('.pending-msg[data-state="queued"]') && vis("#stop")`)
	r.do(chromedp.SendKeys(chromedp.ID("input"), "draft"))
	r.do(chromedp.Click(chromedp.ID("stop")))
	r.wait("the dropped text after the draft", `return document.getElementById("input").value === "draft\nunsent words" && !vis("#stop")`)
	r.expectComposer("draft\nunsent words")
	r.up()
	r.wait("the page to reach the host again", `return document.getElementById("status").textContent === ""`)
	if n := r.submitted("unsent words"); n != 0 {
		t.Errorf("a message Stop dropped from the outbox reached the host %d times", n)
	}
}

// testOutboxReload: with the host down, a sent message and a half-typed draft survive a reload (the
// page comes from its service worker), and the message is delivered exactly once when the host is
// back on the same address.
func testOutboxReload(t *testing.T, browser context.Context) {
	r := newRig(t, browser, `[{"text":"Got it."}]`)
	r.open()
	r.wait("the service worker to hold the page", `return document.documentElement.dataset.offline === "ready"`)
	r.down()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "kept across reload"+kb.Enter))
	r.wait("the message in the outbox", `return !!document.querySelector('.pending-msg[data-state="queued"]')`)
	r.do(chromedp.SendKeys(chromedp.ID("input"), "half typed"))
	r.do(chromedp.Reload())
	r.ready()
	r.wait("the outbox after the reload", `const p = document.querySelector('.pending-msg[data-state="queued"]'); return !!p && p.textContent.includes("kept across reload") && vis("#stop")`)
	r.expectComposer("half typed")
	r.up()
	r.wait("the message delivered and answered", `return [...document.querySelectorAll(".msg.user")].some((m) => m.textContent.includes("kept across reload")) && !document.querySelector(".pending-msg") && localStorage.getItem("rein.outbox.v1") === null && vis("#send") && !vis("#stop")`)
	r.waitHost("the exchange to end", func() bool { return !r.view().State.Working })
	if n := r.submitted("kept across reload"); n != 1 {
		t.Errorf("the host accepted the message %d times, want exactly once", n)
	}
	if n := r.delivered("kept across reload"); n != 1 {
		t.Errorf("the message was delivered %d times, want exactly once", n)
	}
	r.expectComposer("half typed")
}

// testToolsAndResidue: streamed text, tool calls with their outcomes shown distinctly, and an
// eviction shown as a residue in the timeline and the context panel.
func testToolsAndResidue(t *testing.T, browser context.Context) {
	r := newRig(t, browser, `[
		{"text":"Let me look at both.","delay_ms":40,"tool_calls":[
			{"name":"bash","arguments":{"command":"echo hello-from-tool"}},
			{"name":"bash","arguments":{"command":"exit 3"}}]},
		{"text":"One worked, one failed."},
		{"tool_calls":[{"name":"context","arguments":{"op":"evict","from":1,"to":4,"note":"ran two commands; one failed"}}]},
		{"text":"Done."}]`)
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "run two commands"+kb.Enter))
	r.wait("streamed text", `const l = document.querySelector(".live-text"); return !!l && l.textContent.length > 0`)
	r.wait("both tool outcomes with their output", `return [...document.querySelectorAll('.tool[data-outcome="ok"] .tool-output, .tool[data-outcome="error"] .tool-output')].filter((o) => !o.hidden).length === 2`)
	ok := r.evalString(`const c = document.querySelector('.tool[data-outcome="ok"]'); return c.querySelector(".tool-name").textContent + " | " + c.querySelector(".tool-summary").textContent + " | " + c.querySelector(".outcome").textContent + " | " + c.querySelector(".tool-output").textContent`)
	if !strings.Contains(ok, "bash | echo hello-from-tool | ok | hello-from-tool") {
		t.Errorf("the ok tool card reads %q", ok)
	}
	failed := r.evalString(`const c = document.querySelector('.tool[data-outcome="error"]'); return c.querySelector(".tool-summary").textContent + " | " + c.querySelector(".outcome").textContent`)
	if failed != "exit 3 | error" {
		t.Errorf("the failed tool card reads %q", failed)
	}
	r.wait("the reply", `return [...document.querySelectorAll(".msg.assistant")].some((m) => m.textContent.includes("One worked, one failed.")) && vis("#send")`)

	r.do(chromedp.SendKeys(chromedp.ID("input"), "tidy your context"+kb.Enter))
	r.wait("the residue", `const b = document.querySelector(".timeline .residue"); return !!b && b.textContent.includes("ran two commands; one failed") && b.textContent.includes("1–4") && !!document.querySelector(".msg.evicted")`)
	r.do(chromedp.Click(chromedp.ID("context-btn")))
	r.wait("the survey with the residue", `return !!document.querySelector(".survey .residue-row") && !!document.querySelector(".context-messages .residue")`)
}

// testRetryAfterRestart: a message the host accepted but never delivered before it restarted is
// rejected as host_restarted; the page offers Retry, which sends it under a new op id, delivered
// once. The stream resumes from its cursor without repeating what the page already shows.
func testRetryAfterRestart(t *testing.T, browser context.Context) {
	r := newRig(t, browser, `[{"text":"`+words(80)+`","delay_ms":150},{"text":"Retried and answered."}]`)
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "first"+kb.Enter))
	r.wait("the first reply streaming", `const l = document.querySelector(".live-text"); return !!l && l.textContent.length > 0`)
	r.do(chromedp.SendKeys(chromedp.ID("input"), "waiting message"+kb.Enter))
	r.wait("the waiting message accepted", `return !!document.querySelector('.pending-msg[data-state="accepted"]')`)
	r.restart()
	r.wait("Retry for the message the restart rejected", `const p = document.querySelector('.pending-msg[data-state="retry"]'); return !!p && p.textContent.includes("waiting message") && p.textContent.includes("restarted") && vis("#send") && !vis("#stop")`)
	r.do(chromedp.Click(chromedp.CSS(`.pending-msg[data-state="retry"] button`)))
	r.wait("the retried message answered", `return [...document.querySelectorAll(".msg.assistant")].some((m) => m.textContent.includes("Retried and answered.")) && !document.querySelector(".pending-msg") && localStorage.getItem("rein.outbox.v1") === null`)
	if n := r.delivered("waiting message"); n != 1 {
		t.Errorf("the retried message was delivered %d times, want once", n)
	}
	if n := r.submitted("waiting message"); n != 2 {
		t.Errorf("the host accepted the message %d times, want twice (the original and the Retry)", n)
	}
	if n := r.evalString(`return String([...document.querySelectorAll(".msg.user")].filter((m) => m.textContent.includes("first")).length)`); n != "1" {
		t.Errorf("the first message shows %s times after the stream resumed, want once", n)
	}
}

// testListAndPhone: the list shows the working conversation, a new conversation and a rename reach
// the host, and on a phone-sized screen the list folds away behind a menu button.
func testListAndPhone(t *testing.T, browser context.Context) {
	r := newRig(t, browser, `[{"text":"`+words(40)+`","delay_ms":100}]`)
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "keep busy"+kb.Enter))
	r.wait("the list to show it working", `return !!document.querySelector('.conv[aria-current][data-working="1"] .dot.on')`)
	r.do(chromedp.KeyEvent(kb.Escape))
	r.wait("the list to show it idle", `return !!document.querySelector('.conv[aria-current][data-working="0"]')`)
	first := r.view().ID
	r.do(chromedp.Click(chromedp.ID("rename")))
	r.wait("the title field, its text selected", `const i = document.getElementById("rename-input"); return document.activeElement === i && i.selectionEnd - i.selectionStart === i.value.length`)
	r.do(chromedp.KeyEvent("Renamed here" + kb.Enter))
	r.wait("the new title", `return document.getElementById("title").textContent === "Renamed here"`)
	r.waitHost("the title on the host", func() bool { return r.view().Title == "Renamed here" })
	r.do(chromedp.Click(chromedp.ID("new-conv")))
	r.wait("two conversations, the new one current", `return document.querySelectorAll(".conv").length === 2 && document.querySelector(".conv[aria-current]").dataset.id !== `+jsString(first))

	r.do(chromedp.EmulateViewport(390, 800))
	r.wait("the list folded away", `return vis("#menu") && document.getElementById("sidebar").getBoundingClientRect().right <= 0`)
	r.do(chromedp.Click(chromedp.ID("menu")))
	r.wait("the list open", `const b = document.getElementById("sidebar").getBoundingClientRect(); return b.left >= 0 && b.right > 200`)
	r.do(chromedp.Click(chromedp.CSS(`.conv[data-id=` + jsString(first) + `]`)))
	r.wait("the list folded after choosing", `return document.getElementById("sidebar").getBoundingClientRect().right <= 0 && document.getElementById("title").textContent === "Renamed here"`)
}

// testModules runs the page's pure modules in the browser against the Go they mirror: the working
// rule against api.Working over every small state, the residue reader against fold.ResidueText,
// and the outbox's give-back against a storage it shares with nothing.
func testModules(t *testing.T, browser context.Context) {
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServerFS(web.Files()))
	mux.HandleFunc("/blank", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "<!doctype html><title>modules</title>")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tab, cancel := chromedp.NewContext(browser)
	defer cancel()
	if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/blank")); err != nil {
		t.Fatal(err)
	}
	run := func(js string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(tab, 10*time.Second)
		defer cancel()
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%v\n%s", err, js)
		}
		return out
	}

	// Every state with at most two submissions in any state, in flight or not.
	states := []string{api.Accepted, api.Delivered, api.Answered, api.Cancelled, api.Withdrawn, api.Rejected}
	var cases []api.State
	var want []bool
	for _, inFlight := range []bool{false, true} {
		subsets := [][]string{nil}
		for _, a := range states {
			subsets = append(subsets, []string{a})
			for _, b := range states {
				subsets = append(subsets, []string{a, b})
			}
		}
		for _, set := range subsets {
			st := api.State{InFlight: inFlight, Submissions: []api.Submission{}}
			for i, s := range set {
				st.Submissions = append(st.Submissions, api.Submission{ID: "m-" + itoa(int64(i)), State: s})
			}
			cases = append(cases, st)
			want = append(want, api.Working(st))
		}
	}
	in, _ := json.Marshal(cases)
	got := run(`import("/working.js").then((m) => JSON.stringify(` + string(in) + `.map((s) => m.working(s))))`)
	wantJSON, _ := json.Marshal(want)
	if got != string(wantJSON) {
		t.Errorf("working.js and api.Working disagree over %d states:\n js: %s\ngo: %s", len(cases), got, wantJSON)
	}

	for _, c := range []struct {
		from, to int64
		note     string
	}{{3, 7, "the retry loop was a dead end"}, {4, 4, "one turn"}, {2, 3, `a "quoted" note`}, {1, 40, ""}} {
		text, _ := json.Marshal(fold.ResidueText(c.from, c.to, c.note))
		got := run(`import("/markup.js").then((m) => JSON.stringify(m.residueOf(` + string(text) + `)))`)
		want, _ := json.Marshal(struct {
			From int64  `json:"from"`
			To   int64  `json:"to"`
			Note string `json:"note"`
		}{c.from, c.to, c.note})
		if got != string(want) {
			t.Errorf("residueOf(%s) = %s, want %s", text, got, want)
		}
	}

	got = run(`import("/outbox.js").then(({ Drafts, Outbox }) => {
		const m = new Map();
		const storage = { getItem: (k) => (m.has(k) ? m.get(k) : null), setItem: (k, v) => m.set(k, String(v)), removeItem: (k) => m.delete(k) };
		const drafts = new Drafts(storage), box = new Outbox(storage, drafts);
		drafts.set("c", { text: "typed", attachments: [{ name: "a.txt", text: "A" }] });
		box.add({ op: "op-1", conv: "c", text: "sent once", attachments: [{ name: "b.txt", text: "B" }], status: "acked", id: "m-1" });
		box.add({ op: "op-2", conv: "d", text: "elsewhere", attachments: [], status: "queued" });
		const first = box.giveBack("op-1"), again = box.giveBack("op-1"), d = drafts.get("c");
		return JSON.stringify({ first: first && first.op, again, text: d.text, atts: d.attachments.map((a) => a.name), left: box.all().map((e) => e.op), other: drafts.get("d").text });
	})`)
	if want := `{"first":"op-1","again":null,"text":"typed\nsent once","atts":["a.txt","b.txt"],"left":["op-2"],"other":""}`; got != want {
		t.Errorf("the outbox's give-back:\n got %s\nwant %s", got, want)
	}
}

// ---- the rig ------------------------------------------------------------------------------------

// rig is one host with its simulator, served on a loopback address, and one browser tab on it.
type rig struct {
	t     testing.TB
	cfg   host.Config
	h     *host.Host
	api   *host.Server
	sim   *sim.Server
	srv   *httptest.Server
	addr  string
	token string
	tab   context.Context
	ws    string // the conversations' workspace
}

// newRig wires a host the way cmd/rein/serve.go does, with the simulator playing script (a JSON
// array of steps; empty plays its policy).
func newRig(t testing.TB, browser context.Context, script string) *rig {
	t.Helper()
	return newRigMode(t, browser, script, tool.ModeWorkspace)
}

// newRigMode is newRig under permission mode (tool.ModeAsk puts calls to the person through the
// host's approver, as rein serve --permission-mode ask does).
func newRigMode(t testing.TB, browser context.Context, script string, mode tool.Mode, hooks ...func(ws string) *hook.Set) *rig {
	t.Helper()
	return newRigWith(t, browser, script, mode, false, hooks...)
}

// newRigWith is newRigMode, with checkpoints of the workspace when files is set (as rein serve
// takes them by default).
func newRigWith(t testing.TB, browser context.Context, script string, mode tool.Mode, files bool, hooks ...func(ws string) *hook.Set) *rig {
	t.Helper()
	opts := sim.Options{Delay: 2 * time.Millisecond}
	if script != "" {
		s, err := sim.ParseScript([]byte(script))
		if err != nil {
			t.Fatal(err)
		}
		opts.Script = s
	}
	r := &rig{t: t, sim: sim.New(opts), token: "test-token-0123456789abcdef0123456789abcdef"}
	simSrv := httptest.NewServer(r.sim)
	t.Cleanup(simSrv.Close)
	client := anthropic.New(anthropic.Config{BaseURL: simSrv.URL, APIKey: "sim", HTTPClient: simSrv.Client()})
	ws := t.TempDir()
	r.ws = ws
	root := t.TempDir()
	var repo *checkpoint.Repo
	if files {
		var err error
		if repo, err = checkpoint.Open(root, ws, checkpoint.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	r.cfg = host.Config{Checkpoints: repo,
		Root: root, Cwd: ws, Provider: "sim", Model: sim.DefaultModel, Window: 200_000, Version: "test",
		NewAgentFor: func(sess *session.Session, s host.Setup) (*agent.Agent, error) {
			sh, err := shell.New(ws, shell.Options{})
			if err != nil {
				return nil, err
			}
			files, err := fstool.Open(ws)
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { files.Close() })
			reg, err := tool.NewRegistry(append([]tool.Tool{sh, todo.Tool{}}, files.Tools()...)...)
			if err != nil {
				return nil, err
			}
			cfg := agent.Config{
				Session: sess, Client: client, Provider: "sim", Model: s.Model, MaxTokens: 4096,
				System: "You are tested.", Runner: &tool.Runner{Tools: reg, Policy: tool.Policy{Mode: mode}, Approver: s.Approver},
				Doors: agent.Doors(), Window: 200_000, Checkpoints: repo,
			}
			for _, h := range hooks {
				cfg.Hooks = h(ws)
			}
			return agent.New(cfg), nil
		},
	}
	h, err := host.Open(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.h = h
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	r.api = host.NewServer(h, r.token, r.addr, web.Files())
	r.serve(ln)
	tab, cancel := chromedp.NewContext(browser)
	r.tab = tab
	t.Cleanup(func() {
		cancel()
		r.down()
		if err := r.h.Close(); err != nil {
			t.Errorf("close the host: %v", err)
		}
	})
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return r
}

func (r *rig) serve(ln net.Listener) {
	r.srv = httptest.NewUnstartedServer(r.api)
	r.srv.Listener.Close()
	r.srv.Listener = ln
	r.srv.Start()
}

// down stops serving: the address refuses connections, open streams are cut.
func (r *rig) down() {
	if r.srv == nil {
		return
	}
	r.srv.CloseClientConnections()
	r.srv.Close()
	r.srv = nil
}

// up serves again on the same address, so the page's origin and storage are the same.
func (r *rig) up() {
	r.t.Helper()
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Fatalf("listen again on %s: %v", r.addr, err)
	}
	r.serve(ln)
}

// restart closes the host and opens it again over the same records, served on the same address.
func (r *rig) restart() {
	r.t.Helper()
	r.down()
	if err := r.h.Close(); err != nil {
		r.t.Fatalf("close the host: %v", err)
	}
	h, err := host.Open(r.cfg)
	if err != nil {
		r.t.Fatalf("open the host again: %v", err)
	}
	r.h = h
	r.api = host.NewServer(h, r.token, r.addr, web.Files())
	r.up()
}

func (r *rig) open() {
	r.t.Helper()
	r.do(chromedp.Navigate("http://" + r.addr + "/#token=" + r.token))
	r.ready()
	if r.evalString(`return location.hash`) == "#token="+r.token {
		r.t.Fatalf("the token was left in the visible URL")
	}
}

// ready waits for the page to have booted: capabilities, list and conversation chosen.
func (r *rig) ready() {
	r.t.Helper()
	r.wait("the page to boot", `return document.documentElement.dataset.ready === "1"`)
}

// waitReplayed waits for the page to have applied every record the host has.
func (r *rig) waitReplayed() {
	r.t.Helper()
	seq := r.view().State.Seq
	r.wait("the stream to replay", `return Number(document.getElementById("timeline").dataset.seq || 0) >= `+itoa(seq))
}

func (r *rig) ctx(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.tab, d)
}

func (r *rig) do(actions ...chromedp.Action[chromedp.Void]) {
	r.t.Helper()
	ctx, cancel := r.ctx(20 * time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		r.t.Fatalf("%v\n%s", err, r.dump())
	}
}

// prelude is put before every script: vis says whether an element is shown.
const prelude = `const vis = (s) => { const e = document.querySelector(s); return !!e && !e.hidden && e.getClientRects().length > 0; };`

func script(body string) string { return "(() => {" + prelude + body + "})()" }

func (r *rig) evalBool(body string) bool {
	r.t.Helper()
	ctx, cancel := r.ctx(10 * time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](script(body)))
	if err != nil {
		r.t.Fatalf("evaluate %s: %v", body, err)
	}
	return v
}

func (r *rig) evalString(body string) string {
	r.t.Helper()
	ctx, cancel := r.ctx(10 * time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](script(body)))
	if err != nil {
		r.t.Fatalf("evaluate %s: %v\n%s", body, err, r.dump())
	}
	return v
}

// wait polls the page until body returns true.
func (r *rig) wait(what, body string) {
	r.t.Helper()
	ctx, cancel := r.ctx(15 * time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](script(body), chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(12*time.Second)))
	if err != nil {
		r.t.Fatalf("waiting for %s: %v\n%s", what, err, r.dump())
	}
}

// waitHost polls the host until cond holds.
func (r *rig) waitHost(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("waiting for %s on the host\n%s", what, r.dump())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// expectComposer checks the composer and its stored draft both hold want.
func (r *rig) expectComposer(want string) {
	r.t.Helper()
	got := r.evalString(`return document.getElementById("input").value`)
	if got != want {
		r.t.Fatalf("the composer holds %q, want %q\n%s", got, want, r.dump())
	}
	stored := r.evalString(`const d = JSON.parse(localStorage.getItem("rein.draft.v1." + sessionStorage.getItem("rein.current")) || "{}"); return d.text || ""`)
	if stored != want {
		r.t.Fatalf("the stored draft holds %q, want %q", stored, want)
	}
}

// dump describes the page for a failure message.
func (r *rig) dump() string {
	ctx, cancel := context.WithTimeout(r.tab, 3*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](script(`return JSON.stringify({
		send: vis("#send"), stop: vis("#stop"), input: document.getElementById("input").value,
		status: document.getElementById("status").textContent, banner: document.getElementById("banner").textContent,
		pending: [...document.querySelectorAll(".pending-msg")].map((p) => p.dataset.state + ": " + p.textContent),
		timeline: [...document.getElementById("timeline").children].slice(-8).map((n) => n.className + ": " + n.textContent.slice(0, 120)),
		outbox: localStorage.getItem("rein.outbox.v1"),
	}, null, 1)`)))
	if err != nil {
		return "(the page could not be read: " + err.Error() + ")"
	}
	return "page: " + s
}

// ---- the host's side ----------------------------------------------------------------------------

func (r *rig) conv() *host.Conv {
	r.t.Helper()
	list, err := r.h.List()
	if err != nil {
		r.t.Fatal(err)
	}
	if len(list) != 1 {
		r.t.Fatalf("the host has %d conversations, want 1", len(list))
	}
	c, err := r.h.Get(list[0].ID)
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

func (r *rig) view() api.View {
	r.t.Helper()
	v, err := r.conv().View()
	if err != nil {
		r.t.Fatal(err)
	}
	return v
}

// count counts the conversation's records of kind that match (nil matches all).
func (r *rig) count(kind record.Kind, match func(record.Record) bool) int {
	r.t.Helper()
	sub, err := r.conv().Subscribe(0)
	if err != nil {
		r.t.Fatal(err)
	}
	defer sub.End()
	n := 0
	for _, rec := range sub.Records {
		if rec.Kind() == kind && (match == nil || match(rec)) {
			n++
		}
	}
	return n
}

// submitted counts the submissions the host accepted with this text.
func (r *rig) submitted(text string) int {
	return r.count(record.KindSubmission, func(rec record.Record) bool {
		s := rec.Body.(*record.Submission)
		return s.State == api.Accepted && s.Text == text
	})
}

// delivered counts the prompts and steering that delivered this text.
func (r *rig) delivered(text string) int {
	return r.count(record.KindUserPrompt, func(rec record.Record) bool { return rec.Body.(*record.UserPrompt).Text == text }) +
		r.count(record.KindSteering, func(rec record.Record) bool { return rec.Body.(*record.Steering).Text == text })
}

func words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = "word" + itoa(int64(i))
	}
	return strings.Join(w, " ")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
