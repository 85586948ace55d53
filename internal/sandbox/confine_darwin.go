package sandbox

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// selfExe is unused on macOS, where sandbox-exec is the helper.
const selfExe = ""

// seatbeltExe is macOS's sandbox-exec.
const seatbeltExe = "/usr/bin/sandbox-exec"

// Confine rewrites cmd, which is to execute a command's supervisor, so that it runs confined:
// sandbox-exec starts instead, applies the Seatbelt profile of s's policy and executes the
// supervisor, keeping its pid. cmd.Env gets TMPDIR, the sandbox's temporary directory.
//
// When this machine cannot enforce the policy, Confine returns an *UnsupportedError and cmd must
// not be started. Otherwise it returns a function to call once cmd.Start returned; on macOS it has
// nothing to wait for (sandbox-exec reports a profile it cannot apply on the command's output).
func (s *Sandbox) Confine(cmd *exec.Cmd) (func() error, error) {
	if err := s.support().Enforce(s.policy); err != nil {
		return nil, err
	}
	git := ""
	if s.policy.ProtectGit && s.policy.Mode == WorkspaceWrite {
		if _, err := os.Lstat(filepath.Join(s.workspace, ".git")); err == nil {
			git = filepath.Join(s.workspace, ".git")
		}
	}
	profile, params := Seatbelt(s.policy, s.write, git)
	cmd.Args = seatbeltArgs(seatbeltExe, profile, params, cmd.Path, cmd.Args)
	cmd.Path = seatbeltExe
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = withEnv(env, "TMPDIR", s.temp)
	return func() error { return nil }, nil
}

// check finds what this macOS machine supports.
// quick is check: nothing on macOS needs a probe.
func quick() Support { return check() }

func check() Support {
	s := Support{ContainWhy: "macOS has no PID namespaces"}
	if fi, err := os.Stat(seatbeltExe); err == nil && !fi.IsDir() {
		s.Seatbelt = seatbeltExe
	}
	return s
}

// lacks says what this machine lacks to enforce p, or "".
func (s Support) lacks(p Policy) string {
	if s.Seatbelt == "" {
		return seatbeltExe + " is missing"
	}
	return ""
}

// report writes the macOS mechanism's line of Support.Report.
func (s Support) report(w io.Writer) {
	if s.Seatbelt != "" {
		fmt.Fprintf(w, "  Seatbelt: %s: writes confined, the network refused but for Unix sockets, .git kept read-only with --protect-git\n", s.Seatbelt)
	} else {
		fmt.Fprintf(w, "  Seatbelt: %s is missing\n", seatbeltExe)
	}
}

// helper: macOS has no sandbox helper of rein's own.
func helper([]string) int {
	fmt.Fprintln(os.Stderr, "rein: there is no sandbox helper on macOS: sandbox-exec is")
	return 2
}
