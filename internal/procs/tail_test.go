package procs

import (
	"strings"
	"testing"
)

// A Tail keeps only the last Max bytes, however they were written.
func TestTail(t *testing.T) {
	tl := &Tail{Max: 5}
	for _, w := range []string{"ab", "cdefg", "", "h", "ijklmnopq"} {
		if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	if got := tl.String(); got != "mnopq" {
		t.Errorf("kept %q, want mnopq", got)
	}
	big := &Tail{Max: 3}
	big.Write([]byte(strings.Repeat("x", 100) + "end"))
	if big.String() != "end" {
		t.Errorf("kept %q, want end", big.String())
	}
}
