package host_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/record"
)

// A host whose agents take checkpoints advertises rewind-files.v1; a rewind with files through the
// API withdraws the turns and puts the workspace back as the turn found it, answering what it
// wrote, removed and left alone; a repeat of the operation answers the same withdrawal without
// restoring again, and a host without checkpoints refuses one.
func TestRewindFilesThroughTheAPI(t *testing.T) {
	r := newRig(t, rigOptions{bash: true, checkpoints: true, script: `{"steps":[
		{"text":"Writing.","tool_calls":[{"name":"bash","arguments":{"command":"echo made > made.txt && echo changed > keep.txt && echo noise > x.log"}}]},
		{"text":"Done."}]}`})
	if err := os.WriteFile(filepath.Join(r.ws, "keep.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.ws, ".gitignore"), []byte("x.log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	caps, err := r.c.Capabilities(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if !caps.Has(api.CapFiles) {
		t.Fatalf("the host does not advertise %s: %v", api.CapFiles, caps.Capabilities)
	}
	id := r.create("files")
	r.send(id, "change the files")
	r.settle(id)
	if b, _ := os.ReadFile(filepath.Join(r.ws, "keep.txt")); string(b) != "changed\n" {
		t.Fatalf("the exchange did not change keep.txt: %q", b)
	}
	op := client.NewOp()
	res, err := r.c.RewindFiles(ctxT(t), id, op, 2)
	if err != nil {
		t.Fatal(err)
	}
	if res.Files == nil || !slices.Equal(res.Files.Changed, []string{"keep.txt"}) || !slices.Equal(res.Files.Removed, []string{"made.txt"}) || res.Files.Outside == "" {
		t.Fatalf("the rewind answered %+v", res.Files)
	}
	if !slices.Contains(res.Files.NotCovered, api.NotCovered{Path: "x.log", Reason: "ignored"}) {
		t.Errorf("the rewind does not name the ignored x.log: %+v", res.Files.NotCovered)
	}
	if b, _ := os.ReadFile(filepath.Join(r.ws, "keep.txt")); string(b) != "mine\n" {
		t.Errorf("keep.txt after the rewind: %q", b)
	}
	if _, err := os.Stat(filepath.Join(r.ws, "made.txt")); err == nil {
		t.Errorf("made.txt is still there after the rewind")
	}
	if b, _ := os.ReadFile(filepath.Join(r.ws, "x.log")); string(b) != "noise\n" {
		t.Errorf("the ignored x.log was touched: %q", b)
	}
	again, err := r.c.RewindFiles(ctxT(t), id, op, 2)
	if err != nil || !again.Replayed || again.Seq != res.Seq-1 {
		t.Errorf("the repeat answered %+v, %v (first at seq %d)", again, err, res.Seq)
	}
	n := 0
	for _, rec := range r.records(id) {
		if _, ok := rec.Body.(*record.FilesRestored); ok {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d files_restored records, want 1", n)
	}

	plain := newRig(t, rigOptions{})
	pid := plain.create("no checkpoints")
	_, err = plain.c.RewindFiles(ctxT(t), pid, client.NewOp(), 1)
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.Unsupported {
		t.Errorf("a host without checkpoints answered %v", err)
	}
}
