package conformance

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/reinhq/rein/internal/provider/sim"
	"github.com/reinhq/rein/internal/record"
)

// TestConnectionKeptWarm checks that every client sends a conversation's successive requests over
// one connection: a streamed reply is read to its end, so the transport can reuse the connection
// rather than dial (and, over TLS, handshake) again for every turn.
func TestConnectionKeptWarm(t *testing.T) {
	const turns = 6
	for _, cl := range clients {
		t.Run(cl.name, func(t *testing.T) {
			var steps []sim.Step
			for range turns {
				steps = append(steps, sim.Step{Text: "Done with that step."})
			}
			s := sim.New(sim.Options{Script: &sim.Script{Steps: steps, Strict: true}})
			ts := httptest.NewUnstartedServer(s)
			var dialed atomic.Int32
			ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
				if st == http.StateNew {
					dialed.Add(1)
				}
			}
			ts.Start()
			defer ts.Close()
			m := cl.new(ts.URL)
			msgs := []record.Message{user("Please answer.")}
			for i := range turns {
				body := encode(t, m, request(msgs...))
				reply, err := m.Send(context.Background(), body, nil)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				msgs = next(msgs, reply)
			}
			if n := dialed.Load(); n != 1 {
				t.Errorf("%d requests took %d connections, want 1", turns, n)
			}
		})
	}
}

// TestReplyBeforeTheTerminator: a reply is handed on at its stream's last event, not when the
// server gets round to ending the response (a chunked body's terminator comes after its handler
// returns), and the connection still serves the next request. The server here holds each
// response open after its last event until the test lets it go, which it does only once Send has
// returned: a client that read to the body's end before returning would wait out its drain,
// drop the connection and dial again.
func TestReplyBeforeTheTerminator(t *testing.T) {
	for _, cl := range clients {
		t.Run(cl.name, func(t *testing.T) {
			s := sim.New(sim.Options{Script: &sim.Script{Steps: []sim.Step{{Text: "First."}, {Text: "Second."}}, Strict: true}})
			release := make(chan struct{}, 2)
			ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				s.ServeHTTP(w, r) // the whole stream, flushed
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}))
			var dialed atomic.Int32
			ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
				if st == http.StateNew {
					dialed.Add(1)
				}
			}
			ts.Start()
			defer ts.Close()
			m := cl.new(ts.URL)
			msgs := []record.Message{user("Please answer.")}
			for i := range 2 {
				reply, err := m.Send(context.Background(), encode(t, m, request(msgs...)), nil)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				release <- struct{}{} // only now may the server end the response
				msgs = next(msgs, reply)
			}
			if n := dialed.Load(); n != 1 {
				t.Errorf("2 requests took %d connections, want 1: the reply waited for the response's end", n)
			}
		})
	}
}
