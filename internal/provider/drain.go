package provider

import (
	"io"
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
