// diffs.js shows file changes as unified diffs, coloured and folded: the diff a host recorded for
// an approval (the file as it was then against what the call would leave), and, in the timeline,
// what an edit_file or write_file call asked for (its old text against its new, or the content it
// writes). A long diff shows its first lines and a button that unfolds the rest.

import { el } from "./markup.js";

// FOLD is how many lines of a diff are shown before the rest is folded.
export const FOLD = 40;

// MAX_LCS bounds the lines compared line by line in the page: beyond it an edit shows all of its
// old text removed and all of its new text added, which is true, if less tidy.
const MAX_LCS = 1500;

// lineDiff returns the lines of a and b as [op, text] pairs, op " ", "-" or "+": a longest common
// subsequence of lines kept, the rest removed or added.
export function lineDiff(a, b) {
  const A = splitLines(a), B = splitLines(b);
  let lo = 0;
  while (lo < A.length && lo < B.length && A[lo] === B[lo]) lo++;
  let ea = A.length, eb = B.length;
  while (ea > lo && eb > lo && A[ea - 1] === B[eb - 1]) { ea--; eb--; }
  const out = A.slice(0, lo).map((l) => [" ", l]);
  const a1 = A.slice(lo, ea), b1 = B.slice(lo, eb);
  if (a1.length * b1.length > MAX_LCS * MAX_LCS / 4 || a1.length > MAX_LCS || b1.length > MAX_LCS) {
    out.push(...a1.map((l) => ["-", l]), ...b1.map((l) => ["+", l]));
  } else {
    const n = a1.length, m = b1.length;
    const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i][j] = a1[i] === b1[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
    let i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a1[i] === b1[j]) { out.push([" ", a1[i]]); i++; j++; }
      else if (i < n && (j === m || L[i + 1][j] >= L[i][j + 1])) { out.push(["-", a1[i]]); i++; }
      else { out.push(["+", b1[j]]); j++; }
    }
  }
  out.push(...A.slice(ea).map((l) => [" ", l]));
  return out;
}

function splitLines(s) {
  const t = String(s ?? "");
  if (t === "") return [];
  const ls = t.split("\n");
  if (ls[ls.length - 1] === "") ls.pop();
  return ls;
}

// callDiff is the diff an edit_file or write_file call's arguments describe, as unified diff
// text without line numbers, or "" for any other call.
export function callDiff(name, args) {
  let a = args;
  if (typeof a === "string") {
    try { a = JSON.parse(a); } catch { return ""; }
  }
  if (!a || typeof a !== "object" || typeof a.path !== "string") return "";
  if (name === "edit_file" && typeof a.old === "string" && typeof a.new === "string") {
    const body = lineDiff(a.old, a.new).map(([op, l]) => op + l).join("\n");
    return `--- ${a.path}\n+++ ${a.path}${a.replace_all ? " (every match)" : ""}\n${body}\n`;
  }
  if (name === "write_file" && typeof a.content === "string") {
    const body = splitLines(a.content).map((l) => "+" + l).join("\n");
    return `--- ${a.path}\n+++ ${a.path} (written whole)\n${body}\n`;
  }
  return "";
}

// diffView renders unified diff text: a path line, then each line coloured by its mark, the lines
// past fold behind a button that shows them.
export function diffView(text, fold = FOLD) {
  const lines = String(text).replace(/\n$/, "").split("\n");
  const box = el("div", { class: "diff", role: "group", "aria-label": "Changes" });
  let body = lines;
  if (lines.length >= 2 && lines[0].startsWith("--- ") && lines[1].startsWith("+++ ")) {
    const from = lines[0].slice(4), to = lines[1].slice(4);
    box.append(el("div", { class: "diff-path" }, from === to || from === "/dev/null" ? to : `${from} → ${to}`));
    body = lines.slice(2);
  }
  let added = 0, removed = 0;
  for (const l of body) {
    if (l.startsWith("+")) added++;
    else if (l.startsWith("-")) removed++;
  }
  box.dataset.added = String(added);
  box.dataset.removed = String(removed);
  const line = (l) => el("div", { class: "dl " + (l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : l.startsWith("@@") ? "hunk" : "ctx") }, l === "" ? " " : l);
  box.append(...body.slice(0, fold).map(line));
  if (body.length > fold) {
    const rest = body.slice(fold);
    const more = el("button", { type: "button", class: "diff-more" }, `Show ${rest.length} more line${rest.length > 1 ? "s" : ""}`);
    more.addEventListener("click", () => more.replaceWith(...rest.map(line)));
    box.append(more);
  }
  return box;
}
