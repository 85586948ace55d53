package web_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

var updateScreens = flag.Bool("update-screens", false, "write the screenshots of docs/screens/")

// shot takes a screenshot of the page and, under -update-screens, writes it to docs/screens/.
func (r *rig) shot(name string) {
	r.t.Helper()
	ctx, cancel := r.ctx(20 * 1e9)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		r.t.Fatalf("screenshot %s: %v", name, err)
	}
	if len(png) < 1000 {
		r.t.Fatalf("screenshot %s is %d bytes", name, len(png))
	}
	if !*updateScreens {
		return
	}
	dir := filepath.Join("..", "..", "docs", "screens")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// TestWebScreens: the main screens at 1280 px and at 390 px (a phone): the chat with a rendered
// reply, the Context panel, the model picker and the keyboard help. The Context panel fits the
// width it is given, its table readable: no column squeezed below a word, nothing scrolled sideways.
func TestWebScreens(t *testing.T) {
	b := startBrowser(t)
	r := newRig(t, b, replyScript(t, richReply))
	r.do(chromedp.EmulateViewport(1280, 800))
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "show me the plan"+kb.Enter))
	r.wait("the rendered reply", `return !!document.querySelector(".msg.assistant:not(.live) .prose.rich table") && !!document.querySelector(".exchange-usage")`)
	r.shot("web-chat-1280.png")

	r.do(chromedp.Click(chromedp.ID("context-btn")))
	r.wait("the survey", `return !!document.querySelector("#context-body .survey tbody tr")`)
	r.expectPanelReadable("1280")
	r.shot("web-context-1280.png")

	r.do(chromedp.EmulateViewport(390, 844))
	r.wait("the phone layout", `return vis("#menu")`)
	r.expectPanelReadable("390")
	r.shot("web-context-390.png")
	r.do(chromedp.Click(chromedp.ID("context-close")))
	r.wait("the panel closed", `return document.getElementById("context-panel").hidden`)
	r.shot("web-chat-390.png")

	r.do(chromedp.EmulateViewport(1280, 800))
	r.do(chromedp.Click(chromedp.ID("model-btn")))
	r.wait("the picker", `return vis("#model-picker")`)
	r.shot("web-models-1280.png")
	r.do(chromedp.KeyEvent(kb.Escape))
	r.wait("the picker closed", `return !document.getElementById("model-picker")`)

	// ? opens the keyboard help (not while typing in the composer); Escape closes it.
	r.do(chromedp.Click(chromedp.ID("input")), chromedp.SendKeys(chromedp.ID("input"), "?"))
	if r.evalBool(`return !!document.getElementById("keys-help")`) {
		t.Fatal("a ? typed in the composer opened the help")
	}
	r.evalBool(`document.getElementById("input").value = ""; document.activeElement.blur(); return true`)
	r.do(chromedp.KeyEvent("?"))
	r.wait("the help", `const h = document.getElementById("keys-help"); return vis("#keys-help") && h.querySelectorAll(".keys tr").length >= 5 && h.textContent.includes("Search the conversations") && h.querySelectorAll("kbd").length === 7 && h.querySelector("kbd").textContent === "Enter" && !h.textContent.includes("[object") && document.activeElement.closest("#keys-help") !== null`)
	r.shot("web-help-1280.png")
	r.do(chromedp.KeyEvent(kb.Escape))
	r.wait("the help closed", `return !document.getElementById("keys-help")`)
	r.do(chromedp.Click(chromedp.ID("keys-btn")))
	r.wait("the help from its button", `return vis("#keys-help")`)
	r.do(chromedp.KeyEvent(kb.Escape))
	r.wait("the help closed again", `return !document.getElementById("keys-help")`)
	// / goes to the search.
	r.evalBool(`document.activeElement.blur(); return true`)
	r.do(chromedp.KeyEvent("/"))
	r.wait("the search focused", `return document.activeElement === document.getElementById("conv-search")`)

	// At 390 px the help fits the screen.
	r.evalBool(`document.activeElement.blur(); document.getElementById("sidebar").scrollLeft = 0; document.scrollingElement.scrollLeft = 0; return true`)
	r.do(chromedp.EmulateViewport(390, 844))
	r.wait("the list folded away", `return document.getElementById("sidebar").getBoundingClientRect().right <= 0`)
	r.do(chromedp.KeyEvent("?"))
	r.wait("the help on a phone", `const b = document.querySelector("#keys-help .overlay-box").getBoundingClientRect(); return b.left >= 0 && b.right <= innerWidth`)
	r.shot("web-help-390.png")
}

// expectPanelReadable checks the Context panel: inside the viewport, no sideways scrolling, the
// label column wide enough to read.
func (r *rig) expectPanelReadable(at string) {
	r.t.Helper()
	ok := r.evalBool(`const p = document.getElementById("context-panel"), b = document.getElementById("context-body"), rect = p.getBoundingClientRect();
		const label = document.querySelector("#context-body .survey td.label");
		window.panelWhy = JSON.stringify({left: rect.left, right: rect.right, vw: innerWidth, sw: b.scrollWidth, cw: b.clientWidth, label: label && label.getBoundingClientRect().width});
		return rect.left >= 0 && rect.right <= innerWidth + 0.5 && b.scrollWidth <= b.clientWidth + 1 && !!label && label.getBoundingClientRect().width >= 110`)
	if !ok {
		r.t.Errorf("at %s px the Context panel is not readable: %s", at, r.evalString(`return window.panelWhy`))
	}
}
