// Package web is rein's web chat (DESIGN §12.6): static files embedded in the binary and served by
// the host at /. It needs no build step and loads nothing from elsewhere: plain HTML, CSS and
// JavaScript modules that talk to the host API (docs/api.md), and three vendored libraries.
//
// The modules, in static/:
//
//   - app.js: the page — conversation list, timeline, composer, Stop, wiring
//   - api.js: the token (from #token=, kept in sessionStorage), requests, the event stream that
//     reconnects from the last record seen
//   - outbox.js: the outbox and the drafts in local storage, and the exactly-once give-back
//   - working.js: the working rule, the same as api.Working (a browser test pins the two)
//   - timeline.js, markup.js, survey.js: rendering records, live material, residues, the survey
//     and the person's context edits (evict, rewind, clear, fork)
//   - approvals.js: a tool call waiting for the person's approval: the command as it would run or
//     the diff it would make, and Allow once, Allow for this conversation (with the rules it
//     grants) and Deny
//   - live.js: a running call's output as it comes, in its card, until its result replaces it
//   - diffs.js: file changes as coloured unified diffs, folded when long (live.css styles these)
//   - rich.js, rich.css: a reply's markdown (tables, lists, links opened safely, highlighted code)
//     and the copy buttons, by the vendored marked, DOMPurify and highlight.js (vendor/README.md
//     says which versions, their licences, and why they render in the page)
//   - files.js: what a rewind with the files too (rewind-files.v1) did to the workspace
//   - held.js: a conversation parked on a held tool call, with its reason and Release
//   - plan.js: the agent's plan, followed from its todo calls as record.Plan follows them
//   - sw.js: a service worker that keeps the page's own files, so a reload while the host is down
//     still opens the page with its outbox
//
// The browser tests (browser_test.go) drive chromium against a real host and the provider
// simulator; they skip when no chromium is found ($REIN_CHROMIUM, Debian's, or macOS's Chromium or
// Google Chrome).
package web

import (
	"embed"
	"io/fs"
)

//go:embed static
var static embed.FS

// Files returns the web chat's files, rooted at the directory that holds index.html.
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return sub
}
