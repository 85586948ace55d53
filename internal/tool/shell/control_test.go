package shell

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reinhq/rein/internal/record"
)

// TestHeldControl runs the suites again with the control file macOS uses, an unlinked temporary
// file the supervisor's tree holds as fd 57, so that Linux runs the script macOS runs: exit
// statuses, working directories, Stop, timeouts, and rein killed with SIGKILL.
func TestHeldControl(t *testing.T) {
	if defaultControl.name == heldControl.name {
		t.Skip("the held control file is this platform's own: every test runs it")
	}
	testControl = heldControl
	defer func() { testControl = defaultControl }()
	for _, tt := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"OutputAndExitCodes", TestOutputAndExitCodes},
		{"OutputKeepsHeadAndTail", TestOutputKeepsHeadAndTail},
		{"WorkingDirectoryPersists", TestWorkingDirectoryPersists},
		{"BackgroundJobsEndWithTheCall", TestBackgroundJobsEndWithTheCall},
		{"TimeoutKillsTheGroup", TestTimeoutKillsTheGroup},
		{"StopInterruptsAndEndsTheGroup", TestStopInterruptsAndEndsTheGroup},
		{"StopEscalatesToSIGKILL", TestStopEscalatesToSIGKILL},
		{"NoProcessOutlivesRein", TestNoProcessOutlivesRein},
		{"StopThenReinKilled", TestStopThenReinKilled},
		{"StopKeepsTheGoodbye", TestStopKeepsTheGoodbye},
		{"StopGivesBackgroundProcessesTheirGrace", TestStopGivesBackgroundProcessesTheirGrace},
		{"OwnSessionWithoutTerminal", TestOwnSessionWithoutTerminal},
		{"Conformance", TestConformance},
		{"ControlLeavesNoFile", TestControlLeavesNoFile},
	} {
		t.Run(tt.name, tt.f)
	}
}

// TestControlLeavesNoFile: the control file has no name anywhere, while the command runs or after.
func TestControlLeavesNoFile(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	sh, _ := newTool(t, Options{})
	r := run(t, sh, `ls -A "$TMPDIR"; echo listed`)
	if r.Content != "listed\n" || r.Outcome != record.OK {
		t.Errorf("while the command ran, the temporary directory held: %q", r.Content)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left behind in the temporary directory: %v", left)
	}
}

// TestHeldControlAgainstTheCommand: a command that closes or takes over fd 57 may lose the report
// of its working directory (bash 5 then starts the next call where this one started; bash 3.2
// keeps the report), never its exit status.
func TestHeldControlAgainstTheCommand(t *testing.T) {
	testControl = heldControl
	defer func() { testControl = defaultControl }()
	sh, root := newTool(t, Options{})
	for _, command := range []string{"mkdir -p a; cd a; exec 57>&-; exit 3", "mkdir -p a; cd a; exec 57>/dev/null; exit 3"} {
		r := run(t, sh, command)
		if r.Outcome != record.Failed || r.ExitCode == nil || *r.ExitCode != 3 {
			t.Errorf("%s: got %q %s", command, r.Content, r.Outcome)
		}
		if got := sh.Dir(); got != root && got != filepath.Join(root, "a") {
			t.Errorf("%s: the next call starts in %s; want %s or %s", command, got, root, filepath.Join(root, "a"))
		}
		run(t, sh, "cd "+root)
	}
	if r := run(t, sh, "cd a; exit 4"); r.ExitCode == nil || *r.ExitCode != 4 || sh.Dir() != filepath.Join(root, "a") {
		t.Errorf("a command leaving fd 57 alone: got %q, %v; the next call starts in %s", r.Content, r.ExitCode, sh.Dir())
	}
}
