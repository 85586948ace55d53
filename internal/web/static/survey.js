// survey.js is the context panel: what the next request would carry (GET
// /api/conversations/{id}/transcript), turn by turn with sizes, residues shown as what they are;
// and the person's context edits (context-edits.v1: evict with a note, rewind, clear; fork.v1),
// which the host takes only while the conversation is not working.

import { request, newOp } from "./api.js";
import { el, fill, bytes, prose, residueOf, residueBlock } from "./markup.js";
import { filesSummary } from "./files.js";

// NOTE_MAX is the most bytes an eviction's note may have (fold.NoteMax).
export const NOTE_MAX = 240;

// setEditable switches the panel's edit actions on (the conversation is not working) or off.
export function setEditable(body, on) {
  for (const b of body.querySelectorAll(".ctx-edit")) b.disabled = !on;
  const note = body.querySelector(".ctx-busy");
  if (note) note.hidden = on;
}

// loadSurvey shows conv's context in body. ctl (all optional) says what the host takes and does
// with an edit: edits() (context-edits.v1), fork() (fork.v1), editable() (not working now),
// onFork(view) (the conversation a fork made).
export async function loadSurvey(conv, body, ctl = {}) {
  body.replaceChildren(el("p", { class: "muted" }, "Loading…"));
  let t;
  try {
    // The panel shows the survey, never the index: a long conversation's is left unbuilt.
    t = (await request("GET", `/api/conversations/${encodeURIComponent(conv)}/transcript?index=none`)).body;
  } catch (err) {
    body.replaceChildren(el("p", { class: "error" }, `The context could not be read: ${err.message}`));
    return;
  }
  const sv = t.survey || { rows: [], bytes: 0, system_bytes: 0 };
  const rows = sv.rows || [];
  const edits = !!(ctl.edits && ctl.edits());
  const forks = !!(ctl.fork && ctl.fork());
  const files = !!(ctl.files && ctl.files()); // rewind-files.v1: a rewind may take the files too
  const path = (what) => `/api/conversations/${encodeURIComponent(conv)}/${what}`;
  const refused = el("p", { class: "error ctx-error", role: "alert", hidden: true });
  const again = () => loadSurvey(conv, body, ctl);
  // edit sends one edit under a new op id; a refusal (busy, a bad span) is shown in the panel.
  const edit = async (what, name, payload) => {
    refused.hidden = true;
    body.filesDone = null;
    try {
      return (await request("POST", path(what), { op_id: newOp(what), ...payload })).body || {};
    } catch (err) {
      refused.textContent = `${name} was refused: ${err.message}`;
      refused.hidden = false;
      return null;
    }
  };

  // The eviction form, filled from a row's Evict….
  const from = el("input", { id: "evict-from", type: "number", min: "1", required: true, inputmode: "numeric" });
  const to = el("input", { id: "evict-to", type: "number", min: "1", required: true, inputmode: "numeric" });
  const note = el("input", { id: "evict-note", type: "text", maxlength: String(NOTE_MAX), required: true, autocomplete: "off", placeholder: "what these turns held, and what still matters" });
  const noteHint = el("span", { id: "evict-note-hint", class: "muted small" }, `One line, at most ${NOTE_MAX} bytes. It stays in the context in their place.`);
  note.setAttribute("aria-describedby", "evict-note-hint");
  const evictForm = el(
    "form",
    { class: "evict-form", hidden: true, "aria-label": "Evict turns", onsubmit: async (e) => {
      e.preventDefault();
      const f = Number(from.value), tt = Number(to.value), n = note.value.trim();
      refused.hidden = true;
      let bad = "";
      if (!Number.isInteger(f) || !Number.isInteger(tt) || f < 1 || tt < f) bad = "The turns run from a turn to the same or a later one.";
      else if (!n) bad = "Write a note: what these turns held, and what still matters.";
      else if (new TextEncoder().encode(n).length > NOTE_MAX) bad = `The note is over ${NOTE_MAX} bytes; shorten it.`;
      if (bad) {
        refused.textContent = bad;
        refused.hidden = false;
        return;
      }
      if (await edit("evict", "The eviction", { from: f, to: tt, note: n })) again();
    } },
    el("div", { class: "evict-span" },
      el("label", { for: "evict-from" }, "From turn"), from,
      el("label", { for: "evict-to" }, "to"), to),
    el("label", { for: "evict-note" }, "Note"), note, noteHint,
    el("div", { class: "actions" },
      el("button", { type: "submit", class: "btn small primary ctx-edit" }, "Evict"),
      el("button", { type: "button", class: "btn small quiet", onclick: () => (evictForm.hidden = true) }, "Cancel")),
  );
  const openEvict = (r) => {
    from.value = String(r.from);
    to.value = String(r.to);
    note.value = "";
    evictForm.hidden = false;
    note.focus();
  };

  // Clear asks once more before it withdraws every turn.
  const clearConfirm = el(
    "div",
    { class: "ctx-confirm", hidden: true, role: "group", "aria-label": "Confirm clearing the context" },
    el("span", {}, "Withdraw every turn from the context? They stay readable in the transcript."),
    el("button", { type: "button", class: "btn small stop ctx-edit ctx-clear-yes", onclick: async () => {
      clearConfirm.hidden = true;
      if (await edit("clear", "Clearing the context", {})) again();
    } }, "Clear"),
    el("button", { type: "button", class: "btn small quiet", onclick: () => (clearConfirm.hidden = true) }, "Cancel"),
  );
  const toolbar = edits || forks ? el(
    "div",
    { class: "ctx-tools" },
    edits ? el("button", { type: "button", class: "btn small ctx-edit ctx-clear", onclick: () => {
      clearConfirm.hidden = false;
      clearConfirm.querySelector(".ctx-clear-yes").focus();
    } }, "Clear context") : null,
    forks ? el("button", { type: "button", class: "btn small ctx-edit ctx-fork", onclick: async () => {
      const res = await edit("fork", "The fork", {});
      if (res && res.conversation && ctl.onFork) ctl.onFork(res.conversation);
    } }, "Fork") : null,
    el("span", { class: "ctx-busy muted small", hidden: true }, "Stop the conversation to edit its context."),
  ) : null;
  const table = el(
    "table",
    { class: "survey" },
    el("caption", {}, `${rows.length} row${rows.length === 1 ? "" : "s"} · ${bytes(sv.bytes || 0)} of messages · ${bytes(sv.system_bytes || 0)} of system prompt`),
    el("thead", {}, el("tr", {}, ["Turns", "Role", "Kind", "What", "Size", "Held"].concat(edits ? ["Edit"] : []).map((h) => el("th", { scope: "col" }, h)))),
    el(
      "tbody",
      {},
      rows.map((r) =>
        el(
          "tr",
          { class: r.kind === "residue" ? "residue-row" : "" },
          el("td", {}, span(r)),
          el("td", {}, r.role),
          el("td", {}, r.kind),
          el("td", { class: "label" }, r.label),
          el("td", { class: "num" }, bytes(r.bytes)),
          el("td", {}, r.held),
          edits ? el("td", { class: "row-edits" },
            el("button", { type: "button", class: "link ctx-edit ctx-evict", "aria-label": `Evict turns ${span(r)}…`, onclick: () => openEvict(r) }, "Evict…"),
            el("button", { type: "button", class: "link ctx-edit ctx-rewind", "aria-label": `Rewind to turn ${r.from}`, onclick: async () => {
              if (await edit("rewind", "The rewind", { turn: r.from })) again();
            } }, "Rewind to here"),
            files ? el("button", { type: "button", class: "link ctx-edit ctx-rewind-files", "aria-label": `Rewind to turn ${r.from}, files too`, onclick: async () => {
              const res = await edit("rewind", "The rewind", { turn: r.from, files: true });
              if (res && res.files) body.filesDone = { conv, summary: filesSummary(res.files) };
              if (res) await again();
            } }, "Rewind files too") : null) : null,
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
  // What the last rewind with files did stays at the top through the reloads its own records
  // cause, until the next edit or another conversation.
  const done = body.filesDone && body.filesDone.conv === conv ? body.filesDone.summary : null;
  fill(
    body,
    done,
    refused,
    toolbar,
    clearConfirm,
    evictForm,
    table,
    el("details", { class: "ctx-details" }, el("summary", {}, `The messages as sent (${(t.messages || []).length})`), msgs),
    t.system ? el("details", { class: "ctx-details" }, el("summary", {}, "The system prompt"), el("pre", { class: "system" }, t.system)) : null,
  );
  setEditable(body, !ctl.editable || ctl.editable());
  body.dataset.loaded = String(Date.now());
}

function span(r) {
  return r.from === r.to ? String(r.from) : `${r.from}–${r.to}`;
}
