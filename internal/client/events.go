package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/reinhq/rein/internal/api"
	"github.com/reinhq/rein/internal/provider"
)

// Stream is a subscription to a conversation's events.
type Stream struct {
	// C delivers the events. Records arrive exactly once and in order across reconnections; live
	// events sent while the stream was reconnecting are lost, as they are not recorded. C closes
	// when the context ends or the host refuses the subscription; Err then says why.
	C <-chan api.Event

	mu  sync.Mutex
	err error
}

// Err returns why the stream ended, once C is closed.
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Events subscribes to a conversation's events after record number after (0: from the start).
// When the connection drops it reconnects with Last-Event-ID, backing off up to a second, so a
// reconnecting client misses no record. A refusal (4xx: no such conversation, a bad token) ends
// the stream.
func (c *Client) Events(ctx context.Context, id string, after int64) *Stream {
	ch := make(chan api.Event, 64)
	s := &Stream{C: ch}
	go func() {
		defer close(ch)
		last := after
		delay := 25 * time.Millisecond
		for {
			got, err := c.stream(ctx, id, &last, ch)
			if ctx.Err() != nil {
				s.end(ctx.Err())
				return
			}
			var he *api.Error
			if errors.As(err, &he) && he.Status/100 == 4 {
				s.end(err)
				return
			}
			if got {
				delay = 25 * time.Millisecond
			}
			select {
			case <-ctx.Done():
				s.end(ctx.Err())
				return
			case <-time.After(delay):
			}
			delay = min(2*delay, time.Second)
		}
	}()
	return s
}

func (s *Stream) end(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

// stream runs one connection until it ends, advancing *last past each record it delivers. got
// reports that the connection was answered.
func (c *Client) stream(ctx context.Context, id string, last *int64, ch chan<- api.Event) (got bool, err error) {
	req, err := c.request(ctx, http.MethodGet, convPath(id, "/events"), nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if *last > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(*last, 10))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return false, readError(resp)
	}
	rd := provider.NewSSEReader(resp.Body)
	defer rd.Close()
	for {
		ev, err := rd.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF // the host never ends a stream on its own accord
			}
			return true, err
		}
		var out api.Event
		switch ev.Event {
		case api.EventRecord:
			if err := json.Unmarshal(ev.Data, &out); err != nil {
				return true, fmt.Errorf("decode event %s: %w", ev.ID, err)
			}
			if out.Seq <= *last {
				continue
			}
		case api.EventLive:
			out.Live = new(api.Live)
			if err := json.Unmarshal(ev.Data, out.Live); err != nil {
				return true, fmt.Errorf("decode a live event: %w", err)
			}
		case "error":
			return true, fmt.Errorf("the host ended the stream: %s", ev.Data)
		default:
			continue
		}
		select {
		case ch <- out:
		case <-ctx.Done():
			return true, ctx.Err()
		}
		if out.Seq > 0 {
			*last = out.Seq
		}
	}
}

// Apply folds an event into a client's copy of a conversation's state. Each record event carries
// the whole state as of its record or later, so applying an event twice, or an older one after a
// newer one (a replay after a reconnection), leaves the newer state: the copies converge.
func Apply(cur api.State, e api.Event) api.State {
	if e.Seq == 0 || e.State.Seq < cur.Seq {
		return cur
	}
	return e.State
}
