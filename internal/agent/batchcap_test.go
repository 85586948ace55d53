package agent

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClipToBatch(t *testing.T) {
	used := 0
	small := strings.Repeat("a", 1000)
	if got := clipToBatch(small, &used, 10_000, 1); got != small || used != 1000 {
		t.Fatalf("a result within the cap was changed, or not counted (%d)", used)
	}
	big := strings.Repeat("é", 20_000) // 40,000 bytes of two-byte characters
	got := clipToBatch(big, &used, 10_000, 1)
	if !utf8.ValidString(got) || !strings.Contains(got, "[rein: cut:") || !strings.HasPrefix(got, "é") || !strings.HasSuffix(got, "é") {
		t.Fatalf("a cut result lost its head, tail or note, or split a character: %q…", got[:40])
	}
	if used > 10_000+8 {
		t.Fatalf("the batch carries %d bytes, over its cap", used)
	}
	// Past the cap, each later result still keeps a head and a tail to read.
	after := clipToBatch(big, &used, 10_000, 1)
	if !strings.Contains(after, "[rein: cut:") || len(after) < minKeep || len(after) > minKeep+400 {
		t.Fatalf("a result after the cap keeps %d bytes", len(after))
	}
	// What is left is shared evenly among the calls still to answer.
	used = 0
	first := clipToBatch(strings.Repeat("x", 100_000), &used, 40_000, 4)
	if n := len(first); n < 9_000 || n > 11_000 {
		t.Fatalf("the first of four large results kept %d bytes, want its share of about 10,000", n)
	}
}
