// rich.js renders a reply's markdown: GFM (headings, lists, tables, quotes, links) by marked,
// code highlighted by highlight.js, and the result cleaned by DOMPurify before it touches the
// page. The libraries are vendored (vendor/README.md says which versions and why).
//
// What a model writes is untrusted: raw HTML in it is shown as text, the HTML marked makes is
// sanitised, images are shown as links (the page loads nothing from elsewhere), and a link
// opens in a new tab without the page's opener or referrer, and only for http, https and
// mailto.

import { Marked } from "./vendor/marked.esm.js";
import DOMPurify from "./vendor/purify.es.js";
import hljs from "./vendor/highlight.min.js";
import { el } from "./markup.js";

const marked = new Marked({ gfm: true, breaks: false, async: false });
marked.use({
  renderer: {
    // Raw HTML in the model's text is shown as typed.
    html(token) {
      return escapeHTML(token.text);
    },
  },
  // An image becomes a link to it: the page loads nothing from elsewhere.
  walkTokens(t) {
    if (t.type === "image") {
      t.type = "link";
      t.tokens = [{ type: "text", raw: t.text || t.href, text: t.text || t.href }];
    }
  },
});

const SAFE_SCHEMES = new Set(["http:", "https:", "mailto:"]);

const PURIFY = {
  FORBID_TAGS: ["style", "img", "svg", "math", "form", "input", "button", "textarea", "select", "iframe", "video", "audio", "source", "picture"],
  FORBID_ATTR: ["style", "srcset", "src", "action", "formaction"],
  ALLOW_DATA_ATTR: false,
  RETURN_DOM_FRAGMENT: true,
};

function escapeHTML(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// safeHref returns the link's absolute URL when its scheme is one a person can safely follow.
export function safeHref(href) {
  if (!href || !href.trim()) return null;
  try {
    const u = new URL(href, document.baseURI);
    return SAFE_SCHEMES.has(u.protocol) ? u.href : null;
  } catch {
    return null;
  }
}

// rich renders markdown text as a .prose.rich element.
export function rich(text) {
  const out = el("div", { class: "prose rich" });
  const html = marked.parse(String(text));
  out.append(DOMPurify.sanitize(html, PURIFY));
  for (const a of out.querySelectorAll("a")) {
    const href = safeHref(a.getAttribute("href") || "");
    if (!href) {
      a.replaceWith(el("span", { class: "link-refused", title: "link not opened: only http, https and mailto links are" }, a.textContent));
      continue;
    }
    a.setAttribute("href", href);
    a.setAttribute("target", "_blank");
    a.setAttribute("rel", "noopener noreferrer");
  }
  for (const t of out.querySelectorAll("table")) {
    t.replaceWith(el("div", { class: "table-wrap" }, t.cloneNode(true)));
  }
  for (const code of out.querySelectorAll("pre > code")) highlight(code);
  return out;
}

// highlight colours one code block by its fence's language and gives it a head with the
// language and a copy button.
function highlight(code) {
  const pre = code.parentElement;
  const source = code.textContent.replace(/\n$/, "");
  const m = /(?:^|\s)language-([\w+#.-]+)/.exec(code.className);
  const lang = m ? m[1].toLowerCase() : "";
  if (lang && hljs.getLanguage(lang)) {
    // highlight.js escapes the code it is given; what it returns is spans of classes.
    code.innerHTML = hljs.highlight(source, { language: lang, ignoreIllegals: true }).value;
    code.classList.add("hljs");
  }
  const box = el("div", { class: "codeblock" }, el("div", { class: "code-head" }, el("span", { class: "code-lang" }, lang || "text"), copyButton(() => source, "Copy code")));
  pre.replaceWith(box);
  box.append(pre);
}

// copyButton copies what text() returns, and says so.
export function copyButton(text, label) {
  const b = el("button", { type: "button", class: "copy-btn", "aria-label": label, title: label }, "Copy");
  b.addEventListener("click", async (e) => {
    e.stopPropagation();
    const ok = await copyText(text());
    b.textContent = ok ? "Copied" : "Copy failed";
    b.dataset.copied = ok ? "yes" : "no";
    setTimeout(() => {
      b.textContent = "Copy";
      delete b.dataset.copied;
    }, 1500);
  });
  return b;
}

// copyText puts s on the clipboard: the Clipboard API where the page may use it (https or
// localhost), else a selected textarea and the copy command.
export async function copyText(s) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(s);
      return true;
    }
  } catch {
    // fall through to the older way
  }
  const t = el("textarea", { readonly: true, class: "copy-buffer", "aria-hidden": "true" });
  t.value = s;
  document.body.append(t);
  t.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  t.remove();
  return ok;
}
