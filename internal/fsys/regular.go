package fsys

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// IrregularError refuses a path that names something other than a regular file where rein reads
// one: a named pipe, a device, a socket, a directory.
type IrregularError struct {
	Path string
	Mode fs.FileMode
}

func (e *IrregularError) Error() string {
	return fmt.Sprintf("%s is %s, not a file: rein does not read it (remove or rename it)", e.Path, KindOf(e.Mode))
}

// KindOf names what a file mode says a file is, for a refusal.
func KindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// ReadRegular reads up to limit bytes of the file at path, and says how long the file is: a file
// in a workspace rein reads of its own accord (its instructions, its project configuration), which
// a cloned repository may have made a named pipe (a plain open waits on it for ever), a link to
// /dev/zero (a read never ends) or gigabytes long. It opens without waiting and reads only what
// the opened file's own mode says is a regular file (*IrregularError otherwise). An error opening
// it is returned as it is, so a missing file matches fs.ErrNotExist.
func ReadRegular(path string, limit int64) (data []byte, size int64, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, &IrregularError{Path: path, Mode: fi.Mode()}
	}
	data, err = io.ReadAll(io.LimitReader(f, limit))
	return data, max(fi.Size(), int64(len(data))), err
}
