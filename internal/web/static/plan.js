// plan.js follows the agent's plan as its todo calls keep it in the record, by the rules of
// record.Plan (internal/record/plan.go): the items of the newest todo call answered ok, unless the
// turn that made it was withdrawn, when the plan before it stands again. A browser test holds the
// two to the same plans.

import { el } from "./markup.js";

const STATUSES = new Set(["pending", "in_progress", "completed"]);
const MAX_ITEMS = 50;
const ITEM_KEYS = new Set(["content", "status", "active_form"]);

// parsePlan returns a todo call's items when they make a plan record.ParsePlan accepts, else null.
export function parsePlan(args) {
  if (!args || typeof args !== "object" || Array.isArray(args)) return null;
  if (Object.keys(args).some((k) => k !== "items")) return null;
  const items = args.items == null ? [] : args.items;
  if (!Array.isArray(items) || items.length > MAX_ITEMS) return null;
  let doing = 0;
  for (const it of items) {
    if (!it || typeof it !== "object" || Array.isArray(it)) return null;
    if (Object.keys(it).some((k) => !ITEM_KEYS.has(k))) return null;
    if (typeof it.content !== "string" || it.content.trim() === "") return null;
    if (!STATUSES.has(it.status)) return null;
    if (it.active_form != null && typeof it.active_form !== "string") return null;
    if (it.status === "in_progress") doing++;
  }
  if (doing > 1) return null;
  return items.map((it) => ({ content: it.content, status: it.status, active_form: it.active_form || "" }));
}

export class Plan {
  constructor() {
    this.made = []; // {turn, items}, oldest first
    this.asked = new Map(); // call id → {turn, items}
  }

  // apply takes one record into the plan and says whether the plan in force changed.
  apply(kind, p) {
    p = p || {};
    switch (kind) {
      case "assistant_message":
        for (const part of p.parts || []) {
          if (part.type !== "tool_call" || part.name !== "todo") continue;
          const items = parsePlan(part.args);
          if (items) this.asked.set(part.call_id, { turn: p.turn, items });
        }
        return false;
      case "tool_results": {
        let changed = false;
        for (const r of p.results || []) {
          const m = this.asked.get(r.call_id);
          if (!m) continue;
          this.asked.delete(r.call_id);
          if (r.outcome === "ok" && !r.is_error) {
            this.made.push(m);
            changed = true;
          }
        }
        return changed;
      }
      case "rewound":
        return this.withdraw(p.anchor || 0);
      case "cleared":
        return this.withdraw(0);
    }
    return false;
  }

  withdraw(anchor) {
    const n = this.made.length;
    while (this.made.length && this.made[this.made.length - 1].turn >= anchor) this.made.pop();
    this.asked.clear();
    return n !== this.made.length;
  }

  items() {
    return this.made.length ? this.made[this.made.length - 1].items : [];
  }
}

const MARKS = { completed: "✔", in_progress: "▶", pending: "○" };

// renderPlan draws the plan panel into box: shown while the plan has a step not yet done.
export function renderPlan(box, items) {
  const done = items.filter((it) => it.status === "completed").length;
  box.replaceChildren();
  box.hidden = items.length === 0 || done === items.length;
  if (box.hidden) return;
  const list = el("ol", { class: "plan-items" });
  for (const it of items) {
    const text = it.status === "in_progress" && it.active_form ? it.active_form : it.content;
    list.append(el("li", { class: "plan-item " + it.status, "data-status": it.status },
      el("span", { class: "plan-mark", "aria-hidden": "true" }, MARKS[it.status]),
      el("span", { class: "plan-text" }, text)));
  }
  box.append(el("div", { class: "plan-head" }, `Plan · ${done}/${items.length} done`), list);
}
