package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRunWebFetch: a real rein run whose model (the simulator) fetches a page from a local test
// server: allowed with --web-fetch-private, the page reaches the record as Markdown with its final
// URL; without it, the loopback address is refused (denied) and the server never hears of it; and
// under a sandbox with no network, web_fetch is refused with the way out.
func TestRunWebFetch(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/notes", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><h2>Meeting notes</h2><p>Ship on <em>Friday</em>.</p></body></html>`)
	}))
	defer srv.Close()
	script := writeScript(t, t.TempDir(),
		map[string]any{"text": "Fetching.", "tool_calls": []any{map[string]any{"name": "web_fetch", "arguments": map[string]any{"url": srv.URL + "/moved"}}}},
		map[string]any{"text": "Read it."},
	)

	sb := newSandbox(t)
	res := sb.rein(t, append(append([]string{"run", "--sandbox", "off", "--web-fetch-private"}, simArgs(script)...), "read the notes")...)
	if res.code != 0 {
		t.Fatalf("rein run: %s", res)
	}
	rec := readOnly(t, sb)
	for _, want := range []string{`"outcome":"ok"`, `URL: ` + srv.URL + `/notes`, `## Meeting notes\n\nShip on *Friday*.`} {
		if !strings.Contains(rec, want) {
			t.Errorf("the record lacks %q\n%s", want, rec)
		}
	}
	if hits.Load() != 2 {
		t.Errorf("the server was asked %d times, want 2 (the redirect and the page)", hits.Load())
	}

	hits.Store(0)
	sb = newSandbox(t)
	res = sb.rein(t, append(append([]string{"run", "--sandbox", "off"}, simArgs(script)...), "read the notes")...)
	if res.code != 0 {
		t.Fatalf("rein run: %s", res)
	}
	rec = readOnly(t, sb)
	if !strings.Contains(rec, `"outcome":"denied"`) || !strings.Contains(rec, "is a loopback address; web_fetch reaches only public addresses") {
		t.Errorf("the loopback fetch was not refused\n%s", rec)
	}
	if hits.Load() != 0 {
		t.Errorf("a refused fetch reached the server %d times", hits.Load())
	}

	sb = newSandbox(t)
	res = sb.rein(t, append(append([]string{"run", "--sandbox", "workspace-write", "--web-fetch-private"}, simArgs(script)...), "read the notes")...)
	if res.code != 0 {
		if strings.Contains(res.stderr, "sandbox") {
			t.Skipf("this machine has no sandbox to give: %s", res)
		}
		t.Fatalf("rein run: %s", res)
	}
	rec = readOnly(t, sb)
	if !strings.Contains(rec, `"outcome":"denied"`) || !strings.Contains(rec, "--allow-web-fetch") {
		t.Errorf("web_fetch under a sandbox with no network was not refused\n%s", rec)
	}
}

// readOnly returns the text of the sandbox's one record.
func readOnly(t *testing.T, sb *sandbox) string {
	t.Helper()
	paths := sb.records(t)
	if len(paths) != 1 {
		t.Fatalf("want one record, found %v", paths)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
