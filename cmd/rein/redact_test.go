package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

const (
	testSecret = "zq9-unit-test-secret-abc"
	hostSecret = "zq9-another-secret-xyz"
)

// The environment's secrets are held and taken out of the environment, still readable through
// environ; credentials in a proxy URL are held; short values are not.
func TestTakeSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", testSecret)
	t.Setenv("OPENROUTER_API_KEY", "ollama")
	t.Setenv("HTTPS_PROXY", "http://proxyuser:proxy-password-123@proxy:3128")
	takeSecrets()
	if v, ok := os.LookupEnv("OPENAI_API_KEY"); ok {
		t.Errorf("OPENAI_API_KEY is still in the environment: %q", v)
	}
	if environ("OPENAI_API_KEY") != testSecret || environ("OPENROUTER_API_KEY") != "ollama" {
		t.Errorf("environ lost the keys")
	}
	got := secrets.Redact("a " + testSecret + " b ollama c proxy-password-123 d proxyuser")
	if want := "a [REDACTED:OPENAI_API_KEY] b ollama c [REDACTED:HTTPS_PROXY password] d [REDACTED:HTTPS_PROXY user]"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestRedactingWriter(t *testing.T) {
	secrets.Add("K", hostSecret)
	var b strings.Builder
	w := redactingWriter{&b}
	if n, err := fmt.Fprintf(w, "key=%s\n", hostSecret); err != nil || n != len("key=")+len(hostSecret)+1 {
		t.Errorf("Write answered %d, %v", n, err)
	}
	if b.String() != "key=[REDACTED:K]\n" {
		t.Errorf("wrote %q", b.String())
	}
	if unredacted(w) != io.Writer(&b) || unredacted(&b) != io.Writer(&b) {
		t.Error("unredacted does not unwrap")
	}
}

// Bodies the host writes are redacted, whatever Content-Length the handler set, and an event
// stream still flushes event by event.
func TestRedactResponses(t *testing.T) {
	secrets.Add("K", hostSecret)
	next := make(chan struct{})
	srv := httptest.NewServer(redactResponses(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	})))
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
