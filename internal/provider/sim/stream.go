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
	send := func(b []byte) bool {
		if _, err := rw.Write(b); err != nil {
			return false
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
				send(w.streamError(p, *p.errorEvent, i).bytes())
				return Errored
			}
			return CutOff
		}
		if f.delta && p.delay > 0 {
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
		b := f.bytes()
		if p.cut != nil && p.cut.AfterBytes > 0 && written+len(b) >= p.cut.AfterBytes {
			send(b[:p.cut.AfterBytes-written])
			return CutOff
		}
		if !send(b) {
			return Cancelled
		}
		written += len(b)
	}
	return Streamed
}
