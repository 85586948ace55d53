package shell

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// capture keeps the head and the tail of a stream and counts what lies between, so a command
// printing gigabytes costs a bounded amount of memory. It is safe for one writer and any readers.
type capture struct {
	mu      sync.Mutex
	headMax int
	tailMax int
	head    []byte
	tail    []byte // the last bytes seen after the head filled, at most 2×tailMax before trimming
	total   int64
	// live, when set, is also given every write as it comes (tool.LiveOutput): shown to the
	// person watching, never part of the result.
	live io.Writer
}

func newCapture(headMax, tailMax int) *capture {
	return &capture{headMax: headMax, tailMax: tailMax}
}

func (c *capture) Write(b []byte) (int, error) {
	if c.live != nil {
		c.live.Write(b) // its errors are the watcher's, not the command's
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(b)
	c.total += int64(n)
	if room := c.headMax - len(c.head); room > 0 {
		k := min(room, len(b))
		c.head = append(c.head, b[:k]...)
		b = b[k:]
	}
	if len(b) == 0 || c.tailMax == 0 {
		return n, nil
	}
	if len(b) >= c.tailMax {
		c.tail = append(c.tail[:0], b[len(b)-c.tailMax:]...)
		return n, nil
	}
	c.tail = append(c.tail, b...)
	if len(c.tail) > 2*c.tailMax {
		k := copy(c.tail, c.tail[len(c.tail)-c.tailMax:])
		c.tail = c.tail[:k]
	}
	return n, nil
}

// String returns what was kept: everything if it fit, else the head, a line counting the elided
// bytes, and the tail. Cuts fall on character boundaries and the result is valid UTF-8.
func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := c.tail
	if len(tail) > c.tailMax {
		tail = tail[len(tail)-c.tailMax:]
	}
	kept := int64(len(c.head) + len(tail))
	if kept == c.total {
		return strings.ToValidUTF8(string(c.head)+string(tail), "\uFFFD")
	}
	head := c.head
	// Move both cuts to character boundaries; the bytes dropped join the elided count.
	for i := len(head) - 1; i >= 0 && i >= len(head)-utf8.UTFMax; i-- {
		if utf8.RuneStart(head[i]) {
			if !utf8.FullRune(head[i:]) {
				head = head[:i]
			}
			break
		}
	}
	for i := 0; i < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	elided := c.total - int64(len(head)+len(tail))
	var b strings.Builder
	b.Grow(len(head) + len(tail) + 64)
	b.WriteString(strings.ToValidUTF8(string(head), "\uFFFD"))
	if len(head) > 0 && head[len(head)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[… %d bytes of output elided …]\n", elided)
	b.WriteString(strings.ToValidUTF8(string(tail), "\uFFFD"))
	return b.String()
}

// Len is the number of bytes written so far.
func (c *capture) Len() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}
