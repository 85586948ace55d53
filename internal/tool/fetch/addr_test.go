package fetch

import (
	"net/netip"
	"testing"
)

func TestPublic(t *testing.T) {
	for addr, want := range map[string]bool{
		"93.184.216.34": true, "1.1.1.1": true, "2606:4700:4700::1111": true,
		"127.0.0.1": false, "127.1.2.3": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false,
		"192.168.1.1": false, "169.254.169.254": false, "fe80::1": false, "fc00::1": false, "fd12::1": false,
		"0.0.0.0": false, "::": false, "100.64.0.1": false, "224.0.0.1": false, "ff02::1": false,
		"::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "::ffff:8.8.8.8": true, "64:ff9b::7f00:1": false,
		"198.18.0.1": false, "255.255.255.255": false, "192.0.2.1": false,
	} {
		if got, kind := public(netip.MustParseAddr(addr)); got != want {
			t.Errorf("public(%s) = %v (%s), want %v", addr, got, kind, want)
		}
	}
}

func TestControl(t *testing.T) {
	if err := control("tcp", "127.0.0.1:80", nil); err == nil {
		t.Error("loopback passed the dialer's check")
	}
	if err := control("tcp6", "[fe80::1%eth0]:80", nil); err == nil {
		t.Error("a zoned link-local address passed the dialer's check")
	}
	if err := control("tcp", "8.8.8.8:443", nil); err != nil {
		t.Errorf("a public address was refused: %v", err)
	}
}
