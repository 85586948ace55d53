package shell

import (
	"testing"

	"github.com/reinhq/rein/internal/record"
)

// TestDirectExitStatus: a command started directly reports its shell's own exit, whatever it
// writes to the control file, and a shell killed by a signal counts as bash counts it (128+n).
func TestDirectExitStatus(t *testing.T) {
	for _, control := range []control{defaultControl, heldControl} {
		testControl = control
		sh, _ := newTool(t, Options{})
		testControl = defaultControl
		for _, tt := range []struct {
			command string
			code    int
		}{
			{`printf 'status:5\0' >&57; exit 3`, 3},
			{`printf 'status:0\0' >&57; kill -KILL $$`, 137},
			{`kill -TERM $$`, 143},
		} {
			r := run(t, sh, tt.command)
			if r.Outcome != record.Failed || r.ExitCode == nil || *r.ExitCode != tt.code {
				t.Errorf("%s control, %s: got %q %s %v, want exit code %d", control.name, tt.command, r.Content, r.Outcome, r.ExitCode, tt.code)
			}
		}
	}
}
