package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/reinhq/rein/internal/host"
)

// The client is exercised end to end by internal/host's tests; these pin what it does on its own.

func TestErrorsCarryCodes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			t.Errorf("authorization %q", r.Header.Get("Authorization"))
		}
		switch r.URL.Path {
		case "/api/conversations/c-1":
			w.WriteHeader(404)
			w.Write([]byte(`{"error":{"code":"not_found","message":"no conversation c-1"}}`))
		default:
			w.WriteHeader(502)
			w.Write([]byte("bad gateway\n"))
		}
	}))
	defer srv.Close()
	c := New(srv.URL+"/", "tok", nil)
	_, err := c.Get(context.Background(), "c-1")
	if e, ok := err.(*Error); !ok || e.Status != 404 || e.Code != "not_found" || e.Message != "no conversation c-1" || Code(err) != "not_found" {
		t.Fatalf("got %#v", err)
	}
	_, err = c.List(context.Background())
	if Code(err) != "http_502" {
		t.Fatalf("a body that is not the API's error: %v", err)
	}
}

func TestApplyKeepsTheNewest(t *testing.T) {
	newer := Event{Seq: 9, State: host.State{Seq: 12, Working: false}}
	older := Event{Seq: 5, State: host.State{Seq: 7, Working: true}}
	live := Event{Live: &Live{Kind: "text"}}
	var st host.State
	for _, e := range []Event{older, newer, older, live, newer} {
		st = Apply(st, e)
	}
	if st.Seq != 12 || st.Working {
		t.Fatalf("applied %+v", st)
	}
}
