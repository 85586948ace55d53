// survey.js is the context panel: what the next request would carry (GET
// /api/conversations/{id}/transcript), turn by turn with sizes, residues shown as what they are.

import { request } from "./api.js";
import { el, bytes, prose, residueOf, residueBlock } from "./markup.js";

export async function loadSurvey(conv, body) {
  body.replaceChildren(el("p", { class: "muted" }, "Loading…"));
  let t;
  try {
    t = (await request("GET", `/api/conversations/${encodeURIComponent(conv)}/transcript`)).body;
  } catch (err) {
    body.replaceChildren(el("p", { class: "error" }, `The context could not be read: ${err.message}`));
    return;
  }
  const sv = t.survey || { rows: [], bytes: 0, system_bytes: 0 };
  const rows = sv.rows || [];
  const table = el(
    "table",
    { class: "survey" },
    el("caption", {}, `${rows.length} row${rows.length === 1 ? "" : "s"} · ${bytes(sv.bytes || 0)} of messages · ${bytes(sv.system_bytes || 0)} of system prompt`),
    el("thead", {}, el("tr", {}, ["Turns", "Role", "Kind", "What", "Size", "Held"].map((h) => el("th", { scope: "col" }, h)))),
    el(
      "tbody",
      {},
      rows.map((r) =>
        el(
          "tr",
          { class: r.kind === "residue" ? "residue-row" : "" },
          el("td", {}, r.from === r.to ? String(r.from) : `${r.from}–${r.to}`),
          el("td", {}, r.role),
          el("td", {}, r.kind),
          el("td", { class: "label" }, r.label),
          el("td", { class: "num" }, bytes(r.bytes)),
          el("td", {}, r.held),
        ),
      ),
    ),
  );
  const msgs = el(
    "div",
    { class: "context-messages" },
    (t.messages || []).map((m) => {
      const text = (m.parts || []).filter((p) => p.type === "text").map((p) => p.text).join("\n\n");
      const res = m.role === "user" ? residueOf(text) : null;
      if (res) return residueBlock(res);
      const other = (m.parts || []).filter((p) => p.type !== "text").map((p) => (p.type === "tool_call" ? `→ ${p.name}` : p.type === "tool_result" ? `← result (${p.outcome || "ok"})` : p.type));
      return el("div", { class: `ctx-msg ${m.role}` }, el("div", { class: "ctx-role" }, m.role), text ? prose(text) : null, other.length ? el("div", { class: "muted small" }, other.join(" · ")) : null);
    }),
  );
  body.replaceChildren(
    table,
    el("details", { class: "ctx-details" }, el("summary", {}, `The messages as sent (${(t.messages || []).length})`), msgs),
    t.system ? el("details", { class: "ctx-details" }, el("summary", {}, "The system prompt"), el("pre", { class: "system" }, t.system)) : null,
  );
}
