// markup.js builds DOM safely: every piece of text from the host or the model goes in as text,
// never as HTML.

// fill replaces node's children with those given, leaving out the absent (null, undefined, false)
// that the DOM's own replaceChildren would show as the words "null" and "false".
export function fill(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== undefined && c !== null && c !== false));
}

// el makes an element: el("div", {class: "x", onclick: f}, child, "text", ...).
export function el(tag, attrs, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
    else if (k === "class") n.className = v;
    else if (k === "dataset") Object.assign(n.dataset, v);
    else n.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    n.append(c instanceof Node ? c : String(c));
  }
  return n;
}

// prose renders model or user text: fenced code blocks become <pre>, `inline code` becomes
// <code>, blank lines separate paragraphs, and everything else stays as typed.
export function prose(text) {
  const out = el("div", { class: "prose" });
  const parts = String(text).split(/^```[^\n]*\n?/m);
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      out.append(el("pre", {}, el("code", {}, part.replace(/\n$/, ""))));
      return;
    }
    for (const para of part.split(/\n{2,}/)) {
      if (!para.trim()) continue;
      const p = el("p");
      para.split(/(`[^`\n]+`)/).forEach((s, j) => {
        if (j % 2 === 1) p.append(el("code", {}, s.slice(1, -1)));
        else if (s) p.append(s);
      });
      out.append(p);
    }
  });
  return out;
}

// RESIDUE matches the user-voice line a residue leaves in the context (fold.ResidueText).
const RESIDUE = /^\[rein: turns? (\d+)(?:–(\d+))? (?:has|have) left your context\. Note: "([\s\S]*?)"\.(?: Read them back[\s\S]*)?\]$/;

// residueOf returns {from, to, note} when text is a residue line, else null.
export function residueOf(text) {
  const m = RESIDUE.exec(String(text).trim());
  if (!m) return null;
  return { from: Number(m[1]), to: Number(m[2] || m[1]), note: m[3] };
}

// residueBlock shows a residue as what it is: turns that left the context, and the note left in
// their place.
export function residueBlock(r, by) {
  const span = r.from === r.to ? `Turn ${r.from}` : `Turns ${r.from}–${r.to}`;
  return el(
    "div",
    { class: "residue", role: "note", dataset: { from: r.from, to: r.to } },
    el("div", { class: "residue-head" }, `${span} left the context`, by ? el("span", { class: "muted" }, ` · by ${by}`) : null),
    el("div", { class: "residue-note" }, r.note || "(no note)"),
  );
}

export function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function ago(iso) {
  const t = Date.parse(iso);
  if (!t) return "";
  const s = Math.max(0, (Date.now() - t) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(t).toLocaleDateString();
}
