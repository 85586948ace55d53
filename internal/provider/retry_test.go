package provider

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/reinhq/rein/internal/record"
)

// step is one scripted attempt of a fake model: the events it publishes, then its outcome.
type step struct {
	events []Event
	err    error
	block  bool // wait for ctx to end instead, as a stalled stream does
}

// script is a fake Model that plays its steps in order, one per Send, and keeps the bodies sent.
type script struct {
	steps  []step
	calls  int
	bodies []string
}

func (s *script) Encode(req Request) ([]byte, error) { return []byte(req.System), nil }

func (s *script) Validate([]byte) *Violation { return nil }

func (s *script) Send(ctx context.Context, body []byte, on func(Event)) (Reply, error) {
	st := s.steps[min(s.calls, len(s.steps)-1)]
	s.calls++
	s.bodies = append(s.bodies, string(body))
	var reply Reply
	for _, ev := range st.events {
		on(ev)
		reply.Parts = append(reply.Parts, record.Part{Type: record.PartText, Text: ev.Text})
	}
	if st.block {
		<-ctx.Done()
		return reply, ClassifyTransport(ctx.Err(), len(st.events) > 0)
	}
	if st.err != nil {
		return reply, st.err
	}
	reply.StopReason = StopEnd
	return reply, nil
}

func fail(c Class) step { return step{err: &Error{Class: c, Message: string(c)}} }

func one() float64 { return 0.999999 }

func TestPolicyBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &script{steps: []step{fail(Overloaded), fail(Server), fail(Network), fail(RateLimited), {}}}
		var waits []Wait
		start := time.Now()
		reply, err := Policy{Rand: one}.Send(t.Context(), m, []byte("the request"), nil, func(w Wait) { waits = append(waits, w) })
		if err != nil || reply.StopReason != StopEnd {
			t.Fatalf("Send = %+v, %v; want success", reply, err)
		}
		for i, b := range m.bodies {
			if b != "the request" {
				t.Fatalf("attempt %d sent %q: every attempt sends the bytes given", i+1, b)
			}
		}
		want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second}
		if len(waits) != len(want) {
			t.Fatalf("waits = %+v, want %d", waits, len(want))
		}
		var total time.Duration
		for i, w := range waits {
			if w.Attempt != i+1 || w.Delay.Round(time.Millisecond) != want[i] || w.Err == nil {
				t.Errorf("wait %d = %+v, want attempt %d delay %v", i, w, i+1, want[i])
			}
			total += w.Delay
		}
		if el := time.Since(start); el != total {
			t.Errorf("elapsed %v, want the sum of the delays %v", el, total)
		}
	})
}

func TestPolicyJitterAndCap(t *testing.T) {
	p := Policy{Rand: func() float64 { return 0.5 }}.withDefaults()
	if got := p.delay(1, &Error{}); got != 250*time.Millisecond {
		t.Errorf("delay(1) = %v, want 250ms (half of 500ms)", got)
	}
	if got := p.delay(10, &Error{}); got != 15*time.Second {
		t.Errorf("delay(10) = %v, want 15s (half of the 30s cap)", got)
	}
	if got := p.delay(200, &Error{}); got != 15*time.Second {
		t.Errorf("delay(200) = %v, want 15s (no overflow)", got)
	}
	if got := p.delay(1, &Error{RetryAfter: 3 * time.Second}); got != 3*time.Second {
		t.Errorf("retry-after: delay = %v, want 3s exactly", got)
	}
	if got := p.delay(1, &Error{RetryAfter: time.Hour}); got != 30*time.Second {
		t.Errorf("retry-after beyond the cap: delay = %v, want 30s", got)
	}
}

func TestPolicyNeverRetries(t *testing.T) {
	no, yes := false, true
	for _, e := range []*Error{
		{Class: Auth}, {Class: InvalidRequest}, {Class: ContextLength}, {Class: Cancelled},
		{Class: RateLimited, ShouldRetry: &no},
		{Class: InvalidRequest, ShouldRetry: &yes}, // the header cannot override the never-list
	} {
		synctest.Test(t, func(t *testing.T) {
			m := &script{steps: []step{{err: e}, {}}}
			_, err := Policy{}.Send(t.Context(), m, nil, nil, func(w Wait) { t.Errorf("unexpected wait %+v", w) })
			if !errors.Is(err, e) || m.calls != 1 {
				t.Errorf("%+v: err=%v calls=%d, want the error after one call", e, err, m.calls)
			}
		})
	}
}

func TestPolicyMaxAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &script{steps: []step{fail(Server)}}
		waits := 0
		_, err := Policy{MaxAttempts: 3, Rand: one}.Send(t.Context(), m, nil, nil, func(Wait) { waits++ })
		var e *Error
		if !errors.As(err, &e) || e.Class != Server || m.calls != 3 || waits != 2 {
			t.Fatalf("err=%v calls=%d waits=%d, want server error after 3 calls and 2 waits", err, m.calls, waits)
		}
	})
}

func TestPolicyMaxTotal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &script{steps: []step{{err: &Error{Class: RateLimited, RetryAfter: 30 * time.Second}}}}
		var waits []Wait
		start := time.Now()
		_, err := Policy{MaxTotal: 70 * time.Second}.Send(t.Context(), m, nil, nil, func(w Wait) { waits = append(waits, w) })
		if err == nil {
			t.Fatal("want the last error")
		}
		// 30s, 30s, then only 10s remain; then the budget is spent.
		want := []time.Duration{30 * time.Second, 30 * time.Second, 10 * time.Second}
		if len(waits) != len(want) {
			t.Fatalf("waits = %+v, want %v", waits, want)
		}
		for i := range want {
			if waits[i].Delay != want[i] {
				t.Errorf("wait %d = %v, want %v", i, waits[i].Delay, want[i])
			}
		}
		if el := time.Since(start); el != 70*time.Second {
			t.Errorf("elapsed %v, want 70s", el)
		}
	})
}

func TestPolicyRestartAfterOutput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		partial := &Error{Class: Network, Message: "cut", Partial: true}
		m := &script{steps: []step{
			{events: []Event{{Type: TextDelta, Text: "hel"}}, err: partial},
			{err: &Error{Class: Overloaded}}, // no output: no restart
			{events: []Event{{Type: TextDelta, Text: "hello"}}},
		}}
		var got []EventType
		reply, err := Policy{Rand: one}.Send(t.Context(), m, nil, func(ev Event) { got = append(got, ev.Type) }, nil)
		if err != nil || len(reply.Parts) != 1 || reply.Parts[0].Text != "hello" {
			t.Fatalf("Stream = %+v, %v", reply, err)
		}
		want := []EventType{TextDelta, Restart, TextDelta}
		if len(got) != len(want) {
			t.Fatalf("events = %v, want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("events = %v, want %v", got, want)
			}
		}
	})
}

func TestPolicyCancelDuringStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		m := &script{steps: []step{{events: []Event{{Type: TextDelta, Text: "said"}}, block: true}}}
		reply, err := Policy{}.Send(ctx, m, nil, func(Event) { cancel() }, nil) // Stop once output began
		var e *Error
		if !errors.As(err, &e) || e.Class != Cancelled || !e.Partial {
			t.Fatalf("err = %v, want partial cancelled", err)
		}
		if len(reply.Parts) != 1 || reply.Parts[0].Text != "said" || m.calls != 1 {
			t.Fatalf("reply = %+v (calls %d), want the partial reply and no retry", reply, m.calls)
		}
	})
}

func TestPolicyCancelDuringSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		m := &script{steps: []step{{err: &Error{Class: RateLimited, RetryAfter: 30 * time.Second}}}}
		start := time.Now()
		reply, err := Policy{}.Send(ctx, m, nil, nil, func(Wait) { cancel() })
		var e *Error
		if !errors.As(err, &e) || e.Class != Cancelled || len(reply.Parts) != 0 {
			t.Fatalf("Stream = %+v, %v; want an empty reply and cancelled", reply, err)
		}
		if el := time.Since(start); el != 0 {
			t.Fatalf("the sleep lasted %v of fake time, want none", el)
		}
	})
}

func TestPolicyCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	m := &script{steps: []step{{}}}
	_, err := Policy{}.Send(ctx, m, nil, nil, nil)
	var e *Error
	if !errors.As(err, &e) || e.Class != Cancelled || m.calls != 0 {
		t.Fatalf("err=%v calls=%d, want cancelled without a call", err, m.calls)
	}
}

// TestPolicyCancelLatency measures, in real time, how long Stream takes to return once ctx is
// cancelled in the middle of a 30 s retry sleep.
func TestPolicyCancelLatency(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	m := &script{steps: []step{{err: &Error{Class: RateLimited, RetryAfter: 30 * time.Second}}}}
	var cancelled time.Time
	scheduled := make(chan struct{})
	go func() {
		<-scheduled
		// Give Stream time to enter its sleep; whether or not it has, it must return at once.
		timer := time.NewTimer(20 * time.Millisecond)
		<-timer.C
		cancelled = time.Now()
		cancel()
	}()
	_, err := Policy{}.Send(ctx, m, nil, nil, func(w Wait) {
		if w.Delay != 30*time.Second {
			t.Errorf("delay %v, want 30s", w.Delay)
		}
		close(scheduled)
	})
	lat := time.Since(cancelled)
	if err == nil {
		t.Fatal("want cancelled")
	}
	t.Logf("cancel during a 30s retry sleep returned after %v", lat)
	if lat > time.Second { // at once; the sleep was 30 s (room for a loaded machine, where a goroutine can wait for a processor)
		t.Fatalf("Stream returned %v after cancel, want a few ms", lat)
	}
}

func TestPolicyUnclassifiedError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &script{steps: []step{{err: errors.New("boom")}, {}}}
		_, err := Policy{Rand: one}.Send(t.Context(), m, nil, nil, nil)
		if err != nil || m.calls != 2 {
			t.Fatalf("err=%v calls=%d: an unclassified error is a network failure and retries", err, m.calls)
		}
	})
}
