package shell

import "syscall"

// defaultControl on macOS, which has no /proc and no memfd: an unlinked temporary file, held.
var defaultControl = heldControl

// sysProcAttr makes the supervisor lead a new session. macOS has no parent-death signal: the
// lifeline is the only line, and it does not depend on one.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

// fionread is the ioctl that tells how many bytes a pipe holds: FIONREAD, _IOR('f', 127, int)
// in <sys/filio.h>, which golang.org/x/sys/unix does not name for darwin.
const fionread = 0x4004667f

// directProcAttr makes a command's shell lead a new session. macOS has no parent-death signal:
// the lifeline's keeper is the line.
func directProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
