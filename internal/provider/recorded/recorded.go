// Package recorded finds the real provider exchanges kept outside the repository, in
// ../shared/fixtures/recorded beside the repository root, for replay tests of the hand-written
// clients: each exchange is the request body a client sent, the status the server answered and
// the body it answered with (a stream or JSON), byte for byte as recorded.
//
// A test that uses them skips when they are absent, except under CI (the CI variable set), where
// their absence is a failure: CI always runs beside them.
package recorded

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Exchange is one recorded request and its answer.
type Exchange struct {
	API     string // the folder: anthropic-messages, openai-chat, openai-responses, openrouter-chat
	Name    string
	Request []byte
	Status  int
	Body    []byte
	Stream  bool // Body is a server-sent-events stream (NAME.response.sse), not JSON
}

// Dir returns the recorded fixtures' folder, found as ../shared/fixtures/recorded from the
// repository root (the directory holding go.mod). It skips t when the folder is absent, or fails
// it when CI is set.
func Dir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			t.Fatalf("no go.mod above %s", wd)
		}
		root = parent
	}
	dir := filepath.Join(filepath.Dir(root), "shared", "fixtures", "recorded")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the recorded provider exchanges are missing (%v): CI runs beside ../shared", err)
		}
		t.Skipf("no recorded provider exchanges at %s (%v); they live in ../shared beside the repository", dir, err)
	}
	return dir
}

// Load returns every exchange recorded for api, in name order. It fails t on a folder with none
// or on an exchange missing a part.
func Load(t testing.TB, api string) []Exchange {
	t.Helper()
	dir := filepath.Join(Dir(t), api)
	reqs, err := filepath.Glob(filepath.Join(dir, "*.request.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) == 0 {
		t.Fatalf("no exchanges in %s", dir)
	}
	sort.Strings(reqs)
	var out []Exchange
	for _, rp := range reqs {
		name := strings.TrimSuffix(filepath.Base(rp), ".request.json")
		base := filepath.Join(dir, name)
		x := Exchange{API: api, Name: name, Request: read(t, rp)}
		st := strings.TrimSpace(string(read(t, base+".status")))
		if x.Status, err = strconv.Atoi(st); err != nil {
			t.Fatalf("%s.status: %q is not a status", base, st)
		}
		if b, err := os.ReadFile(base + ".response.sse"); err == nil {
			x.Body, x.Stream = b, true
		} else {
			x.Body = read(t, base+".response.json")
		}
		out = append(out, x)
	}
	return out
}

func read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("recorded exchange: %v", err)
	}
	return b
}
