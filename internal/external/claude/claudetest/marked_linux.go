package claudetest

import (
	"bytes"
	"os"
	"strconv"
)

// Marked lists the live processes whose command line holds marker: a test gives a command a
// marker of its own, and finds it wherever it went, whatever its parent or group became.
func Marked(marker string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(marker)) {
			if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && !bytes.Contains(st, []byte(") Z ")) {
				out = append(out, pid)
			}
		}
	}
	return out
}
