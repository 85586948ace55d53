// usage.js: the conversation's model, and the tokens and cost of each exchange and of the whole
// conversation, from the records that carry them (an assistant message's usage, or a usage record
// for a request that left no message). Prices come from the host's catalog (GET /api/models,
// internal/catalog); a model without a price shows no cost, never a guess. The lookup mirrors
// catalog.Lookup (a browser test pins the two).

import { el } from "./markup.js";

// catalog is what GET /api/models answered, once per page.
let catalog = null;

export function setCatalog(c) {
  catalog = c;
}

export function getCatalog() {
  return catalog;
}

function isDate(s) {
  const d = s.replace(/-/g, "");
  return d.length === 8 && /^[0-9]+$/.test(d);
}

function find(models, id) {
  id = String(id || "").toLowerCase();
  let best = null;
  for (const m of models || []) {
    if (id === m.id) return m;
    if (id.startsWith(m.id + "-") && isDate(id.slice(m.id.length + 1)) && (!best || m.id.length > best.id.length)) best = m;
  }
  return best;
}

// lookup finds a model among the provider's known models, else among every provider's.
export function lookup(cat, provider, model) {
  if (!cat) return null;
  const own = find(cat.providers[provider], model);
  if (own) return own;
  for (const name of ["anthropic", "openai", "openai-responses", "openrouter", "sim"]) {
    const m = find(cat.providers[name], model);
    if (m) return m;
  }
  return null;
}

// cost is what usage cost on a model in US dollars, or null when its price is not known.
export function cost(cat, provider, model, u) {
  const m = lookup(cat, provider, model);
  if (!m || !m.price) return null;
  const p = m.price;
  return ((u.input || 0) * p.input + (u.output || 0) * p.output + (u.cache_read || 0) * p.cache_read + (u.cache_write || 0) * p.cache_write) / 1e6;
}

export function compact(n) {
  if (n < 1000) return String(n);
  if (n < 1e6) return (n / 1000).toFixed(1) + "k";
  return (n / 1e6).toFixed(1) + "M";
}

export function money(c) {
  return "$" + c.toFixed(c < 1 ? 3 : 2);
}

function blank() {
  return { input: 0, output: 0, cache_read: 0, cache_write: 0, cost: 0, priced: true, n: 0 };
}

function add(s, u, c) {
  s.input += u.input || 0;
  s.output += u.output || 0;
  s.cache_read += u.cache_read || 0;
  s.cache_write += u.cache_write || 0;
  s.n++;
  if (c === null) s.priced = false;
  else s.cost += c;
}

// describe is a usage in a few words: tokens in (the cache's share), out, and the cost.
export function describe(s) {
  const inTok = s.input + s.cache_read + s.cache_write;
  let t = `${compact(inTok)} in`;
  if (s.cache_read + s.cache_write > 0) t += ` (cache ${compact(s.cache_read)} read, ${compact(s.cache_write)} written)`;
  t += ` · ${compact(s.output)} out`;
  if (s.priced && s.n > 0) t += ` · ${money(s.cost)}`;
  return t;
}

// Tally follows one conversation's records.
export class Tally {
  constructor() {
    this.reset();
  }

  reset() {
    this.seq = 0;
    this.provider = "";
    this.model = "";
    this.exchange = blank();
    this.total = blank();
  }

  // take applies a record event (once: a replayed one is passed over); at the end of an exchange
  // that used tokens it returns the line to show under it.
  take(ev) {
    if (ev.seq <= this.seq) return null;
    this.seq = ev.seq;
    const kind = ev.kind;
    const p = ev.payload || {};
    switch (kind) {
      case "session_started":
      case "session_resumed":
      case "model_changed":
        this.provider = p.provider || this.provider;
        this.model = p.model || this.model;
        return null;
      case "user_prompt":
        this.exchange = blank();
        return null;
      case "assistant_message":
        if (p.model) this.model = p.model;
        this.count(p.usage);
        return null;
      case "usage":
        this.count(p.usage);
        return null;
      case "quiesced": {
        const x = this.exchange;
        this.exchange = blank();
        if (!x.n) return null;
        return el("div", { class: "exchange-usage muted small", title: this.asOf() }, describe(x));
      }
    }
    return null;
  }

  count(u) {
    if (!u || !(u.input || u.output || u.cache_read || u.cache_write)) return;
    const c = cost(catalog, this.provider, this.model, u);
    add(this.exchange, u, c);
    add(this.total, u, c);
  }

  asOf() {
    return catalog ? `prices as of ${catalog.prices_as_of} (rein's catalog)` : "";
  }
}

// picker is the model picker: the provider's known models, the one in use marked; choosing one
// calls pick(id). It is a dialog, closed with Escape or a click outside.
export function picker(provider, current, pick) {
  const models = (catalog && catalog.providers[provider]) || [];
  const close = () => dlg.remove();
  const dlg = el(
    "div",
    { class: "overlay", role: "dialog", "aria-modal": "true", "aria-labelledby": "model-picker-title", id: "model-picker" },
    el(
      "div",
      { class: "overlay-box" },
      el("div", { class: "panel-head" }, el("h2", { id: "model-picker-title" }, `Models of ${provider || "this provider"}`), el("button", { type: "button", class: "icon-btn", "aria-label": "Close", onclick: close }, "✕")),
      models.length
        ? el(
            "ul",
            { class: "model-list" },
            models.map((m) =>
              el(
                "li",
                {},
                el(
                  "button",
                  { type: "button", class: "model-choice", "aria-current": m.id === current ? "true" : null, dataset: { model: m.id }, onclick: () => { close(); if (m.id !== current) pick(m.id); } },
                  el("span", { class: "model-id" }, m.id),
                  el("span", { class: "muted small" }, ` ${compact(m.window)} context · ${m.price ? `$${m.price.input} in · $${m.price.output} out per Mtok` : "no price known"}${m.note ? " · " + m.note : ""}`),
                ),
              ),
            ),
          )
        : el("p", { class: "muted" }, "rein's catalog knows no models of this provider."),
      catalog ? el("p", { class: "muted small" }, `Prices as of ${catalog.prices_as_of}. The next exchange runs on the model chosen.`) : null,
    ),
  );
  dlg.addEventListener("click", (e) => {
    if (e.target === dlg) close();
  });
  dlg.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.stopPropagation();
      close();
    }
  });
  document.body.append(dlg);
  const first = dlg.querySelector('.model-choice[aria-current="true"]') || dlg.querySelector(".model-choice, button");
  if (first) first.focus();
  return dlg;
}
