package host

import "golang.org/x/sys/unix"

// fionread is the ioctl that tells how many received bytes a socket holds unread (FIONREAD,
// spelled TIOCINQ on Linux).
const fionread = unix.TIOCINQ
