package session

import "syscall"

// maxRSS is the peak resident set in bytes (Linux reports kilobytes).
func maxRSS(ru syscall.Rusage) int64 { return ru.Maxrss << 10 }
