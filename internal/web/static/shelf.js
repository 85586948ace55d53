// shelf.js: finding and sorting conversations — the search over titles and text (GET
// /api/search), the list's three views (conversations, archived, deleted), and the row actions
// that archive, delete and restore (POST /api/conversations/{id}/shelf). A deleted conversation
// can be restored until the host removes it (purge_at).

import { el } from "./markup.js";
import { request, newOp } from "./api.js";

export const F = {
  view: "list", // list, archived or deleted
  query: "",
  hits: null, // Map id → snippet while a search is shown
};

let searchTimer = 0;
let searchSeq = 0;

// controls builds the search field and the view switch above the list; changed() redraws it.
export function controls(changed) {
  const input = el("input", { type: "search", id: "conv-search", placeholder: "Search conversations", "aria-label": "Search conversations", autocomplete: "off" });
  input.addEventListener("input", () => {
    F.query = input.value.trim();
    clearTimeout(searchTimer);
    if (!F.query) {
      F.hits = null;
      changed();
      return;
    }
    searchTimer = setTimeout(() => runSearch(changed), 150);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && input.value) {
      e.stopPropagation();
      input.value = "";
      F.query = "";
      F.hits = null;
      changed();
    }
  });
  const views = [["list", "Conversations"], ["archived", "Archived"], ["deleted", "Deleted"]];
  const tabs = el("div", { class: "shelf-tabs", role: "group", "aria-label": "Which conversations" },
    views.map(([v, label]) => el("button", {
      type: "button", class: "shelf-tab", dataset: { view: v }, "aria-pressed": v === F.view ? "true" : "false",
      onclick: (e) => {
        F.view = v;
        for (const b of tabs.querySelectorAll(".shelf-tab")) b.setAttribute("aria-pressed", b.dataset.view === v ? "true" : "false");
        changed();
      },
    }, label)));
  return el("div", { class: "conv-find" }, input, tabs);
}

async function runSearch(changed) {
  const mine = ++searchSeq;
  try {
    const res = await request("GET", "/api/search?q=" + encodeURIComponent(F.query));
    if (mine !== searchSeq) return;
    F.hits = new Map((res.body.results || []).map((h) => [h.conversation.id, h.snippet || ""]));
  } catch {
    if (mine !== searchSeq) return;
    F.hits = new Map();
  }
  changed();
}

// shown filters the list to the view and the search.
export function shown(convs) {
  const want = F.view === "list" ? "" : F.view;
  return convs.filter((c) => (c.shelf || "") === want && (!F.hits || F.hits.has(c.id)));
}

export function snippetOf(id) {
  return F.hits ? F.hits.get(id) || "" : "";
}

// actions are a row's buttons: archive and delete in the list, restore elsewhere.
export function actions(c, done) {
  const act = (shelf, label, cls) => el("button", {
    type: "button", class: "row-act " + cls, "aria-label": `${label}: ${c.title || "New conversation"}`, title: label,
    onclick: async (e) => {
      e.stopPropagation();
      try {
        await request("POST", `/api/conversations/${encodeURIComponent(c.id)}/shelf`, { op_id: newOp("shelf"), shelf });
        c.shelf = shelf;
        done(shelf === "" ? "Restored." : shelf === "archived" ? "Archived: find it under Archived." : "Deleted: it can be restored under Deleted for 7 days.");
      } catch (err) {
        done(`That did not work: ${err.message}`);
      }
    },
  }, label);
  if (!c.shelf) return el("span", { class: "row-acts" }, act("archived", "Archive", "archive"), act("deleted", "Delete", "delete"));
  return el("span", { class: "row-acts" }, act("", "Restore", "restore"));
}

// isEmpty says whether a conversation was never sent anything: a New conversation click reuses
// it rather than leaving another empty one behind.
export function isEmpty(c, unsent) {
  return !c.shelf && !c.title && !unsent && !!c.state && !c.state.working && !(c.state.submissions || []).length && (c.state.turn || 0) === 0;
}
