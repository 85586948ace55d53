package tui

import (
	"context"
	"fmt"
	"strconv"

	tea "charm.land/bubbletea/v2"
	"github.com/reinhq/rein/internal/api"
)

// Rewinding the workspace's files with the context: /rewind <turn> files, on a host that takes
// checkpoints (capability rewind-files.v1).

// FileRewinder is the optional part of a host that rewinds the workspace's files with the
// context.
type FileRewinder interface {
	RewindFiles(ctx context.Context, id, op string, turn int64) (api.Survey, *api.FilesRestored, error)
}

// RewindFiles implements FileRewinder.
func (h *ClientHost) RewindFiles(ctx context.Context, id, op string, turn int64) (api.Survey, *api.FilesRestored, error) {
	res, err := h.c.RewindFiles(ctx, id, op, turn)
	return res.Survey, res.Files, err
}

// rewindFiles queues /rewind <turn> files.
func (m *Model) rewindFiles(arg string) tea.Cmd {
	turn, err := strconv.ParseInt(arg, 10, 64)
	if err != nil {
		m.sb.notice(warn, "usage: /rewind <turn> files: <turn> is a turn id (/context lists them)")
		return nil
	}
	fr, ok := m.edit.(FileRewinder)
	if !ok {
		m.sb.notice(warn, "/rewind files is not supported by this client")
		return nil
	}
	if !m.can("rewind files", api.CapFiles) {
		return nil
	}
	if m.working() {
		m.sb.notice(warn, "/rewind: the conversation is working; stop it first (Esc), then rewind it")
		return nil
	}
	opID := m.opt.NewOp()
	return m.enqueue(op{kind: opEdit, run: func(ctx context.Context, conv string) tea.Msg {
		sv, files, err := fr.RewindFiles(ctx, conv, opID, turn)
		return editedMsg{what: "rewind", survey: sv, err: err, files: files}
	}})
}

// filesLines say what a rewind with files did to the workspace and what it left as it was.
func filesLines(f *api.FilesRestored) []string {
	out := []string{sty.bold.Render(fmt.Sprintf("Files restored: %d written, %d removed", len(f.Changed), len(f.Removed)))}
	for _, p := range f.Changed {
		out = append(out, "  written  "+p)
	}
	for _, p := range f.Removed {
		out = append(out, "  removed  "+p)
	}
	if len(f.NotCovered) > 0 || f.MoreIgnored > 0 {
		out = append(out, sty.dim.Render("  not covered (left as they are):"))
		for _, n := range f.NotCovered {
			out = append(out, sty.dim.Render(fmt.Sprintf("    %s (%s)", n.Path, n.Reason)))
		}
		if f.MoreIgnored > 0 {
			out = append(out, sty.dim.Render(fmt.Sprintf("    and %d more ignored paths", f.MoreIgnored)))
		}
	}
	if f.Outside != "" {
		out = append(out, sty.dim.Render("  "+f.Outside))
	}
	return out
}
