// held.js shows a conversation parked on a held tool call (release.v1): what was held and why, a
// Release button (the hooks and the person are asked again, and the call runs or is refused then)
// and the reminder that Stop answers it not_executed instead.

import { el, fill } from "./markup.js";

// heldBox fills box with the hold of state (or hides it). release() asks the host to release it;
// busy says a release is on its way. It is rebuilt only when what it shows changes.
export function heldBox(box, state, canRelease, busy, release) {
  const h = state && state.hold;
  const key = h ? JSON.stringify([h.call_id, h.reason, h.by, canRelease, busy]) : "";
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.hidden = !h;
  if (!h) {
    box.replaceChildren();
    return;
  }
  const who = h.by === "approval" ? "Your approval was not answered before the host stopped" : "A hook held this tool call";
  fill(
    box,
    el("div", { class: "held-head" }, el("strong", {}, "Held. "), who, ": ", el("span", { class: "held-reason" }, h.reason || "no reason given")),
    el("div", { class: "held-note" }, "Nothing at or after it ran. Release asks again and runs or refuses it; Stop answers it not executed."),
    canRelease
      ? el("div", { class: "actions" }, el("button", { type: "button", class: "btn small primary release", disabled: busy, onclick: release }, busy ? "Releasing…" : "Release"))
      : null,
  );
}
