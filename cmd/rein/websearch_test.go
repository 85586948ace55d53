package main

import (
	"path/filepath"

	"github.com/reinhq/rein/internal/record"
	"strings"
	"testing"
)

// TestRunWebSearch: rein run --web-search against the simulator (Anthropic's wire) offers the
// search tool, prints the search the provider made, records its blocks, and a resume of the
// session sends them back in a request the simulator's validator accepts. A provider with no web
// search of its own refuses the flag.
func TestRunWebSearch(t *testing.T) {
	sb := newSandbox(t)
	script := writeScript(t, t.TempDir(),
		map[string]any{"web_search": map[string]any{"query": "rein agent harness", "results": []any{map[string]any{"url": "https://example.org/rein", "title": "rein"}}}, "text": "It is an agent harness."},
		map[string]any{"text": "Glad to help."},
	)
	res := sb.rein(t, append(append([]string{"run", "--web-search"}, simArgs(script)...), "what is rein?")...)
	if res.code != 0 || !strings.Contains(res.stdout, "⌕ searched the web for rein agent harness\n⌕ found 1 pages: https://example.org/rein\n") {
		t.Fatalf("rein run --web-search: %s", res)
	}
	rec := readOnly(t, sb)
	if strings.Count(rec, `"type":"server_tool","text":`) != 2 || !strings.Contains(rec, `"wire":"anthropic"`) {
		t.Errorf("the record lacks the server tool parts\n%s", rec)
	}
	id := strings.TrimSuffix(filepath.Base(filepath.Dir(sb.records(t)[0])), "/")
	// The resume keeps the search without the flag (the session was started with it), and a
	// flag that turns it off says so; both are recorded.
	res = sb.rein(t, append(append([]string{"resume", id}, simArgs(script)...), "thanks")...)
	if res.code != 0 {
		t.Fatalf("rein resume: %s", res)
	}
	res = sb.rein(t, append(append([]string{"resume", id, "--web-search=false"}, simArgs(script)...), "no more searching")...)
	if res.code != 0 || !strings.Contains(res.stderr, "web search changes from on to off (recorded)") {
		t.Fatalf("rein resume --web-search=false: %s", res)
	}
	recs := recordOf(t, sb)
	if st := payloads[*record.SessionStarted](recs); len(st) != 1 || !st[0].WebSearch {
		t.Errorf("session_started %+v, want web_search", st)
	}
	if rs := payloads[*record.SessionResumed](recs); len(rs) != 2 || !rs[0].WebSearch || rs[1].WebSearch {
		t.Errorf("session_resumed %+v, want web search kept, then off", rs)
	}

	res = sb.rein(t, "run", "--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "--web-search", "hello")
	if res.code != exitUsage || !strings.Contains(res.stderr, "has no web search tool of its own") {
		t.Errorf("--web-search on Chat: %s", res)
	}
}
