package provider

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Policy is the retry policy of DESIGN §11.3: exponential backoff with full jitter, the provider's
// retry-after honoured, bounded by attempts and by total time. The zero value uses the defaults.
type Policy struct {
	MaxAttempts int           // attempts in all, the first included; default 8
	Base        time.Duration // the first backoff ceiling; default 500ms
	Cap         time.Duration // no single wait is longer; default 30s
	MaxTotal    time.Duration // no retry is scheduled past this much time since the first attempt; default 5 min
	// Rand returns a number in [0, 1) for full jitter; nil uses math/rand/v2. Tests inject it.
	Rand func() float64
}

// Wait is one scheduled retry, reported before the sleep so the caller can record it as
// `retry scheduled` (DESIGN §3.6).
type Wait struct {
	Attempt int           // the attempt that failed, from 1
	Delay   time.Duration // how long the policy will sleep before the next attempt
	Err     *Error        // why
}

// Default policy values.
const (
	DefaultMaxAttempts = 8
	DefaultBase        = 500 * time.Millisecond
	DefaultCap         = 30 * time.Second
	DefaultMaxTotal    = 5 * time.Minute
)

func (p Policy) withDefaults() Policy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.Base <= 0 {
		p.Base = DefaultBase
	}
	if p.Cap <= 0 {
		p.Cap = DefaultCap
	}
	if p.MaxTotal <= 0 {
		p.MaxTotal = DefaultMaxTotal
	}
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
	return p
}

// Send sends body, the request m encoded (and the caller validated and recorded), under the
// policy: every attempt posts exactly these bytes. on receives live events (and a Restart event
// when a stream that had published output fails and is retried from scratch); wait is told of
// each retry before its sleep; either may be nil.
//
// Only retryable classes are retried, and never when the provider said x-should-retry: false;
// auth, invalid_request, context_length and cancelled never retry, whatever the header says. A
// cancelled ctx ends everything at once: during a stream it returns the partial reply with a
// Cancelled error, during a sleep an empty reply (the failed attempt's output was discarded) with
// a Cancelled error. Otherwise the last attempt's reply and error are returned.
func (p Policy) Send(ctx context.Context, m Model, body []byte, on func(Event), wait func(Wait)) (Reply, error) {
	p = p.withDefaults()
	start := time.Now()
	began := false
	publish := func(ev Event) {
		began = true
		if on != nil {
			on(ev)
		}
	}
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return Reply{}, ClassifyTransport(err, false)
		}
		began = false
		reply, err := m.Send(ctx, body, publish)
		if err == nil {
			return reply, nil
		}
		e := asError(err, began)
		if ctx.Err() != nil && e.Class != Cancelled {
			e = &Error{Class: Cancelled, Message: ctx.Err().Error(), Partial: e.Partial || began, Err: ctx.Err()}
		}
		if e.Class == Cancelled || !retryable(e) || attempt >= p.MaxAttempts {
			return reply, e
		}
		delay := p.delay(attempt, e)
		remaining := p.MaxTotal - time.Since(start)
		if remaining <= 0 {
			return reply, e
		}
		delay = min(delay, remaining)
		if began || e.Partial {
			if on != nil {
				on(Event{Type: Restart})
			}
		}
		if wait != nil {
			wait(Wait{Attempt: attempt, Delay: delay, Err: e})
		}
		if err := sleep(ctx, delay); err != nil {
			return Reply{}, &Error{Class: Cancelled, Message: "stopped while waiting to retry", Err: err}
		}
	}
}

// retryable reports whether e may be retried: a retryable class the provider did not veto.
func retryable(e *Error) bool {
	if !e.Class.Retryable() {
		return false
	}
	return e.ShouldRetry == nil || *e.ShouldRetry
}

// delay is the wait before the attempt after the given one: the provider's retry-after when it
// gave one, else full jitter over an exponential ceiling; never more than Cap.
func (p Policy) delay(attempt int, e *Error) time.Duration {
	if e.RetryAfter > 0 {
		return min(e.RetryAfter, p.Cap)
	}
	ceiling := p.Cap
	if attempt-1 < 32 {
		if c := p.Base << (attempt - 1); c > 0 && c < p.Cap {
			ceiling = c
		}
	}
	return time.Duration(p.Rand() * float64(ceiling))
}

// asError returns err as an *Error, classifying an unclassified one as a transport failure.
func asError(err error, began bool) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return ClassifyTransport(err, began)
}

// sleep waits d or until ctx ends, whichever is first.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
