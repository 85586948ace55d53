package tui

import (
	"context"
	"errors"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// Run runs the chat on the terminal until the person quits. ctx bounds every call to the host;
// ending it ends the chat.
func Run(ctx context.Context, h Host, opt Options, progOpts ...tea.ProgramOption) error {
	opt.Context = ctx
	m := New(h, opt)
	// 120 frames a second, Bubble Tea's most: a key press reaches the screen at the next frame,
	// so the frame interval is most of the keystroke-to-render latency (an Update and a View
	// cost about 0.2 ms of CPU, see BenchmarkKeystrokeWhileStreaming). A frame with nothing new
	// writes nothing.
	base := []tea.ProgramOption{tea.WithContext(ctx), tea.WithColorProfile(profile()), tea.WithFPS(120)}
	p := tea.NewProgram(m, append(base, progOpts...)...)
	_, err := p.Run()
	if m.cancel != nil {
		m.cancel()
	}
	// The chat drew on the alternate screen, which the terminal drops on exit: print the
	// conversation to the normal screen so it stays in the scrollback.
	m.leave(opt.Out)
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// profile is the terminal's colour profile, read from the environment and terminfo. Inside tmux,
// Bubble Tea's own detection runs `tmux info` to tell true colour from 256 colours; the chat uses
// only the sixteen ANSI colours, so it skips that process (tens of milliseconds at start).
func profile() colorprofile.Profile {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "TMUX=") {
			env = append(env, e)
		}
	}
	return colorprofile.Detect(os.Stdout, env)
}
