// files.js is the web chat's part of rewinding the workspace's files with the context
// (rewind-files.v1): the summary of what a rewind with files wrote, removed and left as it was.

import { el } from "./markup.js";

// filesSummary renders what a rewind with files did (the answer's "files").
export function filesSummary(f) {
  const changed = f.changed || [], removed = f.removed || [], left = f.not_covered || [];
  const items = [];
  for (const p of changed) items.push(el("li", {}, el("span", { class: "muted" }, "written "), p));
  for (const p of removed) items.push(el("li", {}, el("span", { class: "muted" }, "removed "), p));
  const notCovered = left.map((n) => el("li", {}, `${n.path} (${n.reason})`));
  if (f.more_ignored) notCovered.push(el("li", {}, `and ${f.more_ignored} more ignored paths`));
  return el(
    "div",
    { class: "ctx-files", role: "status" },
    el("p", {}, `Files restored: ${changed.length} written, ${removed.length} removed.`),
    items.length ? el("ul", { class: "ctx-files-list" }, items) : null,
    notCovered.length ? el("p", { class: "muted small" }, "Not covered (left as they are):") : null,
    notCovered.length ? el("ul", { class: "ctx-files-left muted small" }, notCovered) : null,
    f.outside ? el("p", { class: "muted small" }, f.outside[0].toUpperCase() + f.outside.slice(1) + ".") : null,
  );
}
