// sender.js puts the outbox on the wire: every queued message is sent, and sent again with the same
// op id until the host answers; Stop drops what the host has not acknowledged and asks the host to
// stop with a new op id per press. Writes to one conversation are serialized, so a send already on
// its way reaches the host before a Stop pressed after it, and the Stop withdraws it there.

import { request, newOp, HTTPError, NetworkError } from "./api.js";

export class Sender {
  // outbox is the Outbox; hooks are
  //   giveBack(op)     put an entry back into its composer (Outbox.giveBack, then redraw)
  //   online(bool)     whether the host answered
  //   authFailed()     the host refused the token
  //   changed()        something the page shows changed
  //   caps()           the host's capabilities (a Set)
  //   toast(text)      tell the person
  constructor(outbox, hooks) {
    this.outbox = outbox;
    this.hooks = hooks;
    this.inflight = new Set(); // ops whose POST is on its way
    this.dropOnFail = new Set(); // in-flight ops a Stop dropped: given back if their POST fails
    this.chains = new Map(); // conversation -> the promise its writes are serialized on
    this.timer = 0;
    this.pause = 250;
  }

  chain(conv, fn) {
    const next = (this.chains.get(conv) || Promise.resolve()).then(fn).catch((err) => console.error(err));
    this.chains.set(conv, next);
    return next;
  }

  // flush sends every queued message that is not already on its way.
  flush() {
    clearTimeout(this.timer);
    for (const e of this.outbox.all()) {
      if (e.status !== "queued" || this.inflight.has(e.op)) continue;
      this.inflight.add(e.op);
      this.chain(e.conv, () => this.post(e.op));
    }
  }

  later() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), this.pause);
    this.pause = Math.min(this.pause * 2, 2000);
  }

  async post(op) {
    const e = this.outbox.get(op);
    if (!e || e.status !== "queued") {
      this.inflight.delete(op);
      return;
    }
    const body = { op_id: e.op, text: e.text, attachments: e.attachments || [] };
    if (e.queue && this.hooks.caps().has("queue.v1")) body.queue = true;
    try {
      const res = await request("POST", `/api/conversations/${encodeURIComponent(e.conv)}/messages`, body);
      this.inflight.delete(op);
      this.dropOnFail.delete(op);
      this.pause = 250;
      this.hooks.online(true);
      this.acknowledged(op, res.body);
    } catch (err) {
      this.inflight.delete(op);
      if (this.dropOnFail.delete(op)) {
        this.hooks.giveBack(op); // a Stop was pressed while it was on its way, and it did not arrive
      } else if (err instanceof HTTPError && err.status === 401) {
        this.hooks.authFailed();
      } else if (err instanceof HTTPError && err.permanent) {
        this.outbox.patch(op, { status: "retry", reason: err.code, detail: err.message });
      } else {
        if (err instanceof NetworkError) this.hooks.online(false);
        this.later();
      }
    }
    this.hooks.changed();
  }

  // acknowledged applies the host's answer to a send, or to its replay.
  acknowledged(op, res) {
    switch (res.state) {
      case "withdrawn":
        this.hooks.giveBack(op);
        return;
      case "rejected":
        this.outbox.patch(op, { status: "retry", id: res.message_id, reason: "rejected", detail: "the host did not deliver this message" });
        return;
      case "delivered":
      case "answered":
      case "cancelled":
        this.outbox.remove(op);
        return;
    }
    const e = this.outbox.get(op);
    if (e && e.status === "queued") this.outbox.patch(op, { status: "acked", id: e.id || res.message_id });
  }

  // stop drops every message of conv the host has not acknowledged (they come back into the
  // composer), then asks the host to stop with a new op id. busy says whether the host has
  // anything of conv's to stop; turn is the running turn, named only to a host without
  // conversation-stop.v1; opOf(id) finds the op of a message id the stream has shown.
  stop(conv, { busy, online, turn, opOf }) {
    let inflight = false;
    for (const e of this.outbox.forConv(conv)) {
      if (e.status !== "queued") continue;
      if (this.inflight.has(e.op)) {
        this.dropOnFail.add(e.op);
        inflight = true;
      } else {
        this.hooks.giveBack(e.op);
      }
    }
    const acked = this.outbox.forConv(conv).some((e) => e.status === "acked");
    busy = busy || inflight || acked;
    this.hooks.changed();
    if (!busy && online) return; // nothing on the host to stop
    const body = { op_id: newOp("stop") };
    if (!this.hooks.caps().has("conversation-stop.v1")) {
      if (!turn) return;
      body.turn = turn;
    }
    this.chain(conv, async () => {
      try {
        const res = (await request("POST", `/api/conversations/${encodeURIComponent(conv)}/stop`, body)).body;
        for (const w of res.withdrawn || []) {
          const e = this.outbox.find(conv, w.id, opOf(w.id));
          if (e) this.hooks.giveBack(e.op);
        }
        if (res.reason) this.hooks.toast(res.reason);
      } catch (err) {
        if (busy) this.hooks.toast(`Stop did not reach the host: ${err.message}`);
      }
      this.hooks.changed();
    });
  }
}
