//go:build linux

package turn

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// FuzzSockaddr feeds parseSockaddr any bytes as the kernel's source address
// of a datagram: it must never read past them, must refuse what is not a
// whole sockaddr_in or sockaddr_in6, and what it accepts must be written
// back by putSockaddr as the same address, for the socket family it came
// from.
func FuzzSockaddr(f *testing.F) {
	v4 := make([]byte, unix.SizeofSockaddrInet4)
	binary.NativeEndian.PutUint16(v4, unix.AF_INET)
	binary.BigEndian.PutUint16(v4[2:], 3478)
	copy(v4[4:], []byte{127, 0, 0, 1})
	v6 := make([]byte, unix.SizeofSockaddrInet6)
	binary.NativeEndian.PutUint16(v6, unix.AF_INET6)
	binary.BigEndian.PutUint16(v6[2:], 5000)
	copy(v6[8:], netip.MustParseAddr("::ffff:10.0.0.1").AsSlice())
	ll := bytes.Clone(v6)
	copy(ll[8:], netip.MustParseAddr("fe80::1").AsSlice())
	binary.NativeEndian.PutUint32(ll[24:], 3)
	for _, seed := range [][]byte{v4, v6, ll, v4[:7], v6[:27], {}, {0x02}, {0xFF, 0xFF, 0, 0}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		b = b[:len(b):len(b)] // anything past len is not the kernel's
		ap, ok := parseSockaddr(b)
		if !ok {
			if ap.IsValid() {
				t.Fatal("refused, yet an address")
			}

			return
		}
		family := binary.NativeEndian.Uint16(b)
		want := unix.SizeofSockaddrInet4
		if family == unix.AF_INET6 {
			want = unix.SizeofSockaddrInet6
		}
		if len(b) < want || !ap.IsValid() {
			t.Fatalf("accepted %d bytes of family %d as %v", len(b), family, ap)
		}
		if family == unix.AF_INET && !ap.Addr().Is4() {
			t.Fatalf("AF_INET decoded as %v", ap)
		}
		var out sockaddrBuf
		n := putSockaddr(&out, ap, family == unix.AF_INET6)
		if int(n) != want {
			t.Fatalf("%v written back in %d bytes, want %d", ap, n, want)
		}
		back, ok := parseSockaddr(out[:n])
		if !ok || back != ap {
			t.Fatalf("%v written back reads as %v", ap, back)
		}
		if !bytes.Equal(out[2:4], b[2:4]) || !bytes.Equal(out[4:8], b[4:8]) && family == unix.AF_INET {
			t.Fatalf("%v: port or address bytes changed", ap)
		}
	})
}

// putSockaddr refuses what the socket cannot send to, so sendmmsg fails
// that one datagram instead of sending it somewhere else.
func TestPutSockaddrRefuses(t *testing.T) {
	var b sockaddrBuf
	for _, c := range []struct {
		ap netip.AddrPort
		v6 bool
	}{
		{netip.AddrPort{}, true},
		{netip.AddrPort{}, false},
		{netip.MustParseAddrPort("[::1]:80"), false},
		{netip.MustParseAddrPort("[fe80::1%eth0]:80"), true}, // named zones are never read from the socket
	} {
		if n := putSockaddr(&b, c.ap, c.v6); n != 0 {
			t.Errorf("putSockaddr(%v, v6=%v) = %d, want 0", c.ap, c.v6, n)
		}
	}
	if n := putSockaddr(&b, netip.MustParseAddrPort("[::ffff:127.0.0.1]:80"), false); n != unix.SizeofSockaddrInet4 {
		t.Errorf("a v4-mapped address on an AF_INET socket: %d bytes", n)
	}
}

// A dual-stack listener (AF_INET6, as "0.0.0.0" or ":0" gives) sees IPv4
// clients v4-mapped, and forwards to them through the same socket.
func TestListenerDualStack(t *testing.T) {
	for _, batch := range []int{1, DefaultUDPBatch} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			r := newListenerRig(t, batch)
			ln, err := net.ListenUDP("udp", &net.UDPAddr{Port: 0})
			if err != nil {
				t.Skip("no dual-stack socket here:", err)
			}
			t.Cleanup(func() { _ = ln.Close() })
			r.ln = ln
			r.tc = newUDPListener(ln, r.allocs, nil, r.allocs.stats.newListener(), batch, true)
			if m, ok := r.tc.io.(*mmsgIO); ok && !m.v6 {
				t.Skip("the wildcard socket is not AF_INET6 here")
			}
			port := ln.LocalAddr().(*net.UDPAddr).Port                               //nolint:forcetypeassert // a UDP socket
			to := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)) //nolint:gosec // a port
			// Three of equal size: with GSO they go out as one message to
			// the v4-mapped client.
			sent := []string{"v4 client 1", "v4 client 2", "v4 client 3"}
			for _, p := range [][]byte{channelData(0x4000, sent[0]), channelData(0x4000, sent[1]), channelData(0x4000, sent[2]), stunLike(6)} {
				if _, err := r.ca.WriteToUDPAddrPort(p, to); err != nil {
					t.Fatal(err)
				}
			}
			_ = ln.SetReadDeadline(time.Now().Add(arrives))
			n, from, err := r.tc.ReadFrom(r.buf)
			if err != nil || !bytes.Equal(r.buf[:n], stunLike(6)) {
				t.Fatalf("ReadFrom = %x, %v", r.buf[:n], err)
			}
			if ua := from.(*net.UDPAddr); ua.AddrPort() != netip.AddrPortFrom(netip.AddrFrom16(r.a.client.Addr().As16()), r.a.client.Port()) { //nolint:forcetypeassert // ours
				t.Fatalf("source %v, want a's client v4-mapped as Go reads it", ua)
			}
			got := recvAll(t, r.cb, len(sent), arrives)
			for i, p := range sent {
				if !bytes.Equal(got[i], channelData(0x4001, p)) {
					t.Fatalf("b's client got %q, want %q", got[i], p)
				}
			}
			if m, ok := r.tc.io.(*mmsgIO); ok && m.gso && r.tc.calls.segmented.Load() != uint64(len(sent)) {
				t.Fatalf("%d datagrams sent segmented, want all %d", r.tc.calls.segmented.Load(), len(sent))
			}
		})
	}
}
