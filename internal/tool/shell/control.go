package shell

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// control is how the processes of a call reach its control file, where the command's shell leaves
// its final working directory and, under a supervisor, the waiter the command's exit status (see
// supervisor; a command started directly holds it as fd 57 whatever the control, and its exit
// status comes from its shell's exit: see directScript). Each
// platform has a default (defaultControl, in sys_<os>.go); heldControl works on any Unix, and
// Linux's tests run it too.
type control struct {
	name string // what the tests call it
	// create makes the control file, open for reading and appending, with no name left on any
	// filesystem when it returns, so that nothing is left behind however rein ends. (A temporary
	// file has its name for the instant between its creation and its unlinking.)
	create func() (*os.File, error)
	// reach is the supervisor's first line: it sets __rein_ctl to a path that opens the control
	// file in the waiter and in the command's shell.
	reach string
}

// heldControl needs no /proc (macOS has none): the control file is an unlinked temporary file
// that the supervisor moves to fd 57, which the waiter and the command's shell inherit and open
// as /dev/fd/57, their own descriptor. The processes the command starts inherit it too. A command
// that itself redirects or closes fd 57 may divert or lose the report of its working directory
// (the next call then starts where this one did; bash 3.2 keeps the report through a
// redirection, bash 5 does not); the exit status, written by the waiter, which
// runs nothing of the command, is not at risk. 57 is far from the descriptors scripts name (3 to
// 9) and from those bash allocates (the lowest free from 10).
var heldControl = control{name: "held", create: tempControl, reach: `exec 57>&5 5>&-; __rein_ctl=/dev/fd/57`}

// tempControl creates a temporary file and unlinks it at once, keeping it open to append, so
// that whichever process writes, it writes at the end.
func tempControl() (*os.File, error) {
	f, err := os.CreateTemp("", "rein-bash-control-*")
	if err != nil {
		return nil, err
	}
	err = os.Remove(f.Name())
	if err == nil {
		err = setAppend(f)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("prepare %s: %w", f.Name(), err)
	}
	return f, nil
}

func setAppend(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	err = rc.Control(func(fd uintptr) {
		var fl int
		if fl, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0); ferr == nil {
			_, ferr = unix.FcntlInt(fd, unix.F_SETFL, fl|unix.O_APPEND)
		}
	})
	return errors.Join(err, ferr)
}
