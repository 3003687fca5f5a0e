// Package netkey names the client network a per-client limit counts by, so
// the lobby, the HTTP listener and TURN count one client alike.
package netkey

import "net/netip"

// Of is the network a per-client limit counts ip by: the address itself for
// IPv4 (an IPv4-mapped IPv6 address counts as its IPv4 address), and its
// /64 for IPv6, since one host usually owns a whole /64 and could otherwise
// rotate addresses to dodge the limit.
func Of(ip netip.Addr) netip.Addr {
	return Prefix(ip).Addr()
}

// Prefix is Of as a prefix: /32 for IPv4, /64 for IPv6. The zero Addr gives
// the zero Prefix.
func Prefix(ip netip.Addr) netip.Prefix {
	ip = ip.Unmap()
	if ip.Is4() {
		return netip.PrefixFrom(ip, 32)
	}
	p, _ := ip.Prefix(64)
	return p
}
