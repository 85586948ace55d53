package tui

import (
	"testing"
	"time"

	"github.com/reinhq/rein/internal/api"
)

// TestResumeAHeldConversationSaysWhoHoldsIt: rein chat --resume of a conversation another process
// is writing says so, naming that process and the way to it, instead of a stream that keeps ending.
func TestResumeAHeldConversationSaysWhoHoldsIt(t *testing.T) {
	f := newFake()
	held := &api.Holder{PID: 4242, Command: "rein serve --addr 127.0.0.1:8080", Since: time.Now()}
	f.convs = []api.View{{ID: "c-old", Title: "shared", State: api.State{Phase: "ready_for_user", Seq: 3}, Held: held}}
	d := newDriver(t, f, Options{Resume: "c-old"})
	d.waitScreen("held by pid 4242")
	d.waitScreen("rein chat --connect")
}
