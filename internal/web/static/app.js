// app.js is the web chat (DESIGN §12.6): the conversation list, one conversation's timeline and
// its composer, whose Send becomes Stop from the moment a message is sent until the conversation
// stops working. Nothing typed is lost: drafts and the outbox live in local storage (outbox.js).

import { takeToken, token, forgetToken, request, newOp, Stream, HTTPError } from "./api.js";
import { Sender } from "./sender.js";
import { Drafts, Outbox, joinText } from "./outbox.js";
import { working, canStop } from "./working.js";
import { Timeline } from "./timeline.js";
import { loadSurvey, setEditable } from "./survey.js";
import { approvalCard } from "./approvals.js";
import { heldBox } from "./held.js";
import { summarize } from "./timeline.js";
import { el, ago } from "./markup.js";
import { Tally, setCatalog, picker, describe } from "./usage.js";
import { controls, shown, snippetOf, actions, isEmpty, F } from "./shelf.js";
import { installKeys } from "./keys.js";
import { Plan, renderPlan } from "./plan.js";

const $ = (id) => document.getElementById(id);
const ui = {
  app: $("app"), list: $("conv-list"), newConv: $("new-conv"), backend: $("backend"), menu: $("menu"), scrim: $("scrim"),
  title: $("title"), renameBtn: $("rename"), renameForm: $("rename-form"), renameInput: $("rename-input"),
  status: $("status"), banner: $("banner"), scroll: $("scroll"), timeline: $("timeline"), pending: $("pending"), approvals: $("approvals"), held: $("held"), plan: $("plan"),
  ctxBtn: $("context-btn"), ctxPanel: $("context-panel"), ctxBody: $("context-body"), ctxClose: $("context-close"), ctxRefresh: $("context-refresh"),
  modelBtn: $("model-btn"), usage: $("usage"),
  composer: $("composer"), input: $("input"), file: $("file"), atts: $("attachments"), send: $("send"), stop: $("stop"), toast: $("toast"),
};

const drafts = new Drafts(localStorage);
const outbox = new Outbox(localStorage, drafts);
const CAPS_KEY = "rein.caps.v1";
const BACKEND_KEY = "rein.backend.v1";
const CONVS_KEY = "rein.convs.v1";
const CREATE_KEY = "rein.create-op.v1";
const RETRIED_KEY = "rein.retried.v1";
const CURRENT_KEY = "rein.current";
const MAX_ATTACHMENT = 512 * 1024;

const S = {
  caps: new Set(JSON.parse(localStorage.getItem(CAPS_KEY) || "[]")),
  convs: JSON.parse(localStorage.getItem(CONVS_KEY) || "[]"),
  current: null,
  state: null, // the current conversation's folded state, as the newest event carried it
  stream: null,
  timeline: null,
  plan: new Plan(), // the current conversation's plan, followed from its records (plan.js)
  seen: new Set(), // submission ids the current conversation's stream has shown
  online: true,
  authFailed: false,
  bannerTimer: 0,
  composing: false,
  held: [], // given-back text that arrived during an IME composition
  answering: new Set(), // call ids whose approval answer is on its way or taken by the host
  tally: new Tally(), // the current conversation's model, tokens and cost
  releasing: null, // the conversation whose release is on its way
};

const stopCap = () => S.caps.has("conversation-stop.v1");
const approvalsCap = () => S.caps.has("approvals.v1");

// surveyCtl is what the context panel needs to offer edits: the host's capabilities, whether the
// conversation takes an edit now, and where a fork goes.
const surveyCtl = {
  edits: () => S.caps.has("context-edits.v1"),
  fork: () => S.caps.has("fork.v1"),
  files: () => S.caps.has("rewind-files.v1"),
  editable: () => !!S.current && !working(S.state) && S.online,
  onFork: (v) => {
    if (!S.convs.some((c) => c.id === v.id)) S.convs.unshift(v);
    select(v.id);
    toast("Forked: this is the new conversation, with the context so far.");
    refreshSoon();
  },
};
const sender = new Sender(outbox, {
  giveBack: (op) => giveBack(op),
  online: (on) => setOnline(on),
  authFailed: () => authFailed(),
  changed: () => render(),
  caps: () => S.caps,
  toast: (text) => toast(text),
});
const flush = () => sender.flush();

// giveBack puts a message's text and attachments back into its composer, after what is typed,
// once (Outbox.giveBack).
function giveBack(op) {
  const e = outbox.giveBack(op);
  if (!e || e.conv !== S.current) return;
  if (S.composing) {
    S.held.push({ text: e.text, attachments: e.attachments || [] });
    return;
  }
  showDraft();
}

// ---- Stop ---------------------------------------------------------------------------------------

// stop drops every message of this conversation the host has not acknowledged (they come back
// into the composer), then asks the host to stop, with a new op id for this press.
function stop() {
  const conv = S.current;
  if (!conv) return;
  sender.stop(conv, {
    busy: working(S.state),
    online: S.online,
    turn: S.state && S.state.in_flight ? S.state.turn : 0,
    opOf: (id) => {
      const sub = S.current === conv && S.timeline ? S.timeline.subs.get(id) : null;
      return sub ? sub.op : "";
    },
  });
}

// ---- held calls ---------------------------------------------------------------------------------

// release releases the current conversation's held call, with a new op id for this press.
async function release() {
  const conv = S.current;
  if (!conv || S.releasing === conv) return;
  S.releasing = conv;
  render();
  try {
    await request("POST", `/api/conversations/${encodeURIComponent(conv)}/release`, { op_id: newOp("release") });
  } catch (err) {
    toast(`The release could not be sent: ${err.message}`);
  } finally {
    S.releasing = null;
    render();
  }
}

// ---- approvals ----------------------------------------------------------------------------------

// answer answers a tool call waiting for approval, with a new op id for this press.
async function answer(callID, allow, scope) {
  const conv = S.current;
  if (!conv || S.answering.has(callID)) return;
  S.answering.add(callID);
  render();
  let taken = false;
  try {
    await request("POST", `/api/conversations/${encodeURIComponent(conv)}/approve`, scope ? { op_id: newOp("approve"), call_id: callID, allow, scope } : { op_id: newOp("approve"), call_id: callID, allow });
    taken = true;
  } catch (err) {
    if (err instanceof HTTPError && err.status === 404) toast("That call is no longer waiting for an answer.");
    else toast(`Your answer could not be sent: ${err.message}`);
  } finally {
    // A taken answer keeps the buttons off until the state no longer lists the call.
    if (!taken) S.answering.delete(callID);
    render();
    const a = document.activeElement;
    if (!a || a === document.body || a.disabled || !a.isConnected) ui.input.focus();
  }
}

// renderApprovals shows the calls waiting above the composer, and sets the inline ones. It is
// rebuilt only when what it shows changes, so focus on its buttons stays.
let approvalsKey = "";
function renderApprovals() {
  const waiting = (approvalsCap() && S.state && S.state.approvals) || [];
  const ids = new Set(waiting.map((a) => a.call_id));
  for (const id of S.answering) if (!ids.has(id)) S.answering.delete(id);
  if (S.timeline) S.timeline.syncApprovals(ids, S.answering, approvalsCap());
  const key = JSON.stringify(waiting.map((a) => [a.call_id, S.answering.has(a.call_id)]));
  if (key === approvalsKey) return;
  approvalsKey = key;
  const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest("#approvals .approval");
  const focusID = focused ? focused.dataset.call : null;
  const focusAllow = !!(document.activeElement && document.activeElement.classList.contains("allow"));
  ui.approvals.replaceChildren(...waiting.map((a) => {
    const c = approvalCard(a, summarize(a.name, a.args), answer);
    c.set(S.answering.has(a.call_id) ? "sending" : "waiting");
    return c.box;
  }));
  ui.approvals.hidden = waiting.length === 0;
  if (focusID) {
    const again = [...ui.approvals.querySelectorAll(".approval")].find((b) => b.dataset.call === focusID);
    const btn = again && again.querySelector(focusAllow ? ".allow" : ".deny");
    if (btn && !btn.disabled) btn.focus();
  }
}

// ---- the composer -------------------------------------------------------------------------------

let atts = [];

function showDraft() {
  const d = drafts.get(S.current);
  ui.input.value = d.text;
  atts = d.attachments;
  renderAtts();
  autosize();
  render();
}

function saveDraft() {
  if (!S.current) return;
  try {
    writeDraft();
  } catch (err) {
    toast(`This draft is too large to keep across a reload (${err.message}); it stays in the composer.`);
  }
}

function writeDraft() {
  let text = ui.input.value;
  let more = [];
  for (const h of S.held) {
    text = joinText(text, h.text);
    more = more.concat(h.attachments);
  }
  drafts.set(S.current, { text, attachments: atts.concat(more) });
}

function send() {
  const conv = S.current;
  const text = ui.input.value.replace(/^\s*\n/, "").trimEnd();
  if (!conv || (!text.trim() && atts.length === 0) || currentView().closed) return;
  // The outbox holds the message before the composer lets go of it.
  try {
    outbox.add({ op: newOp("msg"), conv, text, attachments: atts, queue: false, at: Date.now(), status: "queued" });
  } catch (err) {
    toast(`The message could not be kept on this device (${err.message}); it was not sent.`);
    return;
  }
  drafts.set(conv, { text: "", attachments: [] });
  ui.input.value = "";
  atts = [];
  renderAtts();
  autosize();
  render(); // Stop shows from this moment
  flush();
}

function renderAtts() {
  ui.atts.replaceChildren(
    ...atts.map((a, i) =>
      el("span", { class: "chip" }, a.name, el("button", { type: "button", class: "chip-x", "aria-label": `Remove ${a.name}`, onclick: () => {
        atts.splice(i, 1);
        saveDraft();
        renderAtts();
        render();
      } }, "×")),
    ),
  );
}

async function attach(files) {
  for (const f of files) {
    if (f.size > MAX_ATTACHMENT) {
      toast(`${f.name} is over ${MAX_ATTACHMENT / 1024} KB; attach a smaller file.`);
      continue;
    }
    const isText = /^text\/|json|xml|javascript|yaml|toml|csv/.test(f.type) || /\.(md|txt|go|js|ts|py|rs|c|h|sh|json|ya?ml|toml|csv|html|css)$/i.test(f.name);
    if (isText) {
      atts.push({ name: f.name, media_type: f.type || "text/plain", text: await f.text() });
    } else {
      const b = new Uint8Array(await f.arrayBuffer());
      let s = "";
      for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
      atts.push({ name: f.name, media_type: f.type || "application/octet-stream", data: btoa(s) });
    }
  }
  saveDraft();
  renderAtts();
  render();
}

function autosize() {
  ui.input.style.height = "auto";
  ui.input.style.height = Math.min(ui.input.scrollHeight, 240) + "px";
}

// ---- the conversation ---------------------------------------------------------------------------

function currentView() {
  return S.convs.find((c) => c.id === S.current) || { id: S.current, title: "", state: null, closed: false };
}

function select(id) {
  if (S.stream) S.stream.close();
  S.current = id;
  S.seen = new Set();
  S.held = [];
  S.answering = new Set();
  sessionStorage.setItem(CURRENT_KEY, id);
  history.replaceState(null, "", location.pathname + "#c=" + encodeURIComponent(id));
  const v = currentView();
  S.state = v.state || null;
  S.timeline.reset();
  S.tally.reset();
  S.plan = new Plan();
  renderPlan(ui.plan, []);
  showDraft();
  closeNav();
  S.stream = new Stream(id, 0, { onRecord, onLive: (l) => S.timeline.onLive(l), onStatus: streamStatus });
  if (!ui.ctxPanel.hidden) loadSurvey(id, ui.ctxBody, surveyCtl);
  render();
}

let surveyTimer = 0;
let listTimer = 0;

function refreshSoon() {
  clearTimeout(listTimer);
  listTimer = setTimeout(refreshList, 150);
}

// prompted are the conversations this page has seen a prompt in (the list's copy of a view may be
// older than that).
const prompted = new Set();

function onRecord(ev) {
  S.timeline.record(ev);
  if (ev.kind === "user_prompt") prompted.add(S.current);
  const spent = S.tally.take(ev);
  if (spent) S.timeline.put(spent);
  if (S.plan.apply(ev.kind, ev.payload)) renderPlan(ui.plan, S.plan.items());
  if (ev.state && (!S.state || ev.state.seq >= S.state.seq)) S.state = ev.state;
  const p = ev.payload || {};
  const conv = S.current;
  switch (ev.kind) {
    case "submission": {
      S.seen.add(p.id);
      const e = outbox.find(conv, p.id, p.op);
      if (!e) break;
      if (p.state === "accepted") {
        if (e.status === "queued") outbox.patch(e.op, { status: "acked", id: p.id });
      } else if (p.state === "withdrawn") {
        giveBack(e.op);
      } else if (p.state === "rejected") {
        outbox.patch(e.op, { status: "retry", id: p.id, reason: p.reason, detail: p.detail });
      } else if (p.state === "answered" || p.state === "cancelled") {
        outbox.remove(e.op);
      }
      break;
    }
    case "user_prompt":
    case "steering":
      if (ev.kind === "user_prompt" && !currentView().title) refreshSoon();
      if (p.submission) {
        S.seen.add(p.submission);
        const e = outbox.find(conv, p.submission, null);
        if (e) outbox.remove(e.op); // delivered: the timeline shows it now
      }
      break;
    case "renamed": {
      const v = S.convs.find((c) => c.id === conv);
      if (v) v.title = p.title;
      break;
    }
    case "closed": {
      const v = S.convs.find((c) => c.id === conv);
      if (v) v.closed = true;
      break;
    }
    case "quiesced":
    case "evicted":
    case "rewound":
    case "cleared":
      if (ev.kind === "quiesced") refreshSoon(); // the list's time, and the title the host derives
      if (!ui.ctxPanel.hidden) {
        clearTimeout(surveyTimer);
        surveyTimer = setTimeout(() => loadSurvey(conv, ui.ctxBody, surveyCtl), 200);
      }
      break;
  }
  // Caught up with the host: a message it acknowledged that its records do not show is sent again
  // under its op id (the host answers a replay), so an entry can never hold Stop up for ever.
  if (S.state && ev.seq >= S.state.seq) {
    let again = false;
    for (const e of outbox.forConv(conv)) {
      if (e.status === "acked" && !S.seen.has(e.id)) again = !!outbox.patch(e.op, { status: "queued" });
    }
    if (again) flush();
  }
  render();
}

function streamStatus(s) {
  if (s === "open") {
    setOnline(true);
    flush();
  } else {
    setOnline(false);
  }
}

// ---- the conversation list ----------------------------------------------------------------------

async function refreshList() {
  try {
    const res = await request("GET", "/api/conversations");
    S.convs = res.body.conversations || [];
    localStorage.setItem(CONVS_KEY, JSON.stringify(S.convs.map(({ id, title, updated, closed, state }) => ({ id, title, updated, closed, state }))));
    setOnline(true);
    return true;
  } catch (err) {
    if (err instanceof HTTPError && err.status === 401) authFailed();
    else setOnline(false);
    return false;
  } finally {
    render();
  }
}

async function createConversation() {
  // A conversation never sent anything is reused: clicks leave no empty conversations behind.
  const backend = chosenBackend();
  const empty = S.convs.find((c) => !prompted.has(c.id) && isEmpty(c, outbox.forConv(c.id).length > 0) && (!backend || (c.backend || S.defaultBackend) === backend));
  if (empty) {
    F.view = "list";
    select(empty.id);
    ui.input.focus();
    return;
  }
  // The op id is kept until the host answers, so a reload or a second press replays it.
  let op = localStorage.getItem(CREATE_KEY);
  if (!op) {
    op = newOp("conv");
    localStorage.setItem(CREATE_KEY, op);
  }
  ui.newConv.disabled = true;
  try {
    const body = { op_id: op };
    if (backend && S.caps.has("backends.v1")) body.backend = backend;
    const res = await request("POST", "/api/conversations", body);
    localStorage.removeItem(CREATE_KEY);
    const v = res.body.conversation;
    if (!S.convs.some((c) => c.id === v.id)) S.convs.unshift(v);
    select(v.id);
    ui.input.focus();
  } catch (err) {
    toast(`A new conversation could not be made: ${err.message}`);
  } finally {
    ui.newConv.disabled = false;
  }
}

// backendPicker offers the agents a new conversation may run in (capability backends.v1): rein's
// own loop, Claude Code, Codex — those the host offers, its default first chosen.
function backendPicker(caps) {
  const names = caps.backends || [];
  S.defaultBackend = caps.backend || "rein";
  if (!S.caps.has("backends.v1") || names.length < 2) {
    ui.backend.hidden = true;
    return;
  }
  const label = { rein: "rein", claude: "Claude Code", codex: "Codex" };
  ui.backend.replaceChildren(...names.map((n) => {
    const o = document.createElement("option");
    o.value = n;
    o.textContent = label[n] || n;
    return o;
  }));
  ui.backend.value = localStorage.getItem(BACKEND_KEY) || S.defaultBackend;
  if (!names.includes(ui.backend.value)) ui.backend.value = S.defaultBackend;
  ui.backend.hidden = false;
}

function chosenBackend() {
  return ui.backend.hidden ? "" : ui.backend.value;
}

function startRename() {
  if (!S.current) return;
  ui.renameInput.value = currentView().title || "";
  ui.title.hidden = true;
  ui.renameForm.hidden = false;
  ui.renameInput.focus();
  ui.renameInput.select();
}

function endRename() {
  ui.renameForm.hidden = true;
  ui.title.hidden = false;
  ui.renameBtn.focus();
}

async function rename() {
  const conv = S.current;
  const title = ui.renameInput.value.trim();
  endRename();
  if (!conv || title === (currentView().title || "")) return;
  const v = S.convs.find((c) => c.id === conv);
  if (v) v.title = title;
  render();
  try {
    await request("PATCH", `/api/conversations/${encodeURIComponent(conv)}`, { op_id: newOp("rename"), title });
  } catch (err) {
    toast(`The title could not be saved: ${err.message}`);
  }
  refreshList();
}

// ---- rendering ----------------------------------------------------------------------------------

function pendingCount(conv) {
  return outbox.forConv(conv).filter((e) => e.status === "queued" || (e.status === "acked" && !(conv === S.current && S.seen.has(e.id)))).length;
}

function render() {
  const conv = S.current;
  const v = currentView();
  const stoppable = conv ? canStop(S.state, pendingCount(conv), stopCap()) : false;
  const hasText = ui.input.value.trim() !== "" || atts.length > 0;
  ui.stop.hidden = !stoppable;
  ui.send.hidden = stoppable && !hasText;
  ui.send.disabled = !conv || v.closed;
  ui.input.disabled = !conv;
  ui.composer.dataset.stop = stoppable ? "1" : "0";
  ui.title.textContent = v.title || (conv ? "New conversation" : "rein");
  document.title = v.title ? `${v.title} · rein` : "rein";
  const isWorking = working(S.state);
  ui.status.replaceChildren(
    !S.online ? el("span", { class: "offline" }, "host unreachable") : S.state && S.state.hold ? el("span", { class: "held-tag" }, "held: waiting for a release") : isWorking ? el("span", { class: "working" }, el("span", { class: "spinner", "aria-hidden": "true" }), "working") : "",
  );
  renderModel();
  renderPending();
  renderApprovals();
  heldBox(ui.held, S.state, S.caps.has("release.v1"), S.releasing === conv, release);
  renderList();
  if (!ui.ctxPanel.hidden) setEditable(ui.ctxBody, surveyCtl.editable());
  if (S.timeline) S.timeline.follow();
}

// renderModel shows the conversation's model (the button opens the picker) and what it has spent.
function renderModel() {
  const t = S.tally;
  ui.modelBtn.hidden = !S.current || !t.model;
  ui.modelBtn.textContent = t.model || "model";
  ui.modelBtn.disabled = !S.caps.has("model.v1") || working(S.state);
  ui.usage.textContent = t.total.n ? describe(t.total) : "";
  ui.usage.title = t.asOf();
}

async function pickModel(model) {
  const conv = S.current;
  try {
    await request("POST", `/api/conversations/${encodeURIComponent(conv)}/model`, { op_id: newOp("model"), model });
    toast(`The next exchange runs on ${model}.`);
  } catch (err) {
    toast(`The model could not be switched: ${err.message}`);
  }
}

function bubble(text, attachments, state, label, ...actions) {
  return el(
    "div",
    { class: "msg user pending-msg", dataset: { state } },
    el("div", { class: "msg-note" }, label),
    el("div", { class: "prose plain" }, text),
    attachments && attachments.length ? el("div", { class: "chips" }, attachments.map((a) => el("span", { class: "chip" }, a.name))) : null,
    actions.length ? el("div", { class: "actions" }, actions) : null,
  );
}

// renderPending shows what is on its way: messages the host holds but has not delivered, and this
// browser's outbox. It is rebuilt only when what it shows changes, so focus on its buttons stays.
let pendingKey = "";
function renderPending() {
  const conv = S.current;
  const items = [];
  const shown = new Set();
  for (const s of (S.state && S.state.submissions) || []) {
    if (s.state !== "accepted") continue;
    shown.add(s.id);
    items.push({ key: "s:" + s.id, text: s.text, attachments: s.attachments, state: "accepted", label: s.queue ? "queued: goes in after this exchange" : "waiting: the agent takes it at its next step" });
  }
  for (const e of conv ? outbox.forConv(conv) : []) {
    if (e.id && shown.has(e.id)) continue;
    if (e.status === "queued") {
      items.push({ key: "o:" + e.op, text: e.text, attachments: e.attachments, state: "queued", label: S.online ? "sending…" : "not sent yet: kept on this device until the host answers" });
    } else if (e.status === "acked") {
      if (!S.seen.has(e.id)) items.push({ key: "o:" + e.op, text: e.text, attachments: e.attachments, state: "acked", label: "sent" });
    } else if (e.status === "retry") {
      const label = e.reason === "host_restarted" ? "The host restarted before this message was delivered." : `Not delivered: ${e.detail || e.reason}`;
      items.push({ key: "o:" + e.op, text: e.text, attachments: e.attachments, state: "retry", label, entry: e });
    }
  }
  const key = JSON.stringify(items.map((i) => [i.key, i.state, i.label]));
  if (key === pendingKey) return;
  pendingKey = key;
  ui.pending.replaceChildren(...items.map((i) => {
    const actions = i.entry ? [
      el("button", { type: "button", class: "btn small", onclick: () => retry(i.entry) }, "Retry"),
      el("button", { type: "button", class: "btn small quiet", onclick: () => giveBack(i.entry.op) }, "Edit"),
    ] : [];
    return bubble(i.text, i.attachments, i.state, i.label, ...actions);
  }));
}

// retry sends a message again under a new op id: the old one is settled on the host.
function retry(e) {
  outbox.add({ op: newOp("msg"), conv: e.conv, text: e.text, attachments: e.attachments || [], queue: !!e.queue, at: Date.now(), status: "queued" });
  if (e.op) outbox.remove(e.op);
  if (e.id) markRetried(e.id);
  render();
  flush();
}

function retried() {
  try {
    return new Set(JSON.parse(localStorage.getItem(RETRIED_KEY) || "[]"));
  } catch {
    return new Set();
  }
}

function markRetried(id) {
  const s = retried();
  s.add(id);
  localStorage.setItem(RETRIED_KEY, JSON.stringify([...s].slice(-200)));
}

// renderList shows the conversations. It is rebuilt only when what it shows changes, and keeps the
// focus on the conversation that had it.
let listKey = "";
function renderList() {
  const rows = shown(S.convs).map((c) => ({
    c,
    busy: !!(c.id === S.current ? working(S.state) : c.state && c.state.working),
    held: !!(c.id === S.current ? S.state && S.state.hold : c.state && c.state.hold),
    unsent: outbox.forConv(c.id).some((e) => e.status === "queued" || e.status === "retry"),
    current: c.id === S.current,
    when: ago(c.updated),
  }));
  const key = JSON.stringify([F.view, F.query, F.hits && [...F.hits]].concat(rows.map((r) => [r.c.id, r.c.title, r.c.closed, r.c.shelf, r.busy, r.held, r.unsent, r.current, r.when])));
  if (key === listKey) return;
  listKey = key;
  const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest(".conv");
  const focusID = focused ? focused.dataset.id : null;
  ui.list.replaceChildren(...rows.map(({ c, busy, held, unsent, current, when }) =>
    el(
      "li",
      {},
      el(
        "button",
        { type: "button", class: "conv" + (c.closed ? " closed" : ""), "aria-current": current ? "page" : null, dataset: { id: c.id, working: busy ? "1" : "0" }, onclick: () => select(c.id) },
        el("span", { class: "dot" + (busy ? " on" : ""), role: "img", "aria-label": busy ? "working" : "idle" }),
        el("span", { class: "conv-title" }, c.title || "New conversation"),
        el("span", { class: "conv-meta" }, held ? el("span", { class: "held-tag" }, "held · ") : "", unsent ? "unsent · " : "", when),
        snippetOf(c.id) ? el("span", { class: "conv-snippet" }, snippetOf(c.id)) : null,
      ),
      actions(c, (msg) => {
        toast(msg);
        refreshList();
      }),
    ),
  ));
  if (!rows.length) {
    const why = F.hits ? "No conversation holds that." : F.view === "archived" ? "Nothing archived." : F.view === "deleted" ? "Nothing deleted (deleted conversations are kept 7 days)." : "";
    if (why) ui.list.append(el("li", { class: "muted small conv-none" }, why));
  }
  if (focusID) {
    const again = [...ui.list.querySelectorAll(".conv")].find((b) => b.dataset.id === focusID);
    if (again) again.focus();
  }
}

// ---- status, banner, toast ----------------------------------------------------------------------

function setOnline(on) {
  if (on === S.online) return;
  S.online = on;
  clearTimeout(S.bannerTimer);
  if (on) {
    if (!S.authFailed) ui.banner.hidden = true;
    if (S.stream) S.stream.kick();
    flush();
  } else {
    S.bannerTimer = setTimeout(() => {
      if (S.online) return;
      ui.banner.textContent = "The host is not answering. What you send is kept on this device and goes out when it is back.";
      ui.banner.hidden = false;
    }, 800);
  }
  render();
}

function authFailed() {
  S.authFailed = true;
  ui.banner.textContent = "The host did not accept this page's token. Open the address `rein serve` printed (it ends in #token=…).";
  ui.banner.hidden = false;
}

let toastTimer = 0;
function toast(msg) {
  ui.toast.textContent = msg;
  ui.toast.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (ui.toast.hidden = true), 6000);
}

function openNav() {
  ui.app.classList.add("nav-open");
  ui.menu.setAttribute("aria-expanded", "true");
  const cur = ui.list.querySelector("[aria-current]") || ui.newConv;
  cur.focus();
}

function closeNav() {
  if (!ui.app.classList.contains("nav-open")) return;
  ui.app.classList.remove("nav-open");
  ui.menu.setAttribute("aria-expanded", "false");
}

function toggleContext() {
  const open = ui.ctxPanel.hidden;
  ui.ctxPanel.hidden = !open;
  ui.ctxBtn.setAttribute("aria-expanded", String(open));
  if (open && S.current) loadSurvey(S.current, ui.ctxBody, surveyCtl);
}

// ---- wiring -------------------------------------------------------------------------------------

function wire() {
  ui.composer.addEventListener("submit", (e) => {
    e.preventDefault();
    send();
  });
  ui.input.addEventListener("input", () => {
    saveDraft();
    autosize();
    render();
  });
  ui.input.addEventListener("compositionstart", () => (S.composing = true));
  ui.input.addEventListener("compositionend", () => {
    S.composing = false;
    if (S.held.length) {
      for (const h of S.held) {
        ui.input.value = joinText(ui.input.value, h.text);
        atts = atts.concat(h.attachments);
      }
      S.held = [];
      saveDraft();
      renderAtts();
      autosize();
      render();
    }
  });
  // Enter sends; the line break it would type is swallowed even when it arrives as its own input
  // event after the keydown (as synthesized keys do).
  let swallow = false;
  ui.input.addEventListener("keydown", (e) => {
    swallow = false;
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing && !S.composing) {
      e.preventDefault();
      swallow = true;
      send();
    }
  });
  ui.input.addEventListener("keyup", () => (swallow = false));
  ui.input.addEventListener("beforeinput", (e) => {
    if (swallow && (e.inputType === "insertLineBreak" || e.inputType === "insertParagraph" || (e.inputType === "insertText" && e.data === "\n"))) {
      e.preventDefault();
    }
    swallow = false;
  });
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || e.isComposing) return;
    if (!ui.renameForm.hidden) {
      endRename();
      return;
    }
    if (ui.app.classList.contains("nav-open")) {
      closeNav();
      ui.menu.focus();
      return;
    }
    if (S.current && canStop(S.state, pendingCount(S.current), stopCap())) {
      e.preventDefault();
      stop();
    } else if (!ui.ctxPanel.hidden) {
      toggleContext();
      ui.ctxBtn.focus();
    }
  });
  ui.stop.addEventListener("click", () => {
    stop();
    ui.input.focus();
  });
  ui.file.addEventListener("change", () => {
    attach([...ui.file.files]);
    ui.file.value = "";
  });
  ui.newConv.addEventListener("click", createConversation);
  ui.backend.addEventListener("change", () => localStorage.setItem(BACKEND_KEY, ui.backend.value));
  ui.renameBtn.addEventListener("click", startRename);
  ui.title.addEventListener("dblclick", startRename);
  ui.renameForm.addEventListener("submit", (e) => {
    e.preventDefault();
    rename();
  });
  ui.renameInput.addEventListener("blur", () => {
    if (!ui.renameForm.hidden) rename();
  });
  ui.menu.addEventListener("click", () => (ui.app.classList.contains("nav-open") ? closeNav() : openNav()));
  ui.scrim.addEventListener("click", closeNav);
  ui.ctxBtn.addEventListener("click", toggleContext);
  ui.ctxClose.addEventListener("click", () => {
    toggleContext();
    ui.ctxBtn.focus();
  });
  ui.ctxRefresh.addEventListener("click", () => S.current && loadSurvey(S.current, ui.ctxBody, surveyCtl));
  // Another tab of this browser changed the outbox or this draft.
  window.addEventListener("storage", (e) => {
    if (e.key === "rein.draft.v1." + S.current && !S.composing && document.activeElement !== ui.input) showDraft();
    else render();
  });
  window.addEventListener("online", () => {
    flush();
    if (S.stream) S.stream.kick();
  });
  setInterval(() => {
    if (document.visibilityState === "visible") refreshList();
  }, 3000);
}

async function boot() {
  const params = takeToken();
  if (!token()) {
    ui.banner.textContent = "This page needs the address `rein serve` printed, which ends in #token=…; open that address.";
    ui.banner.hidden = false;
    ui.input.disabled = true;
    document.documentElement.dataset.ready = "no-token";
    return;
  }
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("sw.js").then(
      () => navigator.serviceWorker.ready.then(() => (document.documentElement.dataset.offline = "ready")),
      () => {},
    );
  }
  S.timeline = new Timeline(ui.timeline, {
    held: (id) => !!outbox.find(S.current, id, null),
    retried: (id) => retried().has(id),
    answer: (id, allow, scope) => answer(id, allow, scope),
    retry: (sub) => {
      markRetried(sub.id);
      retry({ conv: S.current, text: sub.text, attachments: sub.attachments, queue: sub.queue });
    },
  });
  wire();
  ui.list.closest("nav").before(controls(() => {
    listKey = "";
    renderList();
  }));
  installKeys();
  ui.modelBtn.addEventListener("click", () => picker(S.tally.provider, S.tally.model, pickModel));
  request("GET", "/api/models").then((res) => {
    setCatalog(res.body);
    render();
  }, () => {});
  try {
    const body = (await request("GET", "/api/capabilities")).body;
    const caps = body.capabilities || [];
    S.caps = new Set(caps);
    localStorage.setItem(CAPS_KEY, JSON.stringify(caps));
    backendPicker(body);
  } catch (err) {
    if (err instanceof HTTPError && err.status === 401) {
      forgetToken();
      authFailed();
    }
  }
  const listed = await refreshList();
  const want = params.get("c") || sessionStorage.getItem(CURRENT_KEY);
  if (want && (S.convs.some((c) => c.id === want) || !listed)) select(want);
  else if (S.convs.length) select(S.convs[0].id);
  else if (listed) await createConversation();
  flush();
  document.documentElement.dataset.ready = "1";
}

boot();
