package redact

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const hostSecret = "zq9-another-secret-xyz"

// A Writer redacts each write and answers the length given; Unwrap finds what it wraps.
func TestWriter(t *testing.T) {
	var secrets Secrets
	secrets.Add("K", hostSecret)
	var b strings.Builder
	var w io.Writer = Writer{W: &b, Secrets: &secrets}
	if n, err := fmt.Fprintf(w, "key=%s\n", hostSecret); err != nil || n != len("key=")+len(hostSecret)+1 {
		t.Errorf("Write answered %d, %v", n, err)
	}
	if b.String() != "key=[REDACTED:K]\n" {
		t.Errorf("wrote %q", b.String())
	}
	if Unwrap(w) != io.Writer(&b) || Unwrap(&b) != io.Writer(&b) {
		t.Error("Unwrap does not unwrap")
	}
}

// Bodies the host writes are redacted, whatever Content-Length the handler set, and an event
// stream still flushes event by event.
func TestHandler(t *testing.T) {
	var secrets Secrets
	secrets.Add("K", hostSecret)
	next := make(chan struct{})
	srv := httptest.NewServer(Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/events" {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", hostSecret)
			w.(http.Flusher).Flush()
			<-next
			fmt.Fprintf(w, "data: second\n\n")
			return
		}
		body := `{"error":{"message":"bad key ` + hostSecret + `"}}`
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, body)
	}), &secrets))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 400 || string(b) != `{"error":{"message":"bad key [REDACTED:K]"}}` {
		t.Errorf("%d %q %v", resp.StatusCode, b, err)
	}
	resp, err = http.Get(srv.URL + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n') // arrives before the handler goes on: it was flushed
	if err != nil || line != "data: [REDACTED:K]\n" {
		t.Errorf("first event %q, %v", line, err)
	}
	close(next)
	rest, _ := io.ReadAll(r)
	if string(rest) != "\ndata: second\n\n" {
		t.Errorf("rest %q", rest)
	}
}
