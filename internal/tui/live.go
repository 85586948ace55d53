package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// A running call's output as it comes (live events of kind tool_output, paced and capped by the
// host): its last lines are drawn under the call while it runs, and dropped when its recorded
// result arrives, which is what the call shows from then on.

const (
	liveKeep  = 16 << 10 // the bytes of a call's live output kept: its newest
	liveLines = 6        // the lines of it drawn under the running call
)

// addLive appends a piece of the call's live output, keeping the newest liveKeep bytes.
func (c *toolCall) addLive(text string) {
	c.live += text
	c.liveBytes += len(text)
	if over := len(c.live) - liveKeep; over > 0 {
		cut := over
		if i := strings.IndexByte(c.live[over:], '\n'); i >= 0 {
			cut += i + 1
		}
		c.live = c.live[cut:]
	}
}

// liveTail draws the last lines of a running call's live output, each under a bar, with a line
// counting those above when there are more.
func liveTail(c *toolCall, width int) []string {
	if c.live == "" || c.outcome != "running" {
		return nil
	}
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(c.live, "\r", ""), "\n"), "\n")
	bar := sty.dim.Render("    │ ")
	var out []string
	if len(lines) > liveLines {
		out = append(out, bar+sty.dim.Render(fmt.Sprintf("… %s of output so far", byteCount(c.liveBytes))))
		lines = lines[len(lines)-liveLines:]
	}
	for _, l := range lines {
		out = append(out, bar+ansi.Truncate(printable(l), max(width-6, 8), "…"))
	}
	return out
}
