package web_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// replyScript is a simulator script of one reply saying text.
func replyScript(t *testing.T, text string) string {
	t.Helper()
	b, err := json.Marshal([]map[string]any{{"text": text}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const richReply = "## Plan\n\nA table:\n\n| file | lines |\n|---|---:|\n| a.go | 12 |\n| b.go | 7 |\n\n" +
	"```go\nfunc main() {\n\treturn 42 // answer\n}\n```\n\n" +
	"- one\n- two with `code`\n\n" +
	"Links: [docs](https://example.com/docs), [bad](javascript:alert(1)), [mail](mailto:a@b.c).\n\n" +
	"<b onclick=\"alert(1)\">raw</b> and ![pic](https://example.com/p.png)\n"

// TestWebMarkdown: a reply's markdown renders as HTML — a table, a highlighted code block with its
// copy button, lists — and what could harm is neutral: raw HTML shows as text, a javascript: link
// is not a link, an image is a link, and links open in a new tab without opener or referrer.
func TestWebMarkdown(t *testing.T) {
	b := startBrowser(t)
	r := newRig(t, b, replyScript(t, richReply))
	r.open()
	r.do(chromedp.SendKeys(chromedp.ID("input"), "show me"+kb.Enter))
	r.wait("the rendered reply", `return !!document.querySelector(".msg.assistant:not(.live) .prose.rich table")`)
	m := `const m = document.querySelector(".msg.assistant:not(.live) .prose.rich");`
	for _, c := range []struct{ what, cond string }{
		{"a heading", m + `return m.querySelector("h2").textContent === "Plan"`},
		{"a table of two rows and a right-aligned column", m + `const t = m.querySelector(".table-wrap > table"); return t.querySelectorAll("tbody tr").length === 2 && t.querySelector("th").textContent === "file" && /right/.test(getComputedStyle(t.querySelectorAll("td")[1]).textAlign)`},
		{"highlighted Go", m + `const c = m.querySelector(".codeblock pre code.hljs"); return !!c && c.querySelector(".hljs-keyword").textContent === "func" && c.querySelector(".hljs-number").textContent === "42" && !!c.querySelector(".hljs-comment") && m.querySelector(".code-lang").textContent === "go"`},
		{"keyword colour differs from text", m + `const c = m.querySelector(".hljs-keyword"); return getComputedStyle(c).color !== getComputedStyle(c.closest("code")).color`},
		{"a list", m + `return m.querySelectorAll("ul > li").length === 2 && m.querySelector("li code").textContent === "code"`},
		{"safe links", m + `const a = [...m.querySelectorAll("a")]; const d = a.find((x) => x.textContent === "docs"); return !!d && d.target === "_blank" && d.rel === "noopener noreferrer" && d.href === "https://example.com/docs" && a.every((x) => /^(https?|mailto):/.test(x.href) && x.rel === "noopener noreferrer")`},
		{"no javascript: link", m + `return !m.querySelector('a[href^="javascript"]') && m.querySelector(".link-refused").textContent === "bad"`},
		{"raw HTML as text", m + `return !m.querySelector("b[onclick]") && m.textContent.includes('<b onclick="alert(1)">raw</b>')`},
		{"an image as a link", m + `return !m.querySelector("img") && [...m.querySelectorAll("a")].some((x) => x.textContent === "pic" && x.href === "https://example.com/p.png")`},
	} {
		if !r.evalBool(c.cond) {
			t.Errorf("%s: no\n%s", c.what, r.evalString(m+`return m.innerHTML`))
		}
	}

	// Copy buttons put the exact text on the clipboard: the page's clipboard is watched on its
	// way through (reading it back needs a permission headless chromium does not give a tab).
	r.evalBool(`const w = navigator.clipboard.writeText.bind(navigator.clipboard); navigator.clipboard.writeText = (s) => { window.copied = s; return w(s); }; return true`)
	r.do(chromedp.Click(chromedp.CSS(`.msg.assistant:not(.live) .codeblock .copy-btn`)))
	r.wait("the code copied", `return document.querySelector(".codeblock .copy-btn").dataset.copied === "yes"`)
	if got := r.clipboard(); got != "func main() {\n\treturn 42 // answer\n}" {
		t.Errorf("the code's copy button copied %q", got)
	}
	r.do(chromedp.Click(chromedp.CSS(`.msg.assistant:not(.live) .msg-actions .copy-btn`)))
	r.wait("the message copied", `return document.querySelector(".msg-actions .copy-btn").dataset.copied === "yes"`)
	if got := r.clipboard(); got != richReply {
		t.Errorf("the message's copy button copied %q, want the reply's markdown", got)
	}
}

// clipboard is what the page last wrote to the clipboard.
func (r *rig) clipboard() string {
	r.t.Helper()
	return r.evalString(`return window.copied || ""`)
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
