// keys.js: the keyboard help overlay (? opens it, Escape closes it) and the page-wide keys it
// lists that no other module owns: / to search the conversations.

import { el } from "./markup.js";

// KEYS are the page's keyboard shortcuts, as the overlay lists them.
export const KEYS = [
  ["Enter", "Send the message (while the agent works: steering at its next step)"],
  ["Shift+Enter", "A new line in the message"],
  ["Escape", "Stop the agent; else close the open panel or dialog"],
  ["?", "This list of shortcuts"],
  ["/", "Search the conversations"],
  ["Tab, Shift+Tab", "Move between controls; Enter or Space presses one"],
];

function typing(t) {
  return t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
}

// openHelp shows the overlay, focused on its close button.
export function openHelp() {
  const old = document.getElementById("keys-help");
  if (old) return old;
  const back = document.activeElement;
  const close = () => {
    dlg.remove();
    if (back && back.focus) back.focus();
  };
  const closeBtn = el("button", { type: "button", class: "icon-btn", "aria-label": "Close the shortcuts", onclick: close }, "✕");
  const dlg = el(
    "div",
    { class: "overlay", id: "keys-help", role: "dialog", "aria-modal": "true", "aria-labelledby": "keys-help-title" },
    el(
      "div",
      { class: "overlay-box" },
      el("div", { class: "panel-head" }, el("h2", { id: "keys-help-title" }, "Keyboard shortcuts"), closeBtn),
      el("table", { class: "keys" }, el("tbody", {}, KEYS.map(([k, what]) => el("tr", {}, el("th", { scope: "row" }, k.split(", ").flatMap((x, i) => (i ? [", ", el("kbd", {}, x)] : [el("kbd", {}, x)]))), el("td", {}, what))))),
    ),
  );
  dlg.addEventListener("click", (e) => {
    if (e.target === dlg) close();
  });
  dlg.addEventListener("keydown", (e) => {
    if (e.key === "Escape" || e.key === "?") {
      e.preventDefault();
      e.stopPropagation();
      close();
    }
  });
  document.body.append(dlg);
  closeBtn.focus();
  return dlg;
}

// installKeys listens for the page-wide keys.
export function installKeys() {
  document.addEventListener("keydown", (e) => {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || typing(e.target) || e.isComposing) return;
    if (e.key === "?") {
      e.preventDefault();
      openHelp();
    } else if (e.key === "/") {
      const s = document.getElementById("conv-search");
      if (s) {
        e.preventDefault();
        if (!s.getClientRects().length) document.getElementById("menu").click(); // the list is folded away on a phone
        s.focus();
      }
    }
  });
  const btn = document.getElementById("keys-btn");
  if (btn) btn.addEventListener("click", () => openHelp());
}
