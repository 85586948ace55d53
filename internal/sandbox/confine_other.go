//go:build !linux && !darwin

package sandbox

import (
	"io"
	"os/exec"
	"runtime"
)

// rein builds for Linux and macOS only (package procs says so at build time); these are here so
// that its message is the one a build elsewhere gives.

const selfExe = ""

func (s *Sandbox) Confine(*exec.Cmd) (func() error, error) {
	return nil, s.support().Enforce(s.policy)
}

func check() Support { return Support{ContainWhy: "no PID namespaces on " + runtime.GOOS} }

func quick() Support { return check() }

func (s Support) lacks(Policy) string { return "rein has no sandbox for " + runtime.GOOS }

func (s Support) report(io.Writer) {}

func helper([]string) int { return 2 }
