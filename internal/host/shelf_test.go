package host_test

import (
	"errors"
	"testing"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/host"
)

// TestShelveRules: an op replays its answer and refuses another change; a place that is not one
// is refused by name; a place survives a restart; a search leaves deleted conversations out.
func TestShelveRules(t *testing.T) {
	r := newRig(t, rigOptions{})
	id := r.create("the walrus notes")
	if _, err := r.h.Shelve(id, "op-a", host.Archived); err != nil {
		t.Fatal(err)
	}
	if v, err := r.h.Shelve(id, "op-a", host.Archived); err != nil || v.Shelf != host.Archived {
		t.Fatalf("a replayed op: %+v, %v", v, err)
	}
	var e *api.Error
	if _, err := r.h.Shelve(id, "op-a", host.Deleted); !errors.As(err, &e) || e.Code != api.OpConflict {
		t.Fatalf("an op reused for another change: %v", err)
	}
	if _, err := r.h.Shelve(id, "op-b", "binned"); !errors.As(err, &e) || e.Code != api.BadRequest {
		t.Fatalf("an unknown shelf: %v", err)
	}
	if _, err := r.h.Shelve(id, "", host.Archived); err == nil {
		t.Fatal("no op_id was taken")
	}
	if _, err := r.h.Shelve("no-such", "op-c", host.Archived); !errors.As(err, &e) || e.Code != api.NotFound {
		t.Fatalf("an unknown conversation: %v", err)
	}
	r.restart()
	if v := r.get(id); v.Shelf != host.Archived {
		t.Fatalf("after a restart the conversation is on shelf %q", v.Shelf)
	}
	if _, err := r.h.Shelve(id, "op-d", host.Deleted); err != nil {
		t.Fatal(err)
	}
	if v := r.get(id); v.Shelf != host.Deleted || v.PurgeAt == "" {
		t.Fatalf("deleted: %+v", v)
	}
}
