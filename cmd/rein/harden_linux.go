package main

import "golang.org/x/sys/unix"

// harden makes rein's process non-dumpable (prctl PR_SET_DUMPABLE 0). The kernel then lets no
// process without CAP_SYS_PTRACE — so no tool rein runs as the same user — read rein's
// /proc/<pid>/environ, which keeps the environment rein started with, keys included, whatever rein
// unsets afterwards; nor its memory (/proc/<pid>/mem, ptrace), nor its open files
// (/proc/<pid>/fd). It also means no core dump. It does not reach rein's children: a process
// that executes a readable program is dumpable again, so the bash tool's supervisor and commands
// run as before. Root, or anything holding CAP_SYS_PTRACE, can still read it all. (It is why the
// sandbox maps a helper's user namespace only once the helper has executed: see sandbox.userMap.)
func harden() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
