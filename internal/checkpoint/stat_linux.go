package checkpoint

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func statTimes(st *syscall.Stat_t) (mtime, ctime syscall.Timespec) { return st.Mtim, st.Ctim }

func keyOf(st *unix.Stat_t) statKey {
	return statKey{dev: st.Dev, ino: st.Ino, mode: st.Mode, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

// localClock reports whether the filesystem holding dir dates its files by this machine's clock,
// as the local filesystems named here do; a network filesystem's server has a clock of its own,
// and a watch's racy window (see watch) cannot be judged against it.
func localClock(dir string) bool {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return false
	}
	switch uint32(fs.Type) {
	case 0xEF53, // ext2, ext3, ext4
		0x01021994, // tmpfs
		0x858458F6, // ramfs
		0x9123683E, // btrfs
		0x58465342, // xfs
		0x794C7630, // overlayfs
		0x2FC12FC1, // zfs
		0xF2F52010, // f2fs
		0xCA451A4E: // bcachefs
		return true
	}
	return false
}
