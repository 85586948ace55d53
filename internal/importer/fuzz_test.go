package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
	"github.com/reinhq/rein/internal/session"
)

// seed adds every fixture and a few broken shapes to a fuzz corpus.
func seed(f *testing.F, dir string) {
	paths, _ := filepath.Glob(filepath.Join("testdata", dir, "*.jsonl"))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{"", "{}", "not json\n", "{\"type\":\"user\"}\n", "{\"type\":\"response_item\",\"payload\":[]}\n", "\x00\xff\n"} {
		f.Add([]byte(s))
	}
}

// fuzzImport: whatever a file holds, reading never panics, and a conversation it reads always
// writes a session the fold accepts and leaves ready.
func fuzzImport(t *testing.T, data []byte, read func([]byte) (*Conversation, error)) {
	c, err := read(data)
	if err != nil {
		return
	}
	// In memory: the fuzzer judges the reading and the writing, not the disk.
	sess, err := session.Start("/fuzz", session.Options{FS: fsys.NewMem()}, record.SessionStarted{Provider: "sim", Model: sim.DefaultModel, ContextWindow: 200_000, Version: "fuzz", Source: &c.Origin})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := Write(sess, c, "fuzz"); err != nil {
		t.Fatalf("a conversation read leniently did not write: %v", err)
	}
	if st := sess.Snapshot(); !st.IsReady() || st.InFlight() {
		t.Fatalf("the written session is not ready: %v", st.Phase())
	}
}

func FuzzReadClaude(f *testing.F) {
	seed(f, "claude")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzImport(t, data, func(b []byte) (*Conversation, error) {
			return ReadClaude(bytes.NewReader(b), Options{WithHistory: true})
		})
	})
}

func FuzzReadCodex(f *testing.F) {
	seed(f, "codex")
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzImport(t, data, func(b []byte) (*Conversation, error) {
			return ReadCodex(bytes.NewReader(b), Options{WithHistory: true})
		})
	})
}
