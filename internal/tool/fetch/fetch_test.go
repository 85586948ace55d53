package fetch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/tool"
	"github.com/reinhq/rein/internal/tool/fetch"
	"github.com/reinhq/rein/internal/tool/tooltest"
)

// site is a local test server: an HTML page, a redirect to it, a redirect loop, plain text, a
// large body, a binary body, a 404, and a page that never answers until its request ends.
func site(t *testing.T) (srv *httptest.Server, hung chan struct{}) {
	hung = make(chan struct{}, 8)
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>T</title><script>alert(1)</script><style>p{}</style></head>
<body><h1>Release notes</h1><p>Version <strong>2.0</strong> adds <a href="/docs">docs</a>.</p><ul><li>one</li><li>two</li></ul></body></html>`)
	})
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "plain <b>not html</b>")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("0123456789", 1000))
	})
	mux.HandleFunc("/png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no such page", http.StatusNotFound) })
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(200)
		fmt.Fprint(w, "first bytes")
		w.(http.Flusher).Flush()
		hung <- struct{}{}
		<-r.Context().Done()
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, hung
}

func run(t *testing.T, tl *fetch.Tool, ctx context.Context, url string) tool.Result {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"url": url})
	return tl.Run(ctx, tool.Call{ID: "f1", Name: fetch.Name, Args: args})
}

func TestConformance(t *testing.T) {
	srv, _ := site(t)
	tooltest.Conformance(t, fetch.New(fetch.Options{AllowPrivate: true}), `{"url":"`+srv.URL+`/page"}`, `{"url":"`+srv.URL+`/missing"}`)
	tooltest.Conformance(t, fetch.New(fetch.Options{}), `{"url":"`+srv.URL+`/page"}`)
}

func TestFetch(t *testing.T) {
	srv, _ := site(t)
	tl := fetch.New(fetch.Options{AllowPrivate: true, MaxBytes: 4096, MaxRedirects: 3})
	for _, tc := range []struct {
		path    string
		outcome record.Outcome
		want    []string
		not     []string
	}{
		{"/page", record.OK, []string{"URL: " + srv.URL + "/page\n", "Status: 200 OK", "# Release notes", "Version **2.0** adds [docs](" + srv.URL + "/docs).", "- one\n- two"}, []string{"alert(1)", "<h1>", "p{}"}},
		{"/old", record.OK, []string{"URL: " + srv.URL + "/page\n", "# Release notes"}, nil},
		{"/text", record.OK, []string{"plain <b>not html</b>"}, nil},
		{"/big", record.OK, []string{"only the first 4096 were read", strings.Repeat("0123456789", 409) + "012345"}, []string{strings.Repeat("0123456789", 410)}},
		{"/png", record.OK, []string{"not text", "image/png"}, []string{"PNG"}},
		{"/missing", record.Failed, []string{"Status: 404 Not Found", "no such page"}, nil},
		{"/loop", record.Failed, []string{"more than 3 redirects"}, nil},
		{"/file", record.Failed, []string{"not http or https"}, []string{"root:"}},
	} {
		r := run(t, tl, context.Background(), srv.URL+tc.path)
		if r.Outcome != tc.outcome {
			t.Errorf("%s: outcome %s, want %s\n%s", tc.path, r.Outcome, tc.outcome, r.Content)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.Content, w) {
				t.Errorf("%s: the answer lacks %q\n%s", tc.path, w, r.Content)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(r.Content, n) {
				t.Errorf("%s: the answer has %q\n%s", tc.path, n, r.Content)
			}
		}
	}
	for _, bad := range []string{"file:///etc/passwd", "ftp://example.com/", "gopher://x", "http://", "::"} {
		if r := run(t, tl, context.Background(), bad); r.Outcome != record.Failed {
			t.Errorf("%s: outcome %s, want error: %s", bad, r.Outcome, r.Content)
		}
	}
}

// TestRefusedPrivate: without AllowPrivate, loopback is refused by address — named directly, by
// a name that resolves to it, or on any port — as denied, saying how to allow it; nothing is sent.
func TestRefusedPrivate(t *testing.T) {
	srv, _ := site(t)
	hits := 0
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ })
	tl := fetch.New(fetch.Options{})
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, u := range []string{srv.URL + "/page", "http://localhost:" + port + "/page", "http://[::1]:" + port + "/", "http://0.0.0.0:" + port + "/", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1:1/"} {
		r := run(t, tl, context.Background(), u)
		if r.Outcome != record.Denied || !strings.Contains(r.Content, "web_fetch reaches only public addresses") || !strings.Contains(r.Content, "--web-fetch-private") {
			t.Errorf("%s: %s %q, want denied", u, r.Outcome, r.Content)
		}
	}
	if hits != 0 {
		t.Errorf("the server was reached %d times", hits)
	}
}

func TestOffline(t *testing.T) {
	srv, _ := site(t)
	r := run(t, fetch.New(fetch.Options{AllowPrivate: true, Offline: "the sandbox keeps this session off the network"}), context.Background(), srv.URL+"/page")
	if r.Outcome != record.Denied || !strings.Contains(r.Content, "off the network") {
		t.Errorf("%s %q", r.Outcome, r.Content)
	}
}

// TestStop: a Stop in the middle of a body ends the fetch at once, interrupted.
func TestStop(t *testing.T) {
	srv, hung := site(t)
	tl := fetch.New(fetch.Options{AllowPrivate: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tool.Result)
	go func() { done <- run(t, tl, ctx, srv.URL+"/hang") }()
	<-hung
	cancel()
	select {
	case r := <-done:
		if r.Outcome != record.Interrupted || !strings.Contains(r.Content, "was stopped") {
			t.Errorf("%s %q, want interrupted", r.Outcome, r.Content)
		}
	case <-time.After(tooltest.Promptly):
		t.Fatal("the fetch did not end on Stop")
	}
}

// TestTimeout: a page that never ends is cut at the time cap, timed_out.
func TestTimeout(t *testing.T) {
	srv, _ := site(t)
	r := run(t, fetch.New(fetch.Options{AllowPrivate: true, Timeout: 200 * time.Millisecond}), context.Background(), srv.URL+"/hang")
	if r.Outcome != record.TimedOut || !strings.Contains(r.Content, "took longer than 200ms") {
		t.Errorf("%s %q, want timed_out", r.Outcome, r.Content)
	}
}

// TestPolicy: a fetch reaches the network: refused in read-only mode, allowed in workspace mode,
// and rules match its URL.
func TestPolicy(t *testing.T) {
	srv, _ := site(t)
	reg, err := tool.NewRegistry(fetch.New(fetch.Options{AllowPrivate: true}))
	if err != nil {
		t.Fatal(err)
	}
	call := tool.Call{ID: "c", Name: fetch.Name, Args: json.RawMessage(`{"url":"` + srv.URL + `/page"}`)}
	r := (&tool.Runner{Tools: reg, Policy: tool.Policy{Mode: tool.ModeReadOnly}}).Run(context.Background(), call)
	if r.Outcome != record.Denied || !strings.Contains(r.Content, "read-only") || !strings.Contains(r.Content, "reaches the network") {
		t.Errorf("read-only: %s %q", r.Outcome, r.Content)
	}
	if r := (&tool.Runner{Tools: reg, Policy: tool.Policy{Mode: tool.ModeWorkspace}}).Run(context.Background(), call); r.Outcome != record.OK {
		t.Errorf("workspace: %s %q", r.Outcome, r.Content)
	}
	deny, err := tool.ParseRule("web_fetch(http://127.0.0.1*)")
	if err != nil {
		t.Fatal(err)
	}
	r = (&tool.Runner{Tools: reg, Policy: tool.Policy{Mode: tool.ModeFull, Deny: []tool.Rule{deny}}}).Run(context.Background(), call)
	if r.Outcome != record.Denied {
		t.Errorf("deny rule: %s %q", r.Outcome, r.Content)
	}
}
