package main

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/reinhq/rein/internal/host"
	"github.com/spf13/cobra"
)

// The chat's in-process host is rein serve's, within serve's limits: its HTTP server has the
// deadlines and header cap of host.DefaultLimits, its connections pass a Gate, and it answers a
// request with its token.
func TestChatHostHasServesLimits(t *testing.T) {
	t.Setenv("REIN_HOME", t.TempDir())
	ws := t.TempDir()
	f := runFlags{providerFlags: providerFlags{provider: "sim", simDelay: time.Millisecond}, cwd: ws, permission: "workspace",
		maxTokens: 8192, maxTurns: 200}
	x, err := chatHost(&cobra.Command{}, f, backendFlags{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.close()
	nofile, err := fileLimit()
	if err != nil {
		t.Fatal(err)
	}
	want := host.DefaultLimits(nofile)
	if s := x.srv; s.ReadHeaderTimeout != want.HeaderTimeout || s.ReadTimeout != want.ReadTimeout || s.WriteTimeout != want.WriteTimeout ||
		s.IdleTimeout != want.IdleTimeout || s.MaxHeaderBytes == 0 {
		t.Errorf("the chat's server: header %v, read %v, write %v, idle %v, header bytes %d; want serve's %+v",
			s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout, s.IdleTimeout, s.MaxHeaderBytes, want)
	}
	// A connection that has not shown the token is held by the gate, as serve's are.
	c, err := net.Dial("tcp", x.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for deadline := time.Now().Add(5 * time.Second); x.gate.Stats().Unauthenticated == 0; time.Sleep(time.Millisecond) { // polling the gate's counters
		if time.Now().After(deadline) {
			t.Fatalf("the gate never saw the connection: %+v", x.gate.Stats())
		}
	}
	req, _ := http.NewRequest("GET", "http://"+x.addr+"/api/conversations", nil)
	req.Header.Set("Authorization", "Bearer "+x.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("an authorised request: %d", resp.StatusCode)
	}
}
