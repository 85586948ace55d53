package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/journal"
	"github.com/reinhq/rein/internal/record"
)

// A batch of eight ~250 KB reads and a 5 MB reply complete, replay (rein doctor), and resume: what
// no record line can hold is kept as a blob beside the record.
func TestLargeContentCompletesAndReplays(t *testing.T) {
	sb := newSandbox(t)
	var calls []map[string]any
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("log%d.txt", i)
		line := fmt.Sprintf("%d: a line of the log, long enough to matter\n", i)
		if err := os.WriteFile(filepath.Join(sb.ws, name), []byte(strings.Repeat(line, 250_000/len(line))), 0o644); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, map[string]any{"name": "read_file", "arguments": map[string]any{"path": name, "limit": 100000}})
	}
	reply := strings.Repeat("the whole answer, at length. ", 5<<20/29)
	script := writeScript(t, t.TempDir(),
		map[string]any{"tool_calls": calls},
		map[string]any{"text": reply, "chunks": 200},
		map[string]any{"text": "and a short one"},
	)
	res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "read the eight logs")...)
	if res.code != 0 {
		t.Fatalf("the exchange failed:\n%s", res)
	}
	if !strings.Contains(res.stdout, reply[:1000]) || len(res.stdout) < len(reply) {
		t.Fatalf("the 5 MB reply was not printed whole (%d bytes of stdout)", len(res.stdout))
	}
	paths := sb.records(t)
	if len(paths) != 1 {
		t.Fatalf("%d records", len(paths))
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lines(data) {
		if len(l) >= record.BlobOver {
			t.Fatalf("line %d is %d bytes", i+1, len(l))
		}
	}
	blobs, _ := os.ReadDir(filepath.Join(filepath.Dir(paths[0]), journal.BlobDir))
	if len(blobs) < 2 {
		t.Fatalf("%d blobs beside the record, want the batch's results and the reply", len(blobs))
	}
	if d := sb.rein(t, "doctor", paths[0]); d.code != 0 || !strings.Contains(d.stdout, "admissible") {
		t.Fatalf("doctor:\n%s", d)
	}
	if r := sb.rein(t, append(append([]string{"resume"}, simArgs(script)...), filepath.Base(filepath.Dir(paths[0])), "and now?")...); r.code != 0 {
		t.Fatalf("resume:\n%s", r)
	}
}

// A server whose real limit is smaller than the window rein was told: the refusal teaches rein the
// limit (said in one line), rein evicts on its own (said in one line), and the exchange replies.
func TestLearnsTheLimitFromARefusal(t *testing.T) {
	sb := newSandbox(t)
	big := "head -c 12000 /dev/zero | tr '\\0' x"
	reply := map[string]any{"text": "Done: three outputs read.", "context_limit": 8000}
	script := writeScript(t, t.TempDir(),
		map[string]any{"tool_calls": []map[string]any{bash(big)}},
		map[string]any{"tool_calls": []map[string]any{bash(big)}},
		map[string]any{"tool_calls": []map[string]any{bash(big)}},
		reply, reply,
	)
	res := sb.rein(t, append(append([]string{"run"}, simArgs(script)...), "--context-window", "128000", "print three large outputs")...)
	if res.code != 0 {
		t.Fatalf("the exchange did not reply:\n%s", res)
	}
	for _, want := range []string{"now keeps to its limit of 8000 tokens", "rein: evicted turns"} {
		if strings.Count(res.stderr, want) != 1 {
			t.Fatalf("stderr does not say %q once:\n%s", want, res)
		}
	}
	if !strings.Contains(res.stdout, "Done: three outputs read.") {
		t.Fatalf("no reply:\n%s", res)
	}
	if d := sb.rein(t, "doctor", sb.records(t)[0]); d.code != 0 {
		t.Fatalf("doctor:\n%s", d)
	}
}
