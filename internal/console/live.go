package console

import (
	"fmt"
	"strings"

	"github.com/reinhq/rein/internal/record"
)

// liveOutput prints a piece of a running call's output (paced and capped by the agent), each line
// indented under the call, as it comes. The call's result, printed when the batch ends, is still
// what was recorded.
func (p *Printer) liveOutput(callID, text string) {
	if text == "" {
		return
	}
	if p.shownLive == nil {
		p.shownLive = map[string]bool{}
	}
	var b strings.Builder
	for text != "" {
		if !p.midLine {
			b.WriteString("  │ ")
		}
		line, rest, nl := strings.Cut(text, "\n")
		b.WriteString(line)
		if nl {
			b.WriteByte('\n')
		}
		p.midLine = !nl
		text = rest
	}
	fmt.Fprint(p.out, b.String())
	p.shownLive[callID] = true
}

// endWord says how a call whose output was shown live ended: its outcome, and the last line of
// its result when that is a footer such as [exit code 2].
func endWord(o record.Outcome, content string) string {
	content = strings.TrimSpace(content)
	if i := strings.LastIndex(content, "\nTURN: "); i >= 0 {
		content = strings.TrimSpace(content[:i])
	}
	last := content[strings.LastIndex(content, "\n")+1:]
	if o == record.OK {
		return "done"
	}
	if strings.HasPrefix(last, "[") {
		return fmt.Sprintf("%s %s", o, last)
	}
	return string(o)
}
