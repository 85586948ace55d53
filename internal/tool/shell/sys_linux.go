package shell

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// defaultControl on Linux reaches a memfd through /proc: nothing of the command holds it.
var defaultControl = procControl

// procControl is Linux's: the control file is a memfd that only the supervisor holds, as fd 5,
// and the others open it as /proc/<supervisor>/fd/5. No process of the command holds it, so a
// command that redirects its own descriptors cannot divert the report.
var procControl = control{name: "proc", create: memfd, reach: `__rein_ctl=/proc/$$/fd/5`}

func memfd() (*os.File, error) {
	fd, err := unix.MemfdCreate("rein-bash-control", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "rein-bash-control"), nil
}

// sysProcAttr makes the supervisor lead a new session, and asks Linux to send it SIGUSR1 when
// the thread that started it exits: a second line of defence behind the lifeline.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGUSR1}
}

// fionread is the ioctl that tells how many bytes a pipe holds (FIONREAD, spelled TIOCINQ).
const fionread = unix.TIOCINQ

// directProcAttr makes a command's shell lead a new session, and asks Linux to SIGKILL it when
// the thread that started it exits: a second line of defence behind the lifeline's keeper.
func directProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
