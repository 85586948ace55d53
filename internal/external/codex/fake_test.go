package codex

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/external"
)

// The real Codex always ends an interrupted turn at once, so the deadlines behind a Stop — a
// program that accepts the interrupt and never ends the turn, one that never lets its turn be
// interrupted — are tested against this test binary playing an app-server that misbehaves so.
// REIN_FAKE_CODEX names the misbehaviour; TestMain runs it instead of the tests.

const fakeEnv = "REIN_FAKE_CODEX"

// fakeServer speaks enough of the app-server protocol to start a turn, then misbehaves as told:
//
//	hang    accept turn/interrupt and never end the turn
//	refuse  refuse every turn/interrupt and never start the turn
//	version say it is Codex 0.170.0
func fakeServer(how string) {
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	ua := "rein/0.169.0 (fake)"
	if how == "version" {
		ua = "rein/0.170.0 (fake)"
	}
	for in.Scan() {
		var m message
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		switch m.Method {
		case "initialize":
			out.Encode(reply(m.ID, map[string]string{"userAgent": ua}))
		case "thread/start", "thread/resume":
			out.Encode(reply(m.ID, map[string]any{"thread": map[string]string{"id": "thread-fake"}}))
		case "turn/start":
			out.Encode(reply(m.ID, map[string]any{"turn": map[string]string{"id": "turn-fake", "status": "inProgress"}}))
			if how == "hang" {
				out.Encode(message{Method: noteTurnStarted, Params: mustJSON(map[string]any{
					"threadId": "thread-fake", "turn": map[string]string{"id": "turn-fake", "status": "inProgress"}})})
			}
		case "turn/interrupt":
			if how == "refuse" {
				out.Encode(refuse(m.ID, -32600, "no active turn to interrupt"))
			} else {
				out.Encode(reply(m.ID, map[string]any{}))
			}
		}
	}
	// Input closed: a program that ignores it too.
	time.Sleep(time.Hour)
}

func fakeRig(t *testing.T, how string) (*backend, []string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b := New(Options{Path: exe}).(*backend)
	// The test binary run as "exe app-server": TestMain sees the variable first.
	env := append(os.Environ(), fakeEnv+"="+how)
	t.Cleanup(func() { b.Close() })
	b.onStart = func(pid int) { t.Cleanup(func() { killTree(pid) }) }
	return b, env
}

// TestStopDeadlines stops turns of app-servers that do not end them: the program is killed, tree
// and all, once InterruptGrace has passed since it accepted the interrupt, or StartWait since the
// Stop when it never lets the turn be interrupted; the turn ends interrupted either way.
func TestStopDeadlines(t *testing.T) {
	for _, c := range []struct {
		how    string
		waited time.Duration
	}{{"hang", external.InterruptGrace}, {"refuse", StartWait}} {
		t.Run(c.how, func(t *testing.T) {
			b, env := fakeRig(t, c.how)
			s := newSink()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan external.Result, 1)
			var stopAt time.Time
			go func() {
				s.await(t, turnWithin, "Started", func(s *sink) bool { return s.started > 0 })
				time.Sleep(100 * time.Millisecond) // turn/start is on its way
				stopAt = time.Now()
				cancel()
			}()
			go func() { done <- b.Turn(ctx, external.Turn{Prompt: "hi", Env: env}, s) }()
			var res external.Result
			select {
			case res = <-done:
			case <-time.After(turnWithin):
				t.Fatal("the turn did not return")
			}
			took := time.Since(stopAt)
			if res.Status != external.StatusInterrupted || res.Session != "thread-fake" {
				t.Fatalf("result %+v; want interrupted in thread-fake", res)
			}
			if took < c.waited {
				t.Errorf("killed %v after the Stop; want no sooner than %v", took, c.waited)
			}
			t.Logf("killed %v after the Stop", took)
			gone(t, nil)
		})
	}
}

// TestTurnRefusesVersion runs a program that says it is a Codex rein does not know.
func TestTurnRefusesVersion(t *testing.T) {
	b, env := fakeRig(t, "version")
	res := b.Turn(context.Background(), external.Turn{Prompt: "hi", Env: env}, newSink())
	if res.Status != external.StatusFailed || res.Err == nil || !strings.Contains(res.Err.Error(), "0.170.0") {
		t.Fatalf("result %+v; want failed, naming the version", res)
	}
	gone(t, nil)
}

// TestUnknownMode refuses a permission mode rein does not have, starting nothing.
func TestUnknownMode(t *testing.T) {
	res := New(Options{Path: "/nonexistent"}).Turn(context.Background(), external.Turn{Prompt: "hi", Mode: "yolo"}, newSink())
	if res.Status != external.StatusFailed || res.Err == nil || !strings.Contains(res.Err.Error(), `"yolo"`) {
		t.Fatalf("result %+v; want the mode refused by name", res)
	}
}
