package sim

import (
	"net/http"
	"time"
)

// play writes a plan's stream with its faults: a delay before each content delta, a mid-stream
// error event or a cut after some deltas or bytes. It returns what happened; a cut that must abort
// the connection is left to the caller, so the request log is updated first. A cancelled request
// ends any wait at once.
func play(rw http.ResponseWriter, r *http.Request, w wire, p *plan) Outcome {
	h := rw.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Simulator", "rein")
	rw.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(rw)
	// Frames gather in buf and go out together, the whole stream in one write when it has no
	// delay: what a reader sees is the same bytes, and each content delta of a slow stream is
	// still on the wire before the wait for the next one.
	var buf []byte
	flush := func() bool {
		if len(buf) > 0 {
			if _, err := rw.Write(buf); err != nil {
				return false
			}
			buf = buf[:0]
		}
		return rc.Flush() == nil
	}

	faultAt, total := -1, p.deltas()
	switch {
	case p.errorEvent != nil:
		faultAt = p.errorEvent.AfterDeltas
	case p.cut != nil && p.cut.AfterBytes == 0:
		faultAt = p.cut.AfterDeltas
	}
	ctx := r.Context()
	var timer *time.Timer
	deltas, written := 0, 0
	for i, f := range w.frames(p) {
		// A fault fires before the delta that would pass its count, or, when the reply has no more
		// deltas than that, at the first frame after its head and its last delta.
		if faultAt >= 0 && deltas == faultAt && (f.delta || deltas == total && !f.head) {
			if p.errorEvent != nil {
				buf = w.streamError(p, *p.errorEvent, i).appendTo(buf)
				flush()
				return Errored
			}
			flush()
			return CutOff
		}
		if f.delta && p.delay > 0 {
			if !flush() {
				return Cancelled
			}
			if timer == nil {
				timer = time.NewTimer(p.delay)
				defer timer.Stop()
			} else {
				timer.Reset(p.delay)
			}
			select {
			case <-ctx.Done():
				return Cancelled
			case <-timer.C:
			}
		}
		if f.delta {
			deltas++
		}
		start := len(buf)
		buf = f.appendTo(buf)
		n := len(buf) - start
		if p.cut != nil && p.cut.AfterBytes > 0 && written+n >= p.cut.AfterBytes {
			buf = buf[:start+p.cut.AfterBytes-written]
			flush()
			return CutOff
		}
		written += n
	}
	if !flush() {
		return Cancelled
	}
	return Streamed
}
