package fetch

import (
	"fmt"
	"net/netip"
	"syscall"
)

// nonPublic are the address ranges a fetch may not reach unless private addresses are allowed:
// besides what netip classifies (loopback, private, link-local, multicast, unspecified), the
// ranges IANA reserves for shared, benchmarking, documentation and future use, and NAT64's, whose
// addresses carry an IPv4 address of any kind.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("fec0::/10"),
}

// public reports whether ip is an address a fetch may reach without private addresses allowed,
// and if not, what kind of address it is.
func public(ip netip.Addr) (ok bool, kind string) {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return false, "an invalid address"
	case ip.IsLoopback():
		return false, "a loopback address"
	case ip.IsPrivate():
		return false, "a private address"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return false, "a link-local address"
	case ip.IsUnspecified():
		return false, "the unspecified address"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return false, "a multicast address"
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false, "a reserved address (" + p.String() + ")"
		}
	}
	return true, ""
}

// RefusedError is a fetch refused because it would reach an address that is not public.
type RefusedError struct {
	Addr string
	Kind string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s is %s; web_fetch reaches only public addresses", e.Addr, e.Kind)
}

// control is the dialer's check of the address it is about to connect to, after name resolution:
// it is what holds against a name that resolves to a private address, a DNS answer that changes
// between a check and the connection (rebinding), and a redirect to an internal host, because
// every connection, of every hop, passes through it.
func control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, err)
	}
	if ok, kind := public(ap.Addr()); !ok {
		return &RefusedError{Addr: ap.Addr().String(), Kind: kind}
	}
	return nil
}
