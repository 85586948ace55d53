package procs

import "sync"

// Tail keeps the last Max bytes written to it: the end of a program's standard error, quoted
// when the program fails. It is safe for concurrent use.
type Tail struct {
	Max int
	mu  sync.Mutex
	b   []byte
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.Max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.Max:]...)
	}
	return len(p), nil
}

func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
