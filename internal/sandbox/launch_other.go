//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
)

// launcher is Linux's: elsewhere every command goes through Confine.
type launcher struct{}

// Holds reports whether s starts its commands itself: only on Linux.
func (s *Sandbox) Holds() bool { return false }

// CgroupRoot is Linux's; see Holds.
func (s *Sandbox) CgroupRoot() string { return "" }

// Start is Linux's; see Holds.
func (s *Sandbox) Start(*exec.Cmd) (*Cgroup, error) {
	return nil, errors.New("the sandbox starts commands itself only on Linux")
}

func (s *Sandbox) closeLauncher() {}
