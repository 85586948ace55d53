package provider

import (
	"context"
	"io"
	"sync"
	"time"
)

// The bounds of Drain: what is left of a response after its stream's last event is a chunked
// encoding's terminator, a few bytes that follow at once.
const (
	drainBytes = 64 << 10
	drainWait  = time.Second
)

// Drain reads what is left of a response body after a stream's last event, up to a small bound
// and for at most a second, so that the HTTP transport can put the connection back in its pool:
// an HTTP/1.1 connection whose body is closed before its end is dropped, and the next request
// would dial (and, over TLS, handshake) again. A server that keeps the stream open past its last
// event costs that second once; the body is then closed and the connection dropped.
func Drain(body io.ReadCloser) {
	t := time.AfterFunc(drainWait, func() { body.Close() })
	defer t.Stop()
	_, _ = io.CopyN(io.Discard, body, drainBytes)
}

// Drainer drains responses behind their readers: a client hands a response's body to Behind at
// its stream's last event and returns the reply at once, while the rest of the body — the chunked
// encoding's terminator, which a server writes after its last event — is read in the background
// and the connection goes back to the pool. The client's next request waits for that (Wait), so
// it finds the connection there rather than dialling another.
type Drainer struct {
	mu   sync.Mutex
	last chan struct{} // closed when the newest body handed over is drained and closed
}

// Behind drains body (as Drain) and closes it, in the background.
func (d *Drainer) Behind(body io.ReadCloser) {
	done := make(chan struct{})
	d.mu.Lock()
	d.last = done
	d.mu.Unlock()
	go func() {
		defer close(done)
		Drain(body)
		body.Close()
	}()
}

// Wait waits until the body last handed to Behind is drained (at most Drain's second), or ctx
// ends: a Stop does not wait for it.
func (d *Drainer) Wait(ctx context.Context) {
	d.mu.Lock()
	last := d.last
	d.mu.Unlock()
	if last == nil {
		return
	}
	select {
	case <-last:
	case <-ctx.Done():
	}
}
