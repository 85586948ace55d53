package provider

import (
	"io"
	"net/http"
	"testing"
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
