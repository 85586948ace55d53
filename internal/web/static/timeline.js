// timeline.js renders one conversation from its event stream: every record in seq order, and the
// live material (streamed text, tool progress) that is not recorded. A recorded assistant message
// replaces what was streamed for it, so a reconnect that lost live material still ends right.

import { el, prose, residueOf, residueBlock } from "./markup.js";
import { rich, copyButton } from "./rich.js";
import { approvalCard } from "./approvals.js";
import { showLive, endLive } from "./live.js";
import { callDiff, diffView } from "./diffs.js";

const OUTCOMES = {
  ok: "ok",
  error: "error",
  denied: "denied",
  interrupted: "interrupted",
  not_executed: "not executed",
  timed_out: "timed out",
};

// summarize says in one line what a tool call does.
export function summarize(name, args) {
  let a = args;
  if (typeof a === "string") {
    try {
      a = JSON.parse(a);
    } catch {
      return a.slice(0, 160);
    }
  }
  if (!a || typeof a !== "object") return "";
  const pick = a.command ?? a.path ?? a.pattern ?? null;
  let s;
  if (typeof pick === "string") s = pick;
  else if (name === "context" && a.op === "evict") s = `evict ${a.from}–${a.to}: ${a.note || ""}`;
  else if (typeof a.op === "string") s = a.op + (a.turns ? " " + JSON.stringify(a.turns) : "");
  else s = JSON.stringify(a);
  return s.length > 160 ? s.slice(0, 159) + "…" : s;
}

function stripTrailer(s) {
  return String(s || "").replace(/\n?TURN: \d+\s*$/, "");
}

function clip(s, n = 6000) {
  return s.length > n ? s.slice(0, n) + `\n… (${s.length - n} more characters)` : s;
}

// settlesStop says whether a record of kind ends what a Stop interrupted, or starts anew.
function settlesStop(kind) {
  return kind === "quiesced" || kind === "user_prompt" || kind === "failure";
}

export class Timeline {
  // root is the element the conversation renders into; hooks.retry(sub) is called by a rejected
  // message's Retry button, hooks.held(id) says whether this browser's outbox holds a message
  // (its Retry is shown there instead), hooks.retried(id) whether it was already retried, and
  // hooks.answer(callID, allow) answers a tool call waiting for approval.
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    // The view follows new material while it is at the bottom; scrolling up stops that, and
    // scrolling back down starts it again.
    this.scroller = root.closest(".scroll") || root;
    this.stick = true;
    this.lastTop = 0;
    this.scroller.addEventListener("scroll", () => {
      const s = this.scroller;
      if (s.scrollHeight - s.scrollTop - s.clientHeight < 80) this.stick = true;
      else if (s.scrollTop < this.lastTop - 4) this.stick = false; // the person scrolled up
      this.lastTop = s.scrollTop;
    }, { passive: true });
    this.reset();
  }

  reset() {
    this.root.replaceChildren();
    this.cards = new Map(); // call id -> card
    this.approvals = new Map(); // call id -> {card: approvalCard, answer: "" | "allowed" | "denied"}
    this.subs = new Map(); // submission id -> {id, op, text, attachments, state, reason, detail}
    this.live = null;
    this.stopNode = null;
    this.seq = 0;
    this.stick = true;
  }

  put(node) {
    if (this.live && this.live.box.isConnected) this.root.insertBefore(node, this.live.box);
    else this.root.append(node);
  }

  // follow keeps the view at the bottom while it is following.
  follow() {
    if (!this.stick) return;
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.lastTop = this.scroller.scrollTop;
  }

  notice(text, cls = "", extra = null) {
    return el("div", { class: "notice " + cls, role: "status" }, el("span", {}, text), extra);
  }

  // record applies one record event.
  record(ev) {
    if (ev.seq <= this.seq) return; // applying an event twice converges
    this.seq = ev.seq;
    const p = ev.payload || {};
    const n = this.render(ev.kind, p, ev.seq);
    if (n) this.put(n);
    // A Stop's notice stays below what its exchange still records (the partial reply, the calls
    // answered), as the terminal shows it, until the exchange has settled.
    if (this.stopNode && n !== this.stopNode && this.stopNode.isConnected) this.put(this.stopNode);
    if (settlesStop(ev.kind)) this.stopNode = null;
    this.root.dataset.seq = String(ev.seq);
    this.follow();
  }

  render(kind, p, seq) {
    switch (kind) {
      case "user_prompt":
        return this.user(p.text, p.attachments, p.turn, null);
      case "steering":
        if (!p.source || p.source === "user") return this.user(p.text, [], null, "sent while the agent worked");
        return this.notice(`rein ${p.source}: ${p.text}`, "harness");
      case "import":
        return this.imported(p);
      case "assistant_message":
        this.endLive();
        return this.assistant(p);
      case "tool_started":
        this.setOutcome(p.call_id, "running");
        return null;
      case "tool_finished":
        this.finished(p);
        return null;
      case "tool_results":
        for (const r of p.results || []) this.result(r);
        return null;
      case "evicted":
        this.mark(p.from, p.to, "evicted");
        return residueBlock({ from: p.from, to: p.to, note: p.note }, p.by);
      case "rewound":
        this.mark(p.anchor, Infinity, "withdrawn");
        return this.notice(`Rewound: the turns from ${p.anchor} on were withdrawn.`, "muted");
      case "cleared":
        this.mark(0, Infinity, "withdrawn");
        return this.notice("The context was cleared.", "muted");
      case "provider_error":
        return this.notice(`The provider answered ${p.status ? p.status + " " : ""}(${p.class}): ${p.message}`, "warn");
      case "retry_scheduled":
        return this.notice(`Retrying in ${(p.delay_ms / 1000).toFixed(p.delay_ms < 10000 ? 1 : 0)} s (attempt ${p.attempt + 1}).`, "warn retry");
      case "cancelled":
        this.endLive();
        return null; // the Stop's notice says it
      case "quiesced":
        this.endLive();
        return p.reason && p.reason !== "replied" && p.reason !== "cancelled" ? this.notice(`The exchange ended: ${p.reason}.`, "muted") : null;
      case "failure":
        this.endLive();
        return this.notice(p.message, "error");
      case "nudge":
        return this.notice(`rein nudged the model (${p.reason}).`, "muted");
      case "pressure":
        return this.notice(`Context pressure (${p.line} line): ${p.used} of ${p.window} tokens.`, "muted");
      case "repaired":
        return this.notice(`rein repaired the reply of turn ${p.turn}: ${p.what}.`, "muted");
      case "model_changed":
        return this.notice(`Model: ${p.provider} ${p.model}.`, "muted");
      case "session_started":
      case "session_resumed":
        return p.sandbox ? this.notice(`Commands run under the sandbox: ${p.sandbox}.`, "muted") : null;
      case "hold":
        return this.notice(`Held${p.call_id ? " " + p.call_id : ""}: ${p.reason || "no reason given"}. Nothing at or after it ran.`, "warn held-note");
      case "released":
        return this.notice(`The hold was released${p.by ? " (by " + p.by + ")" : ""}: the call is asked about again.`, "muted");
      case "hook":
        return hookNotice(this, p);
      case "closed":
        return this.notice("This conversation was closed.", "muted");
      case "submission":
        return this.submission(p, seq);
      case "stop":
        return this.stopNotice(p);
      case "approval":
        return this.approval(p);
      case "backend":
        return this.notice(`This conversation runs in ${backendName(p.kind)}.`, "muted");
      case "external_session":
        return this.notice(`${backendName(p.kind)} ${p.version || ""}, session ${p.id}.`, "muted");
      case "external_item":
        return this.externalItem(p);
    }
    return null;
  }

  // externalItem shows one thing an external program did; its final reply comes as an import.
  externalItem(p) {
    switch (p.item) {
      case "text":
      case "thinking":
        return el("div", { class: "msg external-text", dataset: { item: p.item } }, prose(p.text || ""));
      case "tool_call":
      case "command":
        return el("div", { class: "ext-call", dataset: { id: p.id || "", status: p.status || "" } },
          el("span", { class: "ext-name" }, p.name || p.item), " ", el("code", {}, p.text || ""));
      case "tool_result":
      case "file_change":
        return el("div", { class: `ext-result ${p.status === "failed" ? "warn" : ""}`, dataset: { id: p.id || "", status: p.status || "" } },
          el("pre", {}, (p.text || "").slice(0, 2000)));
      case "retry":
        return this.notice(p.text, "warn retry");
      case "error":
        return this.notice(p.text, "error");
    }
    return null;
  }

  user(text, attachments, turn, note) {
    const r = residueOf(text || "");
    if (r) return residueBlock(r);
    return el(
      "div",
      { class: "msg user", dataset: turn ? { turn } : {} },
      note ? el("div", { class: "msg-note" }, note) : null,
      prose(text || ""),
      attachments && attachments.length ? el("div", { class: "chips" }, attachments.map((a) => el("span", { class: "chip" }, a.name))) : null,
    );
  }

  imported(p) {
    const m = p.message || { parts: [] };
    const text = m.parts.filter((x) => x.type === "text").map((x) => x.text).join("\n\n");
    const r = residueOf(text);
    if (r) return residueBlock(r);
    return el("div", { class: `msg ${m.role === "assistant" ? "assistant" : "user"} imported`, dataset: { turn: p.turn } },
      el("div", { class: "msg-note" }, `imported (${p.source})`), prose(text));
  }

  assistant(p) {
    const box = el("div", { class: "msg assistant", dataset: { turn: p.turn } });
    for (const part of p.parts || []) {
      switch (part.type) {
        case "text":
          box.append(rich(part.text));
          break;
        case "thinking":
          box.append(el("details", { class: "thinking" }, el("summary", {}, "Thinking"), prose(part.text)));
          break;
        case "redacted_thinking":
          box.append(el("div", { class: "muted small" }, "(thinking, redacted by the provider)"));
          break;
        case "server_tool":
          // The provider's own web search: what it searched for, and what it found.
          if (part.text) box.append(el("div", { class: "muted small server-tool" }, "⌕ " + part.text));
          break;
        case "tool_call":
          box.append(this.card(part.call_id, part.name, part.args));
          break;
      }
    }
    if (p.stop_reason === "max_tokens") box.append(el("div", { class: "muted small" }, "(cut off at the token limit)"));
    if (p.stop_reason === "cancelled") box.append(el("div", { class: "muted small cut-short" }, "(cut short by Stop: what was said so far is kept)"));
    const said = (p.parts || []).filter((x) => x.type === "text").map((x) => x.text).join("\n\n");
    if (said.trim()) box.append(el("div", { class: "msg-actions" }, copyButton(() => said, "Copy message")));
    return box;
  }

  card(id, name, args) {
    const argText = typeof args === "string" ? args : JSON.stringify(args ?? {}, null, 2);
    const badge = el("span", { class: "outcome pending" }, "pending");
    const out = el("pre", { class: "tool-output", hidden: true });
    const meta = el("span", { class: "tool-meta muted" });
    const card = el(
      "details",
      { class: "tool", dataset: { call: id, outcome: "pending" } },
      el("summary", { "aria-label": `Tool call ${name}` }, el("span", { class: "tool-name" }, name), " ", el("span", { class: "tool-summary" }, summarize(name, args)), " ", badge, meta),
      el("pre", { class: "tool-args" }, argText),
      out,
    );
    const d = callDiff(name, args);
    if (d) {
      // A file change reads as its diff, shown without a click; the arguments stay behind it.
      card.querySelector(".tool-args").replaceWith(diffView(d));
      card.open = true;
    }
    this.cards.set(id, { card, badge, out, meta });
    return card;
  }

  setOutcome(id, outcome) {
    const c = this.cards.get(id);
    if (!c) return;
    // A recorded outcome is final; "running" never overwrites it.
    if (outcome === "running" && c.card.dataset.outcome !== "pending") return;
    c.card.dataset.outcome = outcome;
    c.badge.className = "outcome " + outcome;
    c.badge.textContent = OUTCOMES[outcome] || outcome;
  }

  finished(p) {
    const c = this.cards.get(p.call_id);
    if (!c) return;
    const bits = [];
    if (typeof p.exit_code === "number") bits.push(`exit ${p.exit_code}`);
    if (p.duration_ms) bits.push(p.duration_ms < 1000 ? `${p.duration_ms} ms` : `${(p.duration_ms / 1000).toFixed(1)} s`);
    c.meta.textContent = bits.length ? " · " + bits.join(" · ") : "";
    if (p.outcome) this.setOutcome(p.call_id, p.outcome);
  }

  result(r) {
    this.setOutcome(r.call_id, r.outcome || (r.is_error ? "error" : "ok"));
    const c = this.cards.get(r.call_id);
    if (!c) return;
    endLive(c);
    c.out.hidden = false;
    c.out.textContent = clip(stripTrailer(r.content));
  }

  mark(from, to, cls) {
    for (const n of this.root.querySelectorAll("[data-turn]")) {
      const t = Number(n.dataset.turn);
      if (t >= from && t <= to) n.classList.add(cls);
    }
  }

  submission(p, seq) {
    let s = this.subs.get(p.id);
    if (!s) {
      s = { id: p.id, op: "", text: "", attachments: [] };
      this.subs.set(p.id, s);
    }
    if (p.op) s.op = p.op;
    if (p.text || (p.attachments && p.attachments.length)) {
      s.text = p.text || "";
      s.attachments = p.attachments || [];
    }
    Object.assign(s, { state: p.state, reason: p.reason || "", detail: p.detail || "", seq });
    if (p.state === "withdrawn") return this.notice("A message was withdrawn before it started.", "muted withdrawn");
    if (p.state !== "rejected") return null;
    const why = p.detail || p.reason || "the host refused it";
    const box = this.notice(`A message was not delivered: ${why}`, "warn rejected");
    box.dataset.sub = p.id;
    if (!this.hooks.held(p.id) && !this.hooks.retried(p.id) && s.text) {
      box.append(el("button", { type: "button", class: "link", onclick: (e) => {
        e.currentTarget.remove();
        this.hooks.retry(s);
      } }, "Retry"));
    }
    return box;
  }

  // approval shows a call asked about inline (its buttons are switched on by syncApprovals while
  // the host says it waits), and the answer when it is recorded.
  approval(p) {
    let a = this.approvals.get(p.call_id);
    if (p.state === "asked") {
      if (a) return null;
      const card = approvalCard({ call_id: p.call_id, name: p.name || "tool", args: p.args || "", diff: p.diff || "", rules: p.rules || [] }, summarize(p.name, p.args || ""), (id, allow, scope) => this.hooks.answer(id, allow, scope));
      a = { card, answer: "" };
      this.approvals.set(p.call_id, a);
      return card.box;
    }
    if (a && (p.state === "allowed" || p.state === "denied")) {
      a.answer = p.state;
      a.card.set(p.scope === "conversation" ? "allowed for this conversation" : p.state);
    }
    return null;
  }

  // syncApprovals sets every unanswered inline approval from the state: waiting holds the ids of
  // the calls the host waits on, sending those whose answer is on its way, canAnswer whether
  // this host takes answers.
  syncApprovals(waiting, sending, canAnswer) {
    for (const [id, a] of this.approvals) {
      if (a.answer) continue;
      if (!waiting.has(id)) a.card.set("ended");
      else if (!canAnswer) a.card.set("asked");
      else a.card.set(sending.has(id) ? "sending" : "waiting");
    }
  }

  // stopNotice words a Stop as the terminal does; what it withdrew is said after.
  stopNotice(p) {
    const n = (p.withdrawn || []).length;
    const what = n ? ` (${n} waiting message${n > 1 ? "s" : ""} withdrawn)` : "";
    const box = this.notice(`■ Stopped: the session is settled${what}.`, "stopped");
    if (p.interrupted) this.stopNode = box; // the exchange it interrupted still records its end
    return box;
  }

  // ---- live material -------------------------------------------------------------------------

  ensureLive() {
    if (this.live && this.live.box.isConnected) return this.live;
    const box = el("div", { class: "msg assistant live", "aria-busy": "true" });
    const status = el("div", { class: "live-status muted small", hidden: true });
    const thinking = el("details", { class: "thinking", hidden: true }, el("summary", {}, "Thinking…"), el("div", { class: "prose plain" }));
    const text = el("div", { class: "prose plain live-text" });
    const tools = el("div");
    box.append(status, thinking, text, tools);
    this.root.append(box);
    this.live = { box, status, thinking, text, tools, calls: new Map() };
    return this.live;
  }

  endLive() {
    if (this.live) this.live.box.remove();
    this.live = null;
  }

  // onLive applies one live event. Tool progress of recorded calls goes to their cards.
  onLive(l) {
    switch (l.kind) {
      case "text": {
        const L = this.ensureLive();
        L.status.hidden = true;
        L.text.append(l.text);
        break;
      }
      case "thinking": {
        const L = this.ensureLive();
        L.thinking.hidden = false;
        L.thinking.lastChild.append(l.text);
        break;
      }
      case "tool_call": {
        const L = this.ensureLive();
        const c = el("div", { class: "tool live-tool" }, el("span", { class: "tool-name" }, l.name), " ", el("span", { class: "tool-summary muted" }, "…"));
        L.calls.set(l.call_id, { c, args: "", name: l.name });
        L.tools.append(c);
        break;
      }
      case "tool_args": {
        const call = this.live && this.live.calls.get(l.call_id);
        if (!call) break;
        call.args += l.text;
        call.c.lastChild.textContent = summarize(call.name, call.args);
        break;
      }
      case "tool_start":
        this.setOutcome(l.call_id, "running");
        break;
      case "tool_output": {
        const c = this.cards.get(l.call_id);
        if (c) showLive(c, l.text);
        break;
      }
      case "tool_end":
        if (l.text) this.setOutcome(l.call_id, l.text);
        break;
      case "restart":
        this.endLive();
        break;
      case "status": {
        const L = this.ensureLive();
        L.status.hidden = false;
        L.status.textContent = l.text;
        break;
      }
    }
    this.follow();
  }
}

// hookNotice shows what a hook decided, or nothing for a pass that added nothing.
function hookNotice(t, p) {
  if (p.decision === "pass" && !p.failed && !p.context && !p.error) return null;
  let line = `${p.event} hook ${p.command}${p.tool ? " on " + p.tool : ""}: ${p.decision}`;
  if (p.reason) line += ` (${p.reason})`;
  if (p.context) line += `; adds: ${p.context}`;
  return t.notice(line, p.decision === "refuse" || p.failed ? "warn hook" : "muted hook");
}

// backendName names an agent program for a person.
function backendName(kind) {
  return { claude: "Claude Code", codex: "Codex", rein: "rein" }[kind] || kind;
}
