package host

// fionread is the ioctl that tells how many received bytes a socket holds unread: FIONREAD,
// _IOR('f', 127, int) in XNU's sys/filio.h (golang.org/x/sys does not name it for darwin).
const fionread = 0x4004667f
