package shell

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCapture(t *testing.T) {
	tests := []struct {
		name       string
		head, tail int
		writes     []string
		want       string
	}{
		{"fits", 4, 4, []string{"abc", "def"}, "abcdef"},
		{"exactly fits", 3, 3, []string{"abcdef"}, "abcdef"},
		{"elides the middle", 3, 3, []string{"abc", "1234", "xyz"}, "abc\n[… 4 bytes of output elided …]\nxyz"},
		{"tail from many small writes", 2, 3, []string{"ab", "c", "d", "e", "f", "g", "h"}, "ab\n[… 3 bytes of output elided …]\nfgh"},
		{"a write longer than the tail", 2, 3, []string{"ab", "0123456789"}, "ab\n[… 7 bytes of output elided …]\n789"},
		{"head ends on a newline", 3, 2, []string{"ab\n", "zzzz", "yz"}, "ab\n[… 4 bytes of output elided …]\nyz"},
		// é is two bytes: a cut inside it moves to the boundary and the byte joins the elision.
		{"head cut inside a rune", 3, 2, []string{"abé", "zzzz", "yz"}, "ab\n[… 6 bytes of output elided …]\nyz"},
		{"tail cut inside a rune", 2, 2, []string{"ab", "zzzz", "éz"}, "ab\n[… 6 bytes of output elided …]\nz"},
		{"invalid bytes are replaced", 10, 10, []string{"a\xffb"}, "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCapture(tt.head, tt.tail)
			for _, w := range tt.writes {
				c.Write([]byte(w))
			}
			if got := c.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCaptureBoundsMemory(t *testing.T) {
	c := newCapture(100, 100)
	chunk := []byte(strings.Repeat("é", 33)) // 66 bytes, so cuts land inside runes
	for range 10000 {
		c.Write(chunk)
	}
	if cap(c.tail) > 5*100 || len(c.head) != 100 {
		t.Errorf("head %d, tail cap %d", len(c.head), cap(c.tail))
	}
	s := c.String()
	if !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) {
		t.Errorf("cut inside a rune: %q", s)
	}
	if c.Len() != 660000 {
		t.Errorf("Len = %d", c.Len())
	}
}
