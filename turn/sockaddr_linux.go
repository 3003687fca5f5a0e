//go:build linux

package turn

import (
	"encoding/binary"
	"net/netip"
	"strconv"

	"golang.org/x/sys/unix"
)

// sockaddrSize holds either address family's sockaddr: sockaddr_in6 is the
// larger.
const sockaddrSize = unix.SizeofSockaddrInet6

// sockaddrBuf is where recvmmsg writes a datagram's source and sendmmsg
// reads its destination.
type sockaddrBuf [sockaddrSize]byte

// parseSockaddr decodes the source address the kernel wrote for a received
// datagram, b being the name cut at its reported length, as Go's
// ReadFromUDPAddrPort would: an AF_INET6 socket's IPv4 peers stay
// v4-mapped. A link-local peer's scope becomes a numeric zone, which Go's
// net package turns back into the same scope when pion writes to it. It
// reads nothing past b, and anything that is not a whole sockaddr_in or
// sockaddr_in6 is refused.
func parseSockaddr(b []byte) (netip.AddrPort, bool) {
	if len(b) < 2 {
		return netip.AddrPort{}, false
	}
	switch binary.NativeEndian.Uint16(b[0:2]) {
	case unix.AF_INET:
		if len(b) < unix.SizeofSockaddrInet4 {
			return netip.AddrPort{}, false
		}

		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:4])), true
	case unix.AF_INET6:
		if len(b) < unix.SizeofSockaddrInet6 {
			return netip.AddrPort{}, false
		}
		ip := netip.AddrFrom16([16]byte(b[8:24]))
		if scope := binary.NativeEndian.Uint32(b[24:28]); scope != 0 && ip.Is6() && !ip.Is4In6() {
			ip = ip.WithZone(strconv.FormatUint(uint64(scope), 10))
		}

		return netip.AddrPortFrom(ip, binary.BigEndian.Uint16(b[2:4])), true
	}

	return netip.AddrPort{}, false
}

// putSockaddr writes ap into b as the socket's family wants it and returns
// its length, or 0 (which the kernel refuses for that one datagram) for an
// address the socket cannot reach: an IPv6 peer from an AF_INET socket, or
// an invalid one.
func putSockaddr(b *sockaddrBuf, ap netip.AddrPort, v6 bool) uint32 {
	ip := ap.Addr()
	if !ip.IsValid() {
		return 0
	}
	*b = sockaddrBuf{}
	binary.BigEndian.PutUint16(b[2:4], ap.Port())
	if !v6 {
		ip = ip.Unmap()
		if !ip.Is4() {
			return 0
		}
		binary.NativeEndian.PutUint16(b[0:2], unix.AF_INET)
		a4 := ip.As4()
		copy(b[4:8], a4[:])

		return unix.SizeofSockaddrInet4
	}
	binary.NativeEndian.PutUint16(b[0:2], unix.AF_INET6)
	a16 := ip.As16()
	copy(b[8:24], a16[:])
	if z := ip.Zone(); z != "" {
		// Numeric as parseSockaddr makes them; a named zone (never read
		// from this socket) is refused rather than looked up per packet.
		scope, err := strconv.ParseUint(z, 10, 32)
		if err != nil {
			return 0
		}
		binary.NativeEndian.PutUint32(b[24:28], uint32(scope))
	}

	return unix.SizeofSockaddrInet6
}
