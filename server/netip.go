package server

import (
	"net"
	"net/netip"
)

// netipToIPNet is p as the net package spells it.
func netipToIPNet(p netip.Prefix) *net.IPNet {
	p = p.Masked()
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}
