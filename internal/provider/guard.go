package provider

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// DefaultStallAfter is how long a provider may send nothing — no answer's headers, no byte of a
// stream — before rein gives up on the request and retries it: longer than any pause of a
// provider that is working (they send pings while a model thinks), far shorter than for ever.
const DefaultStallAfter = 5 * time.Minute

// StallError is a request given up on because the provider sent nothing for After: a connection
// that stalled, a proxy or a local server that hung. It is a network failure, retried as one.
type StallError struct {
	After   time.Duration
	Headers bool // it stalled before the answer's headers
}

func (e *StallError) Error() string {
	if e.Headers {
		return fmt.Sprintf("the provider sent nothing for %s after the request (no answer): given up on", e.After)
	}
	return fmt.Sprintf("the provider sent nothing for %s in the middle of its answer: given up on", e.After)
}

// MaxAnswer bounds what rein reads of one answer: a reply at its longest (its output limit, its
// searches' results, its signatures) is a few megabytes; a stream past this is a server in a loop.
const MaxAnswer = 64 << 20

// OverlongError is an answer given up on because it passed MaxAnswer bytes. It is a network
// failure: the request is retried, as many times as any.
type OverlongError struct{ Limit int64 }

func (e *OverlongError) Error() string {
	return fmt.Sprintf("the provider's answer passed %d MiB, longer than any reply: given up on", e.Limit>>20)
}

// Guard returns a transport that gives up on a request through rt when nothing arrives for idle
// (0: never) — while waiting for the answer's headers, and between any two reads of its body —
// with a *StallError, and on an answer longer than MaxAnswer with an *OverlongError. A request
// whose own context ends is left to that.
func Guard(rt http.RoundTripper, idle time.Duration) http.RoundTripper {
	return &guard{rt: rt, idle: idle}
}

type guard struct {
	rt   http.RoundTripper
	idle time.Duration
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if g.idle <= 0 {
		resp, err := g.rt.RoundTrip(req)
		if err == nil {
			resp.Body = &guardedBody{rc: resp.Body, limit: MaxAnswer}
		}
		return resp, err
	}
	ctx, cancel := context.WithCancel(req.Context())
	timer := time.AfterFunc(g.idle, cancel)
	resp, err := g.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		stalled := !timer.Stop() && req.Context().Err() == nil
		cancel()
		if stalled {
			return nil, &StallError{After: g.idle, Headers: true}
		}
		return nil, err
	}
	if !timer.Stop() && req.Context().Err() == nil {
		// The headers came just as the guard gave up: the body is cancelled already.
		resp.Body.Close()
		cancel()
		return nil, &StallError{After: g.idle, Headers: true}
	}
	b := &guardedBody{rc: resp.Body, limit: MaxAnswer, idle: g.idle, cancel: cancel, caller: req.Context()}
	b.timer = time.AfterFunc(g.idle, b.stall)
	resp.Body = b
	return resp, nil
}

// guardedBody is an answer's body that cancels its request when a read waits idle with nothing
// (with a timer), and ends it past limit bytes.
type guardedBody struct {
	rc     io.ReadCloser
	limit  int64
	read   int64
	idle   time.Duration
	cancel context.CancelFunc
	caller context.Context
	timer  *time.Timer

	mu      sync.Mutex
	stalled bool
}

func (b *guardedBody) stall() {
	b.mu.Lock()
	b.stalled = b.caller.Err() == nil
	b.mu.Unlock()
	b.cancel()
}

func (b *guardedBody) Read(p []byte) (int, error) {
	if b.read >= b.limit {
		return 0, &OverlongError{Limit: b.limit}
	}
	n, err := b.rc.Read(p)
	b.read += int64(n)
	if n > 0 && b.timer != nil {
		b.timer.Reset(b.idle)
	}
	if err != nil && err != io.EOF {
		b.mu.Lock()
		stalled := b.stalled
		b.mu.Unlock()
		if stalled {
			return n, &StallError{After: b.idle}
		}
	}
	return n, err
}

func (b *guardedBody) Close() error {
	if b.timer != nil {
		b.timer.Stop()
	}
	err := b.rc.Close()
	if b.cancel != nil {
		b.cancel()
	}
	return err
}
