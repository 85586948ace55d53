package host_test

import (
	"errors"
	"testing"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/client"
	"github.com/reinhq/rein/internal/record"
)

// A send retried after its message was answered replays it, and the same op with a different
// message is refused, before and after a restart — though the conversation's state no longer keeps
// the answered message's text and attachments, only their key.
func TestResendAfterAnswer(t *testing.T) {
	r := newRig(t, rigOptions{script: steps(`{"text":"read it"}`)})
	id := r.create("resend")
	w := r.events(id, 0)
	att := []record.Attachment{{Name: "notes.txt", MediaType: "text/plain", Text: "attached words"}}
	msg := api.Message{Op: client.NewOp(), Text: "read the notes", Attachments: att}
	sent, err := r.c.Send(ctxT(t), id, msg)
	if err != nil {
		t.Fatal(err)
	}
	w.idle()
	check := func(when string) {
		t.Helper()
		again, err := r.c.Send(ctxT(t), id, msg)
		if err != nil || !again.Replayed || again.MessageID != sent.MessageID || again.State != api.Answered {
			t.Fatalf("%s: the same send again: %+v (%v), want message %s replayed, answered", when, again, err, sent.MessageID)
		}
		for what, m := range map[string]api.Message{
			"other text":       {Op: msg.Op, Text: "read the other notes", Attachments: att},
			"other attachment": {Op: msg.Op, Text: msg.Text, Attachments: []record.Attachment{{Name: "notes.txt", MediaType: "text/plain", Text: "other words"}}},
			"no attachment":    {Op: msg.Op, Text: msg.Text},
			"queued this time": {Op: msg.Op, Text: msg.Text, Attachments: att, Queue: true},
		} {
			_, err := r.c.Send(ctxT(t), id, m)
			var e *api.Error
			if !errors.As(err, &e) || e.Code != api.OpConflict {
				t.Errorf("%s: the same op with %s: %v, want %s", when, what, err, api.OpConflict)
			}
		}
	}
	check("after the answer")
	r.restart()
	check("after a restart")
}
