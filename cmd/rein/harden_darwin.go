package main

import "golang.org/x/sys/unix"

// harden refuses debuggers (ptrace PT_DENY_ATTACH), macOS's nearest to Linux's non-dumpable
// process: no process of the same user can attach to rein to read its memory. macOS shows no
// process's environment to another (there is no /proc), so the keys rein started with are not
// readable that way.
func harden() error { return unix.PtraceDenyAttach() }
