// sw.js keeps the web chat's own files so the page opens even while the host is down: a reload
// then still shows the outbox and the drafts, and sends them when the host is back. Files are
// fetched from the network first (a newer host serves its newer page) and from the cache only
// when the host does not answer. The API is never touched.

const CACHE = "rein-web-v7";
const SHELL = ["./", "sender.js", "style.css", "app.js", "api.js", "outbox.js", "working.js", "timeline.js", "survey.js", "markup.js", "approvals.js", "live.js", "diffs.js", "live.css", "rich.js", "rich.css", "usage.js", "shelf.js", "keys.js", "layout.css", "vendor/marked.esm.js", "vendor/purify.es.js", "vendor/highlight.min.js", "files.js", "held.js", "plan.js"];

self.addEventListener("install", (e) => {
  e.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (e) => {
  e.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (e) => {
  const req = e.request;
  const url = new URL(req.url);
  if (req.method !== "GET" || url.origin !== self.location.origin || url.pathname.startsWith("/api/")) return;
  e.respondWith(
    fetch(req)
      .then((res) => {
        if (res.ok) {
          const copy = res.clone();
          caches.open(CACHE).then((c) => c.put(req, copy));
        }
        return res;
      })
      .catch(async () => {
        const hit = await caches.match(req, { ignoreSearch: true });
        if (hit) return hit;
        if (req.mode === "navigate") return (await caches.match("./")) || Response.error();
        return Response.error();
      }),
  );
});
