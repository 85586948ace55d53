package shell

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/sandbox"
)

// TestMain lets the test binary be the sandbox helper (as rein is: sandbox.Main comes first) and
// a network probe that confined commands start as a child process (REIN_SHELL_NETPROBE).
func TestMain(m *testing.M) {
	sandbox.Main()
	if op := os.Getenv("REIN_SHELL_NETPROBE"); op != "" {
		os.Exit(netProbe(op))
	}
	os.Exit(m.Run())
}

// netProbe does what op says — "dial tcp ADDR", "send udp ADDR" or "listen tcp ADDR" — and prints
// "ok" or the error, exiting 0 or 1: a program that is not bash, reaching the network.
func netProbe(op string) int {
	f := strings.Fields(op)
	if len(f) != 3 {
		fmt.Println("bad probe", op)
		return 2
	}
	var err error
	switch f[0] {
	case "dial", "send":
		var c net.Conn
		if c, err = net.DialTimeout(f[1], f[2], 2*time.Second); err == nil {
			_, err = c.Write([]byte("probe\n"))
			c.Close()
		}
	case "listen":
		var l net.Listener
		if l, err = net.Listen(f[1], f[2]); err == nil {
			l.Close()
		}
	}
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("ok")
	return 0
}
