package fold

import (
	"strings"
	"testing"
	"unsafe"
)

// TestLabelsOwnTheirBytes: a turn's label outlives its messages (they are released when the turn
// leaves the context), so a label must not be a slice of its message's text, which would keep a
// pasted file alive for the session's life.
func TestLabelsOwnTheirBytes(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	for _, text := range []string{
		"fix the tests\n" + big,        // the first line, short
		"  fix the tests  " + big[:10], // trimmed
		big,                            // clipped
		"short\n\n" + strings.Repeat("y", 40),
		"word " + strings.Repeat("é", 100), // clipped on a rune boundary
	} {
		l := label(text)
		lo := uintptr(unsafe.Pointer(unsafe.StringData(text)))
		p := uintptr(unsafe.Pointer(unsafe.StringData(l)))
		if len(l) < len(text) && p >= lo && p < lo+uintptr(len(text)) {
			t.Errorf("the label %q of a %d-byte text points into the text", l, len(text))
		}
		if len(l) > labelMax+len("…") {
			t.Errorf("the label %q is longer than %d bytes", l, labelMax)
		}
	}
	if l := label("exactly this"); l != "exactly this" {
		t.Errorf("label of a short line: %q", l)
	}
}
