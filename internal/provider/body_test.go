package provider

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestBodyFence: a Body reads its bytes whole, from any of its readers, until it is fenced; then
// every reader fails, the one under way and one got again alike. An empty body is no body.
func TestBodyFence(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, "http://rein.invalid", nil)
	b := NewBody([]byte("hello"))
	b.Attach(req)
	if req.ContentLength != 5 {
		t.Errorf("Content-Length %d, want 5", req.ContentLength)
	}
	first := make([]byte, 2)
	if n, err := req.Body.Read(first); n != 2 || err != nil {
		t.Fatalf("first read: %d %v", n, err)
	}
	again, _ := req.GetBody()
	if got, err := io.ReadAll(again); string(got) != "hello" || err != nil {
		t.Errorf("a reader got again read %q (%v), want the whole body", got, err)
	}
	b.Fence()
	for i, r := range []io.Reader{req.Body, again} {
		if n, err := r.Read(make([]byte, 8)); n != 0 || err == nil || err == io.EOF {
			t.Errorf("reader %d after the fence: %d bytes, %v", i, n, err)
		}
	}
	empty, _ := http.NewRequest(http.MethodPost, "http://rein.invalid", nil)
	NewBody(nil).Attach(empty)
	if empty.Body != http.NoBody || empty.ContentLength != 0 {
		t.Errorf("an empty body: %v, length %d", empty.Body, empty.ContentLength)
	}
}

// TestBodyRelease: Release waits until the transport closed what it was given, then fences; it
// does not wait for ever for a reader never closed, nor at all once ctx ended (a Stop).
func TestBodyRelease(t *testing.T) {
	req, _ := http.NewRequest(http.MethodPost, "http://rein.invalid", nil)
	b := NewBody([]byte("hello"))
	b.Attach(req)
	released := make(chan struct{})
	go func() {
		b.Release(context.Background())
		close(released)
	}()
	// The transport's last read, after the response: not yet fenced, since the body is open.
	if got, err := io.ReadAll(req.Body); string(got) != "hello" || err != nil {
		t.Fatalf("a read before the transport closed the body: %q %v", got, err)
	}
	select {
	case <-released:
		t.Fatal("Release returned while the transport still had the body open")
	default:
	}
	req.Body.Close()
	<-released
	if n, err := req.Body.Read(make([]byte, 8)); n != 0 || err == nil || err == io.EOF {
		t.Errorf("a read after Release: %d bytes, %v", n, err)
	}

	never := NewBody([]byte("x"))
	never.Attach(req)
	start := time.Now()
	never.Release(context.Background())
	if took := time.Since(start); took < releaseWait {
		t.Errorf("Release of a body never closed returned after %v, before its bound", took)
	}
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	now := NewBody([]byte("x"))
	now.Attach(req)
	now.Release(stopped) // returns at once: a test timeout is the failure
	if n, _ := req.Body.Read(make([]byte, 8)); n != 0 {
		t.Errorf("a read after a Release under an ended ctx got %d bytes", n)
	}
}
