package agent

import (
	"bytes"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"
)

// The pace and the size of a running call's live output (tool.LiveOutput): what a person watching
// needs, at a cost the host can carry for many conversations whatever a command prints. A command
// printing 10 MB/s is shown as at most liveRate pieces a second of at most liveChunk bytes each,
// its newest bytes; the bytes skipped are counted in a marker where they were. Past liveCallMax
// bytes shown, a call shows nothing more live. None of it is recorded or sent to the model: the
// call's result, with its own head and tail, is what is.
const (
	liveEvery   = 50 * time.Millisecond // at most 20 pieces a second per call
	liveChunk   = 8 << 10
	liveCallMax = 1 << 20
)

// liveOutput paces one call's output to publish. It is an io.Writer for the tool; Close flushes
// what is pending and makes further writes no-ops, so nothing of the call is shown after its end.
type liveOutput struct {
	publish func(text string)

	mu      sync.Mutex
	pending []byte
	skipped int64 // bytes dropped since the last piece
	shown   int64
	atLine  bool // the last piece shown ended a line (or none was shown)
	last    time.Time
	timer   *time.Timer
	stopped bool // past liveCallMax: nothing more is shown
	closed  bool
}

func newLiveOutput(publish func(string)) *liveOutput {
	return &liveOutput{publish: publish, atLine: true}
}

// Write takes the command's bytes as they come. It never blocks on the watcher.
func (l *liveOutput) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.stopped {
		l.skipped += int64(len(b))
		return len(b), nil
	}
	l.pending = append(l.pending, b...)
	if over := len(l.pending) - liveChunk; over > 0 {
		// Keep the newest bytes: a person watching wants to see where the command is now.
		l.skipped += int64(over)
		l.pending = append(l.pending[:0], l.pending[over:]...)
	}
	if l.timer != nil {
		return len(b), nil // a piece is due; these bytes go with it
	}
	if wait := liveEvery - time.Since(l.last); wait > 0 {
		l.timer = time.AfterFunc(wait, l.tick)
		return len(b), nil
	}
	l.flushLocked()
	return len(b), nil
}

func (l *liveOutput) tick() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer = nil
	if !l.closed {
		l.flushLocked()
	}
}

// Close shows what is pending and ends the call's live output.
func (l *liveOutput) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.flushLocked()
	if l.stopped && l.skipped > 0 {
		l.publish(fmt.Sprintf("%s[… %d more bytes not shown live; the result holds the head and the tail …]\n", l.newline(), l.skipped))
	}
	l.closed = true
}

// flushLocked publishes the pending bytes as one piece, preceded by a marker when bytes were
// skipped. A character split across writes waits for its end.
func (l *liveOutput) flushLocked() {
	l.last = time.Now()
	p := l.pending
	if l.skipped > 0 {
		// The front was cut: start at a character, and at a line when one starts soon after.
		for i := 0; i < utf8.UTFMax && len(p) > 0 && !utf8.RuneStart(p[0]); i++ {
			p = p[1:]
			l.skipped++
		}
		if i := bytes.IndexByte(p, '\n'); i >= 0 && i < len(p)/2 {
			l.skipped += int64(i + 1)
			p = p[i+1:]
		}
	}
	keep := incompleteTail(p)
	text := string(p[:len(p)-keep])
	var marker string
	if l.skipped > 0 && !l.stopped {
		marker = fmt.Sprintf("%s[… %d bytes not shown live …]\n", l.newline(), l.skipped)
		l.skipped = 0
	}
	l.pending = append(l.pending[:0], p[len(p)-keep:]...)
	if text == "" && marker == "" {
		return
	}
	text = marker + text
	l.shown += int64(len(text))
	if l.shown >= liveCallMax {
		l.stopped = true
		text += fmt.Sprintf("%s[… live output stops here, after %d bytes; the result holds the head and the tail …]\n", newlineAfter(text), l.shown)
		l.pending = l.pending[:0]
	}
	l.atLine = text[len(text)-1] == '\n'
	l.publish(text)
}

func (l *liveOutput) newline() string {
	if l.atLine {
		return ""
	}
	return "\n"
}

func newlineAfter(s string) string {
	if s == "" || s[len(s)-1] == '\n' {
		return ""
	}
	return "\n"
}

// incompleteTail is how many bytes at the end of p begin a character not yet complete.
func incompleteTail(p []byte) int {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if utf8.FullRune(p[i:]) {
				return 0
			}
			return len(p) - i
		}
	}
	return 0
}
