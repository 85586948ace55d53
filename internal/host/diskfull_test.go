package host_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

// TestConversationAfterAFullDisk: a write of a conversation's record fails half-way, as on a full
// disk. The send that hit it is refused saying why; once there is room the next send is served
// from the record as it stands (the half-written line set aside, as at any restart) without a
// restart of the host and while a client still watches.
func TestConversationAfterAFullDisk(t *testing.T) {
	ffs := &faultFS{FS: fsys.OS{}}
	ffs.fail.Store("")
	r := newRig(t, rigOptions{fs: ffs, quiet: true})
	id := r.create("full disk")
	w := r.events(id, 0) // a client watching throughout
	r.send(id, "before the disk filled")
	r.settle(id)

	ffs.fail.Store("full")
	_, err := r.c.Send(ctxT(t), id, api.Message{Op: client.NewOp(), Text: "while the disk is full"})
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.SessionFailed || !strings.Contains(ae.Message, "no space left on device") {
		t.Fatalf("a send while the disk is full = %v; want session_failed saying the disk is full", err)
	}
	r.settle(id)
	// While the disk stays full the conversation can still be read; watching it anew says why
	// it cannot be opened (the half-written line cannot be set aside).
	if v := r.get(id); v.ID != id {
		t.Fatalf("the view while the disk is full: %+v", v)
	}
	conv, err := r.h.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	if sub, err := conv.Subscribe(0); err == nil || !strings.Contains(err.Error(), "no space left on device") {
		if sub != nil {
			sub.End()
		}
		t.Fatalf("a new watch while the disk is full = %v; want the reason it cannot be opened", err)
	}

	ffs.fail.Store("")
	r.send(id, "after there is room")
	r.settle(id)
	var prompts []string
	var last record.Kind
	for _, rec := range r.records(id) {
		if p, ok := rec.Body.(*record.UserPrompt); ok {
			prompts = append(prompts, p.Text)
		}
		last = rec.Body.Kind()
	}
	if got := strings.Join(prompts, " | "); got != "before the disk filled | after there is room" {
		t.Fatalf("the conversation's prompts after the disk had room again: %s", got)
	}
	prompted := false
	w.until("the reply to the send after there was room, seen by the client watching throughout", func(e api.Event) bool {
		if e.Kind == string(record.KindUserPrompt) && strings.Contains(string(e.Payload), "after there is room") {
			prompted = true
		}
		return prompted && e.Kind == string(record.KindAssistantMessage)
	})
	if v := r.get(id); v.State.Working {
		t.Fatalf("the conversation is still working: %+v (last record %s)", v.State, last)
	}
}
