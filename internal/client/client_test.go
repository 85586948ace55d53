package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/api"
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
		case "/api/conversations":
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(429)
			w.Write([]byte(`{"error":{"code":"rate_limited","message":"slow down"}}`))
		default:
			w.WriteHeader(502)
			w.Write([]byte("bad gateway\n"))
		}
	}))
	defer srv.Close()
	c := New(srv.URL+"/", "tok", nil)
	_, err := c.Get(context.Background(), "c-1")
	if e, ok := err.(*api.Error); !ok || e.Status != 404 || e.Code != "not_found" || e.Message != "no conversation c-1" || Code(err) != "not_found" {
		t.Fatalf("got %#v", err)
	}
	_, _, err = c.Create(context.Background(), NewOp(), "")
	if e, ok := err.(*api.Error); !ok || e.Status != 429 || e.Code != api.RateLimited || e.RetryAfter != 3*time.Second {
		t.Fatalf("a refusal with a Retry-After: %#v", err)
	}
	_, err = c.Rename(context.Background(), "c-2", NewOp(), "x")
	if Code(err) != "http_502" {
		t.Fatalf("a body that is not the API's error: %v", err)
	}
}

func TestApplyKeepsTheNewest(t *testing.T) {
	newer := api.Event{Seq: 9, State: api.State{Seq: 12, Working: false}}
	older := api.Event{Seq: 5, State: api.State{Seq: 7, Working: true}}
	live := api.Event{Live: &api.Live{Kind: "text"}}
	var st api.State
	for _, e := range []api.Event{older, newer, older, live, newer} {
		st = Apply(st, e)
	}
	if st.Seq != 12 || st.Working {
		t.Fatalf("applied %+v", st)
	}
}
