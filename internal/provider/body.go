package provider

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// Body is a request body for Go's HTTP transport that is read only until Send returns. The
// transport may go on reading a request's body after the response arrived (a server that
// answered before reading all of it), on a goroutine of its own; once the body is fenced every
// read fails, so the bytes are the caller's again the moment Send returns (BodyReleaser).
type Body struct {
	mu     sync.Mutex
	data   []byte
	fenced bool
	open   int           // readers handed out and not yet closed
	shut   chan struct{} // closed when open falls to 0; nil while none is open
}

// releaseWait bounds how long Release waits for the transport to close the body it was given.
const releaseWait = 100 * time.Millisecond

// errFenced is what a fenced Body's readers return: the request is over.
var errFenced = errors.New("the request body was read after its request ended")

// NewBody returns a Body of data, which it does not copy.
func NewBody(data []byte) *Body { return &Body{data: data} }

// Attach makes b req's body, with its length, and the body the transport reads again when it
// retries the request on a new connection.
func (b *Body) Attach(req *http.Request) {
	if len(b.data) == 0 { // a reader with a length of 0 would be a body of unknown length
		req.Body, req.ContentLength = http.NoBody, 0
		req.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
		return
	}
	req.Body = b.reader()
	req.ContentLength = int64(len(b.data))
	req.GetBody = func() (io.ReadCloser, error) { return b.reader(), nil }
}

// Fence ends every read of b: those to come fail, and one under way has returned.
func (b *Body) Fence() {
	b.mu.Lock()
	b.fenced = true
	b.mu.Unlock()
}

// Release is what Send does as it returns: it waits, for a moment at most, until the transport
// has closed every reader it was given — it reads a body once more after its last byte, to see
// that nothing follows, on a goroutine of its own that may run after the response's last event
// was read; a read fenced there fails the request's write, and the connection is not kept — and
// then fences b. A ctx that ended (a Stop) fences at once.
func (b *Body) Release(ctx context.Context) {
	b.mu.Lock()
	shut := b.shut
	b.mu.Unlock()
	if shut != nil && ctx.Err() == nil {
		t := time.NewTimer(releaseWait)
		select {
		case <-shut:
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	b.Fence()
}

func (b *Body) reader() io.ReadCloser {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open == 0 {
		b.shut = make(chan struct{})
	}
	b.open++
	return &bodyReader{b: b}
}

type bodyReader struct {
	b      *Body
	off    int
	closed bool
}

func (r *bodyReader) Read(p []byte) (int, error) {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if r.b.fenced {
		return 0, errFenced
	}
	if r.off >= len(r.b.data) {
		return 0, io.EOF
	}
	n := copy(p, r.b.data[r.off:])
	r.off += n
	return n, nil
}

func (r *bodyReader) Close() error {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if !r.closed {
		r.closed = true
		if r.b.open--; r.b.open == 0 {
			close(r.b.shut)
		}
	}
	return nil
}

// BodyReleaser is the optional interface of a Model whose Send reads body only until it returns
// (Body): its caller may then write over the bytes, to build the next request in them (Memo's
// Recycle). A Model that keeps the bytes, as a test double that records what it was sent may,
// does not implement it.
type BodyReleaser interface {
	ReleasesBody()
}
