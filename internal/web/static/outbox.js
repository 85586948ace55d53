// outbox.js keeps what a person typed safe in local storage: the outbox of messages the host has
// not finished with, and the composer draft of every conversation.
//
// An outbox entry is written the moment Send is pressed, before anything goes on the wire, and
// leaves storage only when its fate is known: delivered or ended on the host (removed), or
// withdrawn or dropped by a Stop (given back to the composer). Its status is
//
//   queued  not acknowledged by the host; sent, and sent again with the same op id, until it is
//   acked   the host holds it (message id known) and it has not been seen delivered yet
//   retry   rejected (e.g. host_restarted) or refused; it waits for Retry, under a new op id
//
// Giving back is exactly once by construction: the draft is written before the entry is removed
// (a failure between the two repeats text rather than losing it), and only an entry storage
// still holds is given back, so a replayed event, a second answer or a reload gives nothing twice.

const OUTBOX_KEY = "rein.outbox.v1";
const DRAFT_PREFIX = "rein.draft.v1.";

function read(storage, key, fallback) {
  try {
    const v = JSON.parse(storage.getItem(key));
    return v === null || v === undefined ? fallback : v;
  } catch {
    return fallback;
  }
}

// Drafts are the composers' contents, per conversation: {text, attachments}.
export class Drafts {
  constructor(storage) {
    this.storage = storage;
  }

  get(conv) {
    const d = read(this.storage, DRAFT_PREFIX + conv, null);
    if (!d || typeof d.text !== "string") return { text: "", attachments: [] };
    return { text: d.text, attachments: Array.isArray(d.attachments) ? d.attachments : [] };
  }

  set(conv, d) {
    if (!d.text && !(d.attachments && d.attachments.length)) {
      this.storage.removeItem(DRAFT_PREFIX + conv);
      return;
    }
    this.storage.setItem(DRAFT_PREFIX + conv, JSON.stringify({ text: d.text, attachments: d.attachments || [] }));
  }

  // append puts text and attachments after what the draft already holds.
  append(conv, text, attachments) {
    const d = this.get(conv);
    d.text = joinText(d.text, text || "");
    d.attachments = d.attachments.concat(attachments || []);
    this.set(conv, d);
    return d;
  }
}

// joinText puts b after a, on a line of its own.
export function joinText(a, b) {
  if (!a) return b;
  if (!b) return a;
  return a.endsWith("\n") ? a + b : a + "\n" + b;
}

// Outbox is the list of messages this browser sent that the host has not finished with.
export class Outbox {
  constructor(storage, drafts) {
    this.storage = storage;
    this.drafts = drafts;
  }

  all() {
    const v = read(this.storage, OUTBOX_KEY, []);
    return Array.isArray(v) ? v.filter((e) => e && typeof e.op === "string") : [];
  }

  write(list) {
    if (list.length === 0) this.storage.removeItem(OUTBOX_KEY);
    else this.storage.setItem(OUTBOX_KEY, JSON.stringify(list));
  }

  forConv(conv) {
    return this.all().filter((e) => e.conv === conv);
  }

  get(op) {
    return this.all().find((e) => e.op === op) || null;
  }

  // find returns the entry the host knows as message id, or as the operation op.
  find(conv, id, op) {
    return this.all().find((e) => e.conv === conv && ((id && e.id === id) || (op && e.op === op))) || null;
  }

  add(entry) {
    const list = this.all().filter((e) => e.op !== entry.op);
    list.push(entry);
    this.write(list);
  }

  // patch changes an entry storage still holds and returns it, or null.
  patch(op, fields) {
    const list = this.all();
    const i = list.findIndex((e) => e.op === op);
    if (i < 0) return null;
    list[i] = { ...list[i], ...fields };
    this.write(list);
    return list[i];
  }

  remove(op) {
    const list = this.all();
    const rest = list.filter((e) => e.op !== op);
    if (rest.length === list.length) return false;
    this.write(rest);
    return true;
  }

  // giveBack puts an entry's text and attachments back into its conversation's draft, after what
  // is typed there, and removes the entry: the draft first, then the entry. An entry storage no
  // longer holds is not given back. It returns the entry given back, or null.
  giveBack(op) {
    const e = this.get(op);
    if (!e) return null;
    this.drafts.append(e.conv, e.text, e.attachments);
    this.remove(op);
    return e;
  }
}
