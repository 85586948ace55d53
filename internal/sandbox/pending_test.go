package sandbox

import (
	"sync"
	"testing"
	"time"
)

// AwaitRemovals's count lets a removal begin while another goroutine awaits the removals (a
// sandbox closed while its last command is released): a sync.WaitGroup forbids that at a count of
// zero, which the race detector reports and which can panic. Run under -race.
func TestPendingBeginsWhileAwaited(t *testing.T) {
	var p pending
	if p.done() != nil {
		t.Fatal("nothing under way, yet done is not nil")
	}
	p.begin()
	done := p.done()
	p.begin()
	p.end()
	select {
	case <-done:
		t.Fatal("done closed with one still under way")
	default:
	}
	p.end()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("done not closed once nothing was under way")
	}

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				p.begin()
				go p.end()
			}
		})
		wg.Go(func() {
			for range 200 {
				if d := p.done(); d != nil {
					<-d
				}
			}
		})
	}
	wg.Wait()
	if d := p.done(); d != nil {
		<-d
	}
}
