package checkpoint

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func statTimes(st *syscall.Stat_t) (mtime, ctime syscall.Timespec) {
	return st.Mtimespec, st.Ctimespec
}

func keyOf(st *unix.Stat_t) statKey {
	return statKey{dev: uint64(uint32(st.Dev)), ino: st.Ino, mode: uint32(st.Mode), size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

// localClock reports whether the filesystem holding dir dates its files by this machine's clock,
// as the local filesystems named here do; a network filesystem's server has a clock of its own,
// and a watch's racy window (see watch) cannot be judged against it.
func localClock(dir string) bool {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return false
	}
	var name []byte
	for _, c := range fs.Fstypename {
		if c == 0 {
			break
		}
		name = append(name, byte(c))
	}
	switch string(name) {
	case "apfs", "hfs":
		return true
	}
	return false
}
