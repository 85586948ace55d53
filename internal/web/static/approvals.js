// approvals.js shows a tool call waiting for the person's approval (approvals.v1, permission mode
// ask): the tool, what the call does in one line, its arguments, and Allow / Deny buttons. The
// same view sits inline in the timeline (where it stays, with the answer) and above the composer
// (while the call waits).

import { el } from "./markup.js";
import { diffView } from "./diffs.js";

// prettyArgs shows a call's arguments (the host's summary of them, a JSON text that may have been
// cut short) indented when they parse, else as they came.
export function prettyArgs(args) {
  if (typeof args !== "string") return JSON.stringify(args ?? {}, null, 2);
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

// commandOf is the command line a bash call would run, exactly as the model wrote it, or null.
function commandOf(a) {
  if (a.name !== "bash") return null;
  try {
    const c = JSON.parse(a.args).command;
    return typeof c === "string" ? c : null;
  } catch {
    return null; // the host's summary was cut short: the arguments below show what there is
  }
}

const LABELS = {
  waiting: "waiting for your answer",
  sending: "sending your answer…",
  allowed: "allowed",
  denied: "denied",
  ended: "no longer waiting",
  asked: "waiting",
};

// approvalCard builds the view of one waiting call a ({call_id, name, args, diff?, rules?});
// summary is its one-line summary and answer(callID, allow, scope) answers it. A call with a diff
// shows the diff (what would change), its arguments folded below; one with rules offers, beside
// Allow once and Deny, Allow for this conversation, naming the rules that grants. set(view) shows where it stands: waiting
// (buttons on), sending (buttons off), allowed, denied, or ended (the wait ended unanswered, as a
// Stop does); asked shows no buttons (the host does not take answers).
export function approvalCard(a, summary, answer) {
  const what = `${a.name}${summary ? ": " + summary : ""}`;
  const status = el("span", { class: "approval-status" }, LABELS.asked);
  const allow = el("button", { type: "button", class: "btn small primary allow", "aria-label": `Allow once: ${what}`, onclick: () => answer(a.call_id, true) }, "Allow once");
  const rules = a.rules || [];
  const always = rules.length
    ? el("button", { type: "button", class: "btn small allow-conversation", title: `Grants ${rules.join(", ")} until the conversation ends`, "aria-label": `Allow for this conversation: ${rules.join(", ")}`, onclick: () => answer(a.call_id, true, "conversation") }, "Allow for this conversation")
    : null;
  const deny = el("button", { type: "button", class: "btn small deny", "aria-label": `Deny ${what}`, onclick: () => answer(a.call_id, false) }, "Deny");
  const actions = el("div", { class: "actions", hidden: true }, allow, always, deny, rules.length ? el("span", { class: "scope-rules" }, rules.join(" · ")) : null);
  const box = el(
    "div",
    { class: "approval", role: "group", "aria-label": `Approval of the tool call ${a.name}`, dataset: { call: a.call_id, state: "asked" } },
    el(
      "div",
      { class: "approval-head" },
      el("span", { class: "approval-q" }, "Allow this call?"),
      " ",
      el("span", { class: "tool-name" }, a.name),
      " ",
      el("span", { class: "approval-summary" }, summary),
      " ",
      status,
    ),
    a.diff ? diffView(a.diff) : null,
    commandOf(a) !== null ? el("pre", { class: "approval-command" }, "$ " + commandOf(a)) : null,
    el("details", { class: "approval-args" }, el("summary", {}, "Arguments"), el("pre", {}, prettyArgs(a.args))),
    actions,
  );
  return {
    box,
    set(view) {
      if (box.dataset.state === view) return;
      box.dataset.state = view;
      status.textContent = LABELS[view] || view;
      status.className = "approval-status " + view;
      const live = view === "waiting" || view === "sending";
      actions.hidden = !live;
      allow.disabled = deny.disabled = view !== "waiting";
      if (always) always.disabled = view !== "waiting";
    },
  };
}
