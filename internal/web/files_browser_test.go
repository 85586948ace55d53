package web_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
)

// testRewindFiles: on a host that takes checkpoints, a survey row offers "Rewind files too"; it
// withdraws the turns, puts the files back as the turn found them, and shows what it wrote,
// removed and left as it was.
func testRewindFiles(t *testing.T, browser context.Context) {
	r := newRigWith(t, browser, `[{"text":"Writing.","tool_calls":[{"name":"bash","arguments":{"command":"echo changed > keep.txt && echo made > made.txt"}}]},{"text":"Done."}]`, tool.ModeWorkspace, true)
	if err := os.WriteFile(filepath.Join(r.ws, "keep.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "change the files\n"))
	r.wait("the reply", `return [...document.querySelectorAll(".msg.assistant")].some((m) => m.textContent.includes("Done.")) && vis("#send") && !vis("#stop")`)
	r.waitHost("the exchange to end", func() bool { return !r.view().State.Working })
	r.do(chromedp.Click(chromedp.ID("context-btn")))
	r.wait("the survey with files too", `const b = document.querySelector(".survey tbody tr:nth-child(2) .ctx-rewind-files"); return !!b && !b.disabled`)
	r.do(chromedp.Click(chromedp.CSS(`.survey tbody tr:nth-child(2) .ctx-rewind-files`)))
	r.wait("the files restored, said", `const f = document.querySelector(".ctx-files"); return !!f && f.textContent.includes("1 written, 1 removed") && f.textContent.includes("made.txt") && f.textContent.includes("outside the workspace")`)
	// The panel reloads on the rewind's own records and on Refresh: what the rewind did stays
	// above the survey through them, and nothing absent is drawn as "null".
	r.evalBool(`const b = document.getElementById("context-body"); b.dataset.before = b.dataset.loaded; return true`)
	r.do(chromedp.Click(chromedp.ID("context-refresh")))
	r.wait("the summary kept through a reload", `const b = document.getElementById("context-body"); const f = b.querySelector(".ctx-files"); return b.dataset.loaded !== b.dataset.before && !!b.querySelector(".survey") && !!f && f.textContent.includes("1 written, 1 removed") && !b.textContent.includes("null")`)
	if b, _ := os.ReadFile(filepath.Join(r.ws, "keep.txt")); string(b) != "mine\n" {
		t.Errorf("keep.txt after the rewind: %q", b)
	}
	if _, err := os.Stat(filepath.Join(r.ws, "made.txt")); err == nil {
		t.Errorf("made.txt is still there after the rewind")
	}
	if n := r.count(record.KindFilesRestored, nil); n != 1 {
		t.Errorf("%d files_restored records, want 1", n)
	}
}
