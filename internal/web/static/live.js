// live.js shows a running tool call's output as it comes (live events of kind tool_output, paced
// and capped by the host), in the call's card, below its summary. It is for the person watching:
// the call's recorded result replaces it when it arrives, and a reload, which replays records
// only, never shows it again.

import { el } from "./markup.js";

// KEEP is how many characters of a call's live output the page holds: the newest.
const KEEP = 16 * 1024;

// showLive appends text to the live output of the call whose card is c ({card, out}), opening
// the card while the call runs so its output is seen.
export function showLive(c, text) {
  if (!c.live) {
    c.live = el("pre", { class: "tool-live", "aria-live": "off" });
    c.live.append(document.createTextNode(""));
    c.out.before(c.live);
    if (!c.card.open) {
      c.card.open = true;
      c.opened = true; // opened for the running output, not by the person
    }
  }
  const t = c.live.firstChild;
  t.appendData(text);
  if (t.length > KEEP) t.deleteData(0, t.length - KEEP);
  c.live.scrollTop = c.live.scrollHeight;
}

// endLive drops a call's live output: its result is shown in its place.
export function endLive(c) {
  if (!c.live) return;
  c.live.remove();
  c.live = null;
}
