//go:build !linux && !darwin

// rein builds for Linux and macOS only: its bash tool supervises process groups through what
// those kernels provide (a lifeline pipe, /proc or kern.proc, pidfd or kqueue). On Windows, run
// rein inside WSL (https://learn.microsoft.com/windows/wsl/), where it builds as on Linux.
package procs

// The name below is the build error this file exists to give, read as a sentence.
const _ = rein_builds_for_Linux_and_macOS__on_Windows_build_and_run_it_inside_WSL
