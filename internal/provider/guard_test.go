package provider

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestStallGuard: a provider that stops sending — before its answer's headers, or in the middle
// of a stream — is given up on once it has sent nothing for the guard's idle time, with an error
// that says so and is a network failure (retried as one), never a Stop; a stream that keeps
// sending, however slowly, and its caller's own cancel, pass as they are.
func TestStallGuard(t *testing.T) {
	const idle = 300 * time.Millisecond
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/headers": // never answers
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/midstream": // one event, then nothing
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: one\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/slow": // an event every idle/3, six of them
			w.Header().Set("Content-Type", "text/event-stream")
			for range 6 {
				io.WriteString(w, "data: tick\n\n")
				w.(http.Flusher).Flush()
				time.Sleep(idle / 3)
			}
		}
	}))
	defer srv.Close()
	client := &http.Client{Transport: Guard(http.DefaultTransport, idle)}

	start := time.Now()
	_, err := client.Get(srv.URL + "/headers")
	var se *StallError
	if !errors.As(err, &se) || time.Since(start) > 5*idle {
		t.Fatalf("no headers: %v after %v, want a StallError after about %v", err, time.Since(start), idle)
	}
	if e := ClassifyTransport(err, false); e.Class != Network || !strings.Contains(e.Message, "sent nothing") {
		t.Errorf("a stall before the headers is classified %s: %q", e.Class, e.Message)
	}

	resp, err := client.Get(srv.URL + "/midstream")
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.As(err, &se) || string(b) != "data: one\n\n" || time.Since(start) > 5*idle {
		t.Fatalf("a stream that stalls: read %q, %v after %v; want the event, then a StallError", b, err, time.Since(start))
	}
	if e := ClassifyTransport(err, true); e.Class != Network {
		t.Errorf("a stall mid-stream is classified %s", e.Class)
	}

	resp, err = client.Get(srv.URL + "/slow")
	if err != nil {
		t.Fatal(err)
	}
	b, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || strings.Count(string(b), "tick") != 6 {
		t.Fatalf("a slow stream that never stalls: %d events, %v", strings.Count(string(b), "tick"), err)
	}
}

// TestOverlongAnswer: a server that streams without end — a local model in a loop that ignores
// its output limit — is read up to MaxAnswer and given up on with an error that says so, a
// network failure; it is not read into memory for ever.
func TestOverlongAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := []byte("data: " + strings.Repeat("loop ", 2000) + "\n\n")
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	for _, idle := range []time.Duration{0, time.Minute} {
		resp, err := (&http.Client{Transport: Guard(http.DefaultTransport, idle)}).Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		var oe *OverlongError
		if !errors.As(err, &oe) || n < MaxAnswer || n > MaxAnswer+64<<10 {
			t.Fatalf("idle %v: read %d bytes, %v; want about %d and an OverlongError", idle, n, err, MaxAnswer)
		}
		if e := ClassifyTransport(err, true); e.Class != Network || !strings.Contains(e.Message, "64 MiB") {
			t.Errorf("an endless answer is classified %s: %q", e.Class, e.Message)
		}
	}
}
