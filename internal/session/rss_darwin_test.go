package session

import "syscall"

// maxRSS is the peak resident set in bytes (macOS reports bytes).
func maxRSS(ru syscall.Rusage) int64 { return ru.Maxrss }
