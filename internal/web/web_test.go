package web_test

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/web"
)

// TestFiles checks what is embedded: the page and every module it loads, all kept by the service
// worker for a reload while the host is down, and nothing fetched from anywhere else.
func TestFiles(t *testing.T) {
	files := web.Files()
	var names []string
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"index.html", "app.js", "style.css", "sw.js"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not embedded (have %v)", want, names)
		}
	}
	sw, err := fs.ReadFile(files, "sw.js")
	if err != nil {
		t.Fatal(err)
	}
	shell := regexp.MustCompile(`const SHELL = \[([^\]]*)\]`).FindSubmatch(sw)
	if shell == nil {
		t.Fatal("sw.js has no SHELL list")
	}
	for _, name := range names {
		if name == "sw.js" || name == "index.html" || notLoaded(name) {
			continue // the worker itself; the page is kept as "./"; licences are not loaded
		}
		if !strings.Contains(string(shell[1]), `"`+name+`"`) {
			t.Errorf("sw.js does not keep %s, so a reload while the host is down would miss it", name)
		}
	}
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/`)
	for _, name := range names {
		b, err := fs.ReadFile(files, name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, "vendor/") {
			// The vendored libraries' own text names their homes in comments and messages; what
			// keeps them from loading anything is the page's policy, checked below.
			continue
		}
		if m := external.Find(b); m != nil {
			t.Errorf("%s refers to %s: the web chat loads nothing from outside the host", name, m)
		}
	}
	page, err := fs.ReadFile(files, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `content="default-src 'self'; script-src 'self';`) {
		t.Errorf("index.html lacks the policy that keeps every load on the host")
	}
}

// notLoaded says whether an embedded file ships beside the page without the page loading it: the
// vendored libraries' licences and notes.
func notLoaded(name string) bool {
	base := name[strings.LastIndexByte(name, '/')+1:]
	return strings.HasPrefix(name, "vendor/") && (strings.HasPrefix(base, "LICENSE") || base == "README.md")
}
