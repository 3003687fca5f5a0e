package server

import (
	"net"
	"net/netip"
)

func netipToIPNet(p netip.Prefix) *net.IPNet {
	p = p.Masked()
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

// networkOf is what a per-client limit counts by, as signaling's and turn's
// do: the address for IPv4, its /64 for IPv6, since one host usually owns a
// whole /64 and could otherwise rotate addresses to dodge the limit.
func networkOf(ip netip.Addr) netip.Addr {
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.Addr()
	}
	return ip
}
