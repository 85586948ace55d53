// api.js talks to the host (docs/api.md): the bearer token, JSON requests and the per-conversation
// event stream with reconnect from the last seen record.

const TOKEN_KEY = "rein.token";

// takeToken reads #token=... from the URL fragment into sessionStorage and removes it from the
// visible URL (and from history), so the token is not left in the address bar or a screenshot.
// What else the fragment said (c=<conversation>) is returned.
export function takeToken() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  const tok = params.get("token");
  if (tok) {
    sessionStorage.setItem(TOKEN_KEY, tok);
    params.delete("token");
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + location.search + (rest ? "#" + rest : ""));
  }
  return params;
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

// HTTPError is an answer from the host with a 4xx/5xx status: code and message come from its JSON
// error body.
export class HTTPError extends Error {
  constructor(status, code, message) {
    super(message || `the host answered ${status}`);
    this.status = status;
    this.code = code || "";
  }
  // permanent is true when repeating the same request cannot succeed.
  get permanent() {
    return this.status >= 400 && this.status < 500 && this.status !== 401 && this.status !== 408 && this.status !== 429;
  }
}

// NetworkError is a request that got no answer: the host is down or unreachable.
export class NetworkError extends Error {}

// request sends one JSON request with the bearer token and returns {status, body}. It throws
// HTTPError for an error status and NetworkError when no answer came.
export async function request(method, path, body, { timeoutMs = 15000 } = {}) {
  const headers = { Authorization: "Bearer " + token() };
  const init = { method, headers, cache: "no-store", signal: AbortSignal.timeout(timeoutMs) };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (err) {
    throw new NetworkError(err && err.message ? err.message : String(err));
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    data = null;
  }
  if (!res.ok) {
    const e = (data && data.error) || {};
    throw new HTTPError(res.status, e.code, e.message);
  }
  return { status: res.status, body: data };
}

// newOp returns a fresh operation id. Every mutating request carries one; a retry reuses it.
export function newOp(prefix = "op") {
  if (crypto.randomUUID) return `${prefix}-${crypto.randomUUID()}`;
  const b = crypto.getRandomValues(new Uint8Array(16));
  return `${prefix}-${Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("")}`;
}

// Stream follows one conversation's events. It calls onRecord for each record (in seq order,
// never one it already delivered), onLive for live material, and onStatus with "open" or
// "down". It reconnects on its own from the last record seen, with a growing pause.
export class Stream {
  constructor(conv, after, { onRecord, onLive, onStatus }) {
    this.conv = conv;
    this.last = after;
    this.onRecord = onRecord;
    this.onLive = onLive;
    this.onStatus = onStatus;
    this.es = null;
    this.timer = 0;
    this.pause = 250;
    this.closed = false;
    this.connect();
  }

  connect() {
    if (this.closed) return;
    const q = new URLSearchParams({ access_token: token(), after: String(this.last) });
    const es = new EventSource(`/api/conversations/${encodeURIComponent(this.conv)}/events?${q}`);
    this.es = es;
    es.onopen = () => {
      this.pause = 250;
      this.onStatus("open");
    };
    es.addEventListener("record", (e) => {
      let ev;
      try {
        ev = JSON.parse(e.data);
      } catch {
        return;
      }
      if (typeof ev.seq !== "number" || ev.seq <= this.last) return; // already applied
      this.last = ev.seq;
      this.onRecord(ev);
    });
    es.addEventListener("live", (e) => {
      try {
        this.onLive(JSON.parse(e.data));
      } catch {
        /* a malformed live event is only lost material, never state */
      }
    });
    // The browser reconnects by itself after some failures and gives up after others (an error
    // status); reconnect ourselves either way, from the last record seen.
    es.onerror = () => {
      if (this.es !== es) return;
      es.close();
      this.es = null;
      this.onStatus("down");
      this.timer = setTimeout(() => this.connect(), this.pause);
      this.pause = Math.min(this.pause * 2, 3000);
    };
  }

  // kick reconnects at once if the stream is down (the host is back).
  kick() {
    if (this.es || this.closed) return;
    clearTimeout(this.timer);
    this.pause = 250;
    this.connect();
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.es) this.es.close();
    this.es = null;
  }
}
