package agent

import (
	"fmt"
	"unicode/utf8"
)

// The results of one tool batch are capped as a whole, not only call by call: eight reads of a
// quarter megabyte each, or sixty calls in one reply, would otherwise hand the model more than its
// window can take in one request, and the exchange could only end on a prompt-too-long refusal.
const (
	maxBatchBytes = 4 << 20 // the most one batch's results carry, whatever the window
	minBatchBytes = 4 << 10 // the least, however small the window: a head and a tail to read
	minKeep       = 2 << 10 // what a cut result keeps at least, head and tail
)

// batchCap is what one batch's results may carry in all: what a forced eviction keeps of the
// context (keepBytes: half of what the window leaves once the reply's reserve, the system prompt
// and the tools' definitions are paid for), within [minBatchBytes, maxBatchBytes]. The results
// are in the newest turn, which no eviction takes, so they must fit beside the system prompt and
// the tools by themselves; half leaves the other half to the turns before them.
func (a *Agent) batchCap() int {
	w := a.window()
	if w <= 0 {
		return maxBatchBytes
	}
	return int(min(max(a.keepBytes(a.used(), w), minBatchBytes), maxBatchBytes))
}

// clipToBatch cuts content to its share of what is left of the batch's cap — left shared evenly
// among this call and the calls after it (left counts both), so one large result does not starve
// the others — keeping its head and tail, and says so in the result, with what to do. used counts
// the bytes the batch's results carry so far.
func clipToBatch(content string, used *int, limit, left int) string {
	room := max((limit-*used)/max(left, 1), minKeep)
	if len(content) <= room {
		*used += len(content)
		return content
	}
	note := fmt.Sprintf("\n[rein: cut: the calls of this reply answered more than %d KiB in all, as much as this context can take at once; this result keeps its first and last %d KiB of %d KiB. Ask for the rest in smaller pieces (offset and limit, head or tail, grep).]\n",
		limit>>10, room/2>>10, len(content)>>10)
	head, tail := cutRunes(content, room/2, true), cutRunes(content, room/2, false)
	*used += len(head) + len(tail)
	return head + note + tail
}

// cutRunes keeps n bytes of s from its start (or its end), never splitting a character.
func cutRunes(s string, n int, fromStart bool) string {
	if n >= len(s) {
		return s
	}
	if fromStart {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		return s[:n]
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
